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
export async function functionApp<O extends Record<string, unknown>>(
  plugin: FastifyPluginAsync<O>,
  options: O,
  server: FastifyServerOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: 'info' }, ...server });
  installErrorHandling(app);
  await app.register(plugin, options);
  return app;
}

/** The Lambda entry of a function: the same plugin, behind @fastify/aws-lambda. */
export function lambdaHandler<O extends Record<string, unknown>>(plugin: FastifyPluginAsync<O>, options: () => O | Promise<O>) {
  let proxy: ReturnType<typeof awsLambdaFastify> | undefined;
  return async (event: unknown, context: unknown) => {
    if (!proxy) {
      const app = await functionApp(plugin, await options());
      proxy = awsLambdaFastify(app);
      await app.ready();
    }
    return (proxy as (e: unknown, c: unknown) => Promise<unknown>)(event, context);
  };
}
