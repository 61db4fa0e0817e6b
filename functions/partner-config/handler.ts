import { lambdaHandler } from '@yumina/http';
import { type PartnerConfigPluginOptions, partnerConfigPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => PartnerConfigPluginOptions | Promise<PartnerConfigPluginOptions>) {
  return lambdaHandler(partnerConfigPlugin, loadOptions);
}
