import { withHealthProbeDeadline } from '@yumina/db';
import { createProbe, liveness, type Probe, readiness } from '@yumina/health';
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROMETHEUS_CONTENT_TYPE } from '@yumina/telemetry';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.ts';

/**
 * GET /health (readiness, the deployment check) and GET /health/live (liveness, diagnostic only).
 *
 * Readiness rules: 503 when the primary database is not up (down or still answering after 5 s);
 * 200 "degraded" when only the read database or the shared store is failing — the app keeps
 * serving (public browsing on the primary, the store's in-memory fallback); 200 "ok" otherwise.
 * One shared, single-flight probe per dependency, cached for 1 s.
 */
export function healthProbes(ctx: AppContext): Probe[] {
  const probes = [createProbe('primary', () => withHealthProbeDeadline(async () => void (await ctx.db.primary.query('select 1'))))];
  if (ctx.db.read !== ctx.db.primary) {
    probes.push(createProbe('read', () => withHealthProbeDeadline(async () => void (await ctx.db.read.query('select 1')))));
  }
  probes.push(createProbe('store', () => ctx.store.ping()));
  return probes;
}

export async function healthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const probes = healthProbes(ctx);
  const replica = { ...ctx.identity };
  const started = ctx.startedAt;
  const uptimeSeconds = () => (Date.now() - started) / 1000;

  /** The metrics bearer token, when set and given, shows probe error text; anonymous callers see states only. */
  const operator = (authorization: string | undefined) => {
    const token = ctx.config.telemetry.metricsToken;
    if (!token) return false;
    const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? '');
    const expected = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  app.get('/health', async (request, reply) => {
    const answer = await readiness(probes, { required: ['primary'], replica, version: ctx.config.version, uptimeSeconds });
    const failing = Object.entries(answer.body.dependencies).filter(([, d]) => d.error !== undefined);
    if (failing.length) request.log.warn({ dependencies: Object.fromEntries(failing.map(([name, d]) => [name, d.error])) }, 'health: dependency failing');
    if (!operator(request.headers.authorization)) {
      // raw error text (PostgreSQL, Redis, addresses) stays in the log
      for (const d of Object.values(answer.body.dependencies)) delete d.error;
    }
    return reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  });

  /** Prometheus text of this replica's figures: 404 unless METRICS_TOKEN is set, then only with that bearer token. */
  app.get('/metrics', async (request, reply) => {
    const token = ctx.config.telemetry.metricsToken;
    if (!token) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'No route for GET /metrics' } });
    const given = Buffer.from(/^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '');
    const expected = Buffer.from(token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return reply.code(401).header('www-authenticate', 'Bearer').send({ error: { code: 'UNAUTHENTICATED', message: 'A valid metrics token is required.' } });
    }
    return reply.header('cache-control', 'no-store').type(PROMETHEUS_CONTENT_TYPE).send(ctx.telemetry.renderPrometheus());
  });

  // Touches nothing but this process: no database, store, auth or AI provider. Over HTTP the exact
  // URL is answered before routing (livenessFastPath below); this route serves the rest.
  app.get('/health/live', async (_request, reply) => {
    const answer = liveness({ replica, version: ctx.config.version, uptimeSeconds });
    return reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  });
}

/**
 * GET (and HEAD) /health/live answered at the HTTP server, before Fastify's routing, request and
 * reply objects, logger and hooks: the cheapest possible "the process answers", so liveness
 * checks under load cost next to nothing. The same status, headers and body as the Fastify route
 * (which still serves `app.inject`, URLs with a query string, and every request once the server
 * is closing, so Fastify's 503-on-closing applies); its request timing is recorded like any other.
 * The body changes only when the uptime (0.1 s resolution) does, so it is serialized at most once
 * per tenth of a second. Returns false for any other request, which then goes to Fastify.
 */
export function livenessFastPath(ctx: AppContext, isClosing: () => boolean): (req: IncomingMessage, res: ServerResponse) => boolean {
  const replica = { ...ctx.identity };
  let cachedAt = -1;
  let headers: Record<string, string | number> = {};
  let body = '';
  return (req, res) => {
    if (req.url !== '/health/live' || (req.method !== 'GET' && req.method !== 'HEAD') || isClosing()) return false;
    const started = performance.now();
    const tenth = Math.floor((Date.now() - ctx.startedAt) / 100);
    if (tenth !== cachedAt) {
      const answer = liveness({ replica, version: ctx.config.version, uptimeSeconds: () => tenth / 10 });
      body = JSON.stringify(answer.body);
      headers = { ...answer.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) };
      cachedAt = tenth;
    }
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
    ctx.telemetry.recordRequest({ method: req.method, route: '/health/live', status: 200, durationMs: performance.now() - started });
    return true;
  };
}
