import type { FunctionSetting } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, functionConfig, lambdaHandler, type ProxyTrust, proxyTrustOf } from '@yumina/http';
import type { FastifyServerOptions } from 'fastify';
import plugin from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda (it takes no options); the deployment supplies the Router's proof. */
export function createHandler(server?: FastifyServerOptions, proxy?: () => ProxyTrust) {
  return lambdaHandler(plugin, () => ({}), server, proxy);
}

/** The validator needs no database, store or key: only the Router's proof, like every function. */
export const SETTINGS = ['TRUST_PROXY_SECRET'] as const satisfies readonly FunctionSetting[];

const config = functionConfig('world-validate', SETTINGS);
/** The deployed entry (FUNCTION_ROUTES' handler): only requests through the Router are answered. */
export const handler = createHandler(DEPLOYED_FUNCTION_SERVER, () => proxyTrustOf(config()));
