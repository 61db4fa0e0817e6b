import { type Config, type FunctionSetting, loadFunctionConfig } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, lambdaHandler } from '@yumina/http';
import { partnersFromConfig } from '@yumina/identity';
import type { FastifyServerOptions } from 'fastify';
import { type PartnerConfigPluginOptions, partnerConfigPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => PartnerConfigPluginOptions | Promise<PartnerConfigPluginOptions>, server?: FastifyServerOptions) {
  return lambdaHandler(partnerConfigPlugin, loadOptions, server);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['PARTNERS'] as const satisfies readonly FunctionSetting[];

/** The deployed options: the partners of PARTNERS (never the demo partner). */
export function deployedOptions(config: Config): PartnerConfigPluginOptions {
  return { partners: partnersFromConfig(config) };
}

/** The deployed entry (FUNCTION_ROUTES' handler). */
export const handler = createHandler(() => deployedOptions(loadFunctionConfig('partner-config', SETTINGS)), DEPLOYED_FUNCTION_SERVER);
