import { withHealthProbeDeadline } from '@yumina/db';
import { createProbe, liveness, type Probe, readiness } from '@yumina/health';
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

  app.get('/health', async (_request, reply) => {
    const answer = await readiness(probes, { required: ['primary'], replica, version: ctx.config.version, uptimeSeconds });
    return reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  });

  // Touches nothing but this process: no database, store, auth or AI provider.
  app.get('/health/live', async (_request, reply) => {
    const answer = liveness({ replica, version: ctx.config.version, uptimeSeconds });
    return reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  });
}
