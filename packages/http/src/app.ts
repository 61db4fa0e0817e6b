import { randomUUID } from 'node:crypto';
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
import { installInputGuards } from './input-guards.ts';
import { eventProofCheck, type ProvableEvent, type ProxyTrust, trustProxyOption } from './proxy-trust.ts';

/**
 * The shared error handler: every failure answers `{"error":{"code","message"}}`; 5xx details
 * are logged, never sent: the client gets the code, a human message and the request id
 * (`error.requestId` and the `x-request-id` header) that finds the details in the log.
 */
export function installErrorHandling(
  app: FastifyInstance,
  options: {
    notFound?: (request: FastifyRequest, reply: FastifyReply) => unknown;
    /** Called with every 5xx error (telemetry's captured errors). Must not throw. */
    onServerError?: (err: unknown, request: FastifyRequest) => void;
    /**
     * Error codes that are refusals of an overloaded server (503 with Retry-After), not failures:
     * answered without a log line or onServerError, so shedding a burst writes nothing per
     * request (the request metrics still count them).
     */
    refusals?: ReadonlySet<string>;
  } = {},
): void {
  app.setErrorHandler((err, request, reply) => {
    const answer = toAnswer(err);
    if (answer.status >= 500 && options.refusals?.has((err as { code?: string }).code ?? '')) {
      // An expected refusal: nothing logged.
    } else if (answer.status >= 500) {
      request.log.error({ err, type: 'error' }, 'request failed');
      options.onServerError?.(err, request);
    }
    else request.log.info({ code: (err as { code?: string }).code, status: answer.status }, 'request refused');
    reply.header('x-request-id', request.id);
    const body =
      answer.status >= 500 && (answer.body as { error?: object }).error
        ? { error: { ...(answer.body as { error: object }).error, requestId: request.id } }
        : answer.body;
    reply.code(answer.status).headers(answer.headers).send(body);
  });
  if (options.notFound) {
    app.setNotFoundHandler(options.notFound);
    return;
  }
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${request.url.split('?')[0]}` } });
  });
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a URL that is not valid
 * percent-encoding, a bad content type header) answer with the shared error shape too.
 */
export function frameworkErrors(err: Error & { code?: string; statusCode?: number }, request: FastifyRequest, reply: FastifyReply): void {
  const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
  const code = err.code === 'FST_ERR_BAD_URL' ? 'INVALID_URL' : 'BAD_REQUEST';
  request.log.info({ code: err.code, status }, 'request refused before routing');
  reply.code(status).header('x-request-id', request.id).send({ error: { code, message: code === 'INVALID_URL' ? 'The request URL is not valid.' : 'The request is not valid.' } });
}

/** Parses a request part with zod; a mismatch is a 400 naming the first problem's path. */
export function parseWith<S extends ZodType>(schema: S, value: unknown, what = 'request body'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.length ? `${issue.path.join('.')}: ` : '';
  throw new HttpError(400, 'INVALID_REQUEST', `Invalid ${what}: ${path}${issue.message}`);
}

/**
 * A function's routes validate with zod (parseWith), never with JSON schemas: in place of
 * Fastify's JSON-schema compilers (ajv, fast-json-stringify), which Fastify then never loads and
 * the function bundles leave out (scripts/build.ts), a route that declares a schema is refused
 * when the app gets ready.
 */
const ZOD_ONLY = (): never => {
  throw new Error('function routes validate with zod (parseWith), not JSON schemas: functionApp has no schema compiler');
};
const zodOnlySchemas = { compilersFactory: { buildValidator: () => ZOD_ONLY, buildSerializer: () => ZOD_ONLY } };

/** A Fastify app holding one function's plugin, with the shared error handling (not yet ready). */
export async function functionApp<O extends object>(
  plugin: FastifyPluginAsync<O>,
  options: O,
  server: FastifyServerOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: 'info' }, genReqId: () => randomUUID(), frameworkErrors, schemaController: zodOnlySchemas, ...server });
  installErrorHandling(app);
  installInputGuards(app);
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

/** What a function answers a request that did not come through the Router (its Function URL is public). */
const NOT_THROUGH_ROUTER: LambdaResponse = {
  statusCode: 403,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify({ error: { code: 'FORBIDDEN', message: "This address answers only requests made through the platform's own address." } }),
};

/**
 * `proxy` (a deployed function: its TRUST_PROXY and TRUST_PROXY_SECRET, ./proxy-trust.ts) makes
 * the function trust the hops in front as the container does, and, with a secret, answer only
 * events that carry the Router's proof: any other is refused with 403 before the app sees it. The
 * proof header never reaches the app.
 */
export function lambdaHandler<O extends object>(
  plugin: FastifyPluginAsync<O>,
  options: () => O | Promise<O>,
  server: FastifyServerOptions = { logger: false },
  proxy?: () => ProxyTrust,
) {
  type Proxy = (event: unknown, context: unknown) => Promise<LambdaResponse>;
  type Built = { lambda: Proxy; checkProof: ReturnType<typeof eventProofCheck> | null };
  let built: Promise<Built> | null = null;
  const build = async (): Promise<Built> => {
    const trust = proxy?.();
    const app = await functionApp(plugin, await options(), trust ? { ...server, trustProxy: trustProxyOption(trust.trust) } : server);
    const lambda = awsLambdaFastify(app) as unknown as Proxy; // decorates the app, so before ready()
    await app.ready();
    return { lambda, checkProof: trust?.secret ? eventProofCheck(trust.secret) : null };
  };
  return async (event: unknown, context: unknown): Promise<LambdaResponse> => {
    built ??= build().catch((error: unknown) => {
      built = null;
      throw error;
    });
    const { lambda, checkProof } = await built;
    if (!checkProof) return lambda(event, context);
    const checked = checkProof(event as ProvableEvent);
    if (!checked.proven) return { ...NOT_THROUGH_ROUTER, headers: { ...NOT_THROUGH_ROUTER.headers } };
    return lambda(checked.event, context);
  };
}
