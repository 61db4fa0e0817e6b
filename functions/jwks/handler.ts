import { lambdaHandler } from '@yumina/http';
import { type JwksPluginOptions, jwksPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => JwksPluginOptions | Promise<JwksPluginOptions>) {
  return lambdaHandler(jwksPlugin, loadOptions);
}
