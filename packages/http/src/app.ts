import awsLambdaFastify from '@fastify/aws-lambda';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { ZodType, z } from 'zod';
import { HttpError, toAnswer } from './errors.ts';

/**
 * The shared error handler: every failure answers `{"error":{"code","message"}}`; 5xx details
 * are logged, never sent.
 */
export function installErrorHandling(
  app: FastifyInstance,
  options: {
    notFound?: (request: FastifyRequest, reply: FastifyReply) => unknown;
    /** Called with every 5xx error (telemetry's captured errors). Must not throw. */
    onServerError?: (err: unknown, request: FastifyRequest) => void;
  } = {},
): void {
  app.setErrorHandler((err, request, reply) => {
    const answer = toAnswer(err);
    if (answer.status >= 500) {
      request.log.error({ err, type: 'error' }, 'request failed');
      options.onServerError?.(err, request);
    }
    else request.log.info({ code: (err as { code?: string }).code, status: answer.status }, 'request refused');
    reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
  if (options.notFound) {
    app.setNotFoundHandler(options.notFound);
    return;
  }
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${request.url.split('?')[0]}` } });
  });
}

/** Parses a request part with zod; a mismatch is a 400 naming the first problem's path. */
export function parseWith<S extends ZodType>(schema: S, value: unknown, what = 'request body'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.length ? `${issue.path.join('.')}: ` : '';
  throw new HttpError(400, 'INVALID_REQUEST', `Invalid ${what}: ${path}${issue.message}`);
}

/** A Fastify app holding one function's plugin, with the shared error handling (not yet ready). */
export async function functionApp<O extends object>(
  plugin: FastifyPluginAsync<O>,
  options: O,
  server: FastifyServerOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: 'info' }, ...server });
  installErrorHandling(app);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- plugin options are the plugin's own interface
  await app.register(plugin as FastifyPluginAsync<any>, options);
  return app;
}

/**
 * The Lambda entry of a function: the same plugin behind @fastify/aws-lambda. `options` is
 * loaded once per cold start; a failure there is retried on the next event. No route logic here.
 */
export interface LambdaResponse {
  statusCode: number;
  body: string;
  headers?: Record<string, string | number | boolean>;
  cookies?: string[];
  isBase64Encoded?: boolean;
}

export function lambdaHandler<O extends object>(plugin: FastifyPluginAsync<O>, options: () => O | Promise<O>) {
  type Proxy = (event: unknown, context: unknown) => Promise<LambdaResponse>;
  let proxy: Promise<Proxy> | null = null;
  const build = async (): Promise<Proxy> => {
    const app = await functionApp(plugin, await options(), { logger: false });
    const lambda = awsLambdaFastify(app) as unknown as Proxy; // decorates the app, so before ready()
    await app.ready();
    return lambda;
  };
  return async (event: unknown, context: unknown): Promise<LambdaResponse> => {
    proxy ??= build().catch((error: unknown) => {
      proxy = null;
      throw error;
    });
    return (await proxy)(event, context);
  };
}
