import { lambdaHandler } from '@yumina/http';
import { type PartnerConfigPluginOptions, partnerConfigPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => PartnerConfigPluginOptions | Promise<PartnerConfigPluginOptions>) {
  return lambdaHandler(partnerConfigPlugin, loadOptions);
}

/** The deployed entry: partners from PARTNERS. */
export const handler = createHandler(async () => {
  const { loadConfig } = await import('@yumina/config');
  const { partnersFromConfig } = await import('@yumina/identity');
  return { partners: partnersFromConfig(loadConfig()) };
});
