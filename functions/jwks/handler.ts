import { type Config, type FunctionSetting, loadFunctionConfig } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, lambdaHandler } from '@yumina/http';
import { signingKeysFromConfig } from '@yumina/identity';
import type { FastifyServerOptions } from 'fastify';
import { type JwksPluginOptions, jwksPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => JwksPluginOptions | Promise<JwksPluginOptions>, server?: FastifyServerOptions) {
  return lambdaHandler(jwksPlugin, loadOptions, server);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['IDENTITY_SIGNING_KEY'] as const satisfies readonly FunctionSetting[];

/** The deployed options: keys from IDENTITY_SIGNING_KEY (+ _NEXT, _PREVIOUS), linked as SST secrets; never generated. */
export async function deployedOptions(config: Config): Promise<JwksPluginOptions> {
  return { keys: await signingKeysFromConfig(config, { allowGenerated: false }) };
}

/** The deployed entry (FUNCTION_ROUTES' handler). */
export const handler = createHandler(() => deployedOptions(loadFunctionConfig('jwks', SETTINGS)), DEPLOYED_FUNCTION_SERVER);
