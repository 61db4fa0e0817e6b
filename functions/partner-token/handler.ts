import { lambdaHandler } from '@yumina/http';
import { type PartnerTokenPluginOptions, partnerTokenPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => PartnerTokenPluginOptions | Promise<PartnerTokenPluginOptions>) {
  return lambdaHandler(partnerTokenPlugin, loadOptions);
}
