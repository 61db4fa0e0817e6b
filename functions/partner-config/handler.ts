import type { Config, FunctionSetting } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, functionConfig, lambdaHandler, type ProxyTrust, proxyTrustOf } from '@yumina/http';
import { partnersFromConfig } from '@yumina/identity';
import type { FastifyServerOptions } from 'fastify';
import { type PartnerConfigPluginOptions, partnerConfigPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options (and the Router's proof) once per cold start. */
export function createHandler(loadOptions: () => PartnerConfigPluginOptions | Promise<PartnerConfigPluginOptions>, server?: FastifyServerOptions, proxy?: () => ProxyTrust) {
  return lambdaHandler(partnerConfigPlugin, loadOptions, server, proxy);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['PARTNERS', 'TRUST_PROXY_SECRET'] as const satisfies readonly FunctionSetting[];

/** The deployed options: the partners of PARTNERS (never the demo partner). */
export function deployedOptions(config: Config): PartnerConfigPluginOptions {
  return { partners: partnersFromConfig(config) };
}

const config = functionConfig('partner-config', SETTINGS);
/** The deployed entry (FUNCTION_ROUTES' handler): only requests through the Router are answered. */
export const handler = createHandler(() => deployedOptions(config()), DEPLOYED_FUNCTION_SERVER, () => proxyTrustOf(config()));
