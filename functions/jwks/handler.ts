import { lambdaHandler } from '@yumina/http';
import { type JwksPluginOptions, jwksPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => JwksPluginOptions | Promise<JwksPluginOptions>) {
  return lambdaHandler(jwksPlugin, loadOptions);
}

/** The deployed entry: keys from IDENTITY_SIGNING_KEY (+ _NEXT, _PREVIOUS), linked as SST secrets. */
export const handler = createHandler(async () => {
  const { loadConfig } = await import('@yumina/config');
  const { signingKeysFromConfig } = await import('@yumina/identity');
  return { keys: await signingKeysFromConfig(loadConfig(), { allowGenerated: false }) };
});
