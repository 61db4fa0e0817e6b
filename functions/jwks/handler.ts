import awsLambdaFastify, { type PromiseHandler } from '@fastify/aws-lambda';
import Fastify from 'fastify';
import { type JwksPluginOptions, jwksPlugin } from './plugin.ts';

type Proxy = PromiseHandler<unknown>;

/**
 * The Lambda entry: the plugin on a Fastify app, wrapped by @fastify/aws-lambda. No route logic
 * here. `loadOptions` is called once per cold start (a failure is retried on the next event).
 */
export function createHandler(loadOptions: () => JwksPluginOptions | Promise<JwksPluginOptions>) {
  let proxy: Promise<Proxy> | null = null;
  const build = async (): Promise<Proxy> => {
    const app = Fastify({ logger: false });
    await app.register(jwksPlugin, await loadOptions());
    const lambda = awsLambdaFastify<unknown>(app); // decorates the app, so before ready()
    await app.ready();
    return lambda;
  };
  return async (event: unknown, context: Parameters<Proxy>[1]) => {
    proxy ??= build().catch((error) => {
      proxy = null;
      throw error;
    });
    return (await proxy)(event, context);
  };
}
