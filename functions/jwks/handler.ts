import type { Config, FunctionSetting } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, functionConfig, lambdaHandler, type ProxyTrust, proxyTrustOf } from '@yumina/http';
import { signingKeysFromConfig } from '@yumina/identity';
import type { FastifyServerOptions } from 'fastify';
import { type JwksPluginOptions, jwksPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options (and the Router's proof) once per cold start. */
export function createHandler(loadOptions: () => JwksPluginOptions | Promise<JwksPluginOptions>, server?: FastifyServerOptions, proxy?: () => ProxyTrust) {
  return lambdaHandler(jwksPlugin, loadOptions, server, proxy);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['IDENTITY_SIGNING_KEY', 'TRUST_PROXY_SECRET'] as const satisfies readonly FunctionSetting[];

/** The deployed options: keys from IDENTITY_SIGNING_KEY (+ _NEXT, _PREVIOUS), linked as SST secrets; never generated. */
export async function deployedOptions(config: Config): Promise<JwksPluginOptions> {
  return { keys: await signingKeysFromConfig(config, { allowGenerated: false }) };
}

const config = functionConfig('jwks', SETTINGS);
/** The deployed entry (FUNCTION_ROUTES' handler): only requests through the Router are answered. */
export const handler = createHandler(() => deployedOptions(config()), DEPLOYED_FUNCTION_SERVER, () => proxyTrustOf(config()));
