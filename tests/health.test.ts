import { createServer, type Server, type Socket } from 'node:net';
import { RedisStore } from '@yumina/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheus } from '../packages/telemetry/src/prometheus-parse.ts';
import { buildApp } from '../containers/api/src/app.ts';
import { contextFor } from './support/context.ts';
import { createTestDatabase, OwnPostgres, type TestDatabase } from './support/postgres.ts';
import { freePort, OwnRedis, sharedRedisUrl, testPrefix } from './support/redis.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GET /health and /health/live', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('1000 concurrent calls share one SQL probe and one PING; a call 1.1 s later probes again', async () => {
    let sqlProbes = 0;
    const redis = new RedisStore({ url: sharedRedisUrl, prefix: testPrefix() });
    await redis.connect();
    let pings = 0;
    const ping = redis.ping.bind(redis);
    redis.ping = () => {
      pings += 1;
      return ping();
    };
    const ctx = await contextFor(
      { DATABASE_URL: database.url },
      {
        store: redis,
        observer: {
          query: (_pool, _ms, _ok, text) => {
            if (text === 'select 1') sqlProbes += 1;
          },
        },
      },
    );
    const app = await buildApp(ctx, { web: false });
    const answers = await Promise.all(Array.from({ length: 1000 }, () => app.inject({ method: 'GET', url: '/health' })));
    expect(new Set(answers.map((a) => a.statusCode))).toEqual(new Set([200]));
    expect(sqlProbes).toBe(1);
    expect(pings).toBe(1);
    const body = answers[0]!.json() as { status: string; dependencies: Record<string, { status: string; latencyMs: number; checkedAt: string }>; replica: { replicaId: string }; uptimeSeconds: number; version: string };
    expect(body.status).toBe('ok');
    expect(body.dependencies.primary).toMatchObject({ status: 'up' });
    expect(body.dependencies.store).toMatchObject({ status: 'up' });
    expect(body.replica.replicaId).toBe(ctx.identity.replicaId);
    expect(body.version).toBe(ctx.config.version);
    expect(answers[0]!.headers['cache-control']).toBe('no-store');

    await sleep(1100);
    await app.inject({ method: 'GET', url: '/health' });
    expect(sqlProbes).toBe(2);
    expect(pings).toBe(2);
    await app.close();
    await ctx.db.close();
    await redis.close();
  });

  it('a database that accepts connections and never answers: 503 within 5.2 s, no new SQL during the hang, a new probe after it settles', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => sockets.push(s));
    const port = await freePort();
    await new Promise<void>((r) => silent.listen(port, '127.0.0.1', r));
    const ctx = await contextFor({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`, DATABASE_CONNECT_TIMEOUT_MS: '6500' });
    const app = await buildApp(ctx, { web: false });
    try {
      const t0 = performance.now();
      const first = await app.inject({ method: 'GET', url: '/health' });
      const elapsed = performance.now() - t0;
      expect(first.statusCode).toBe(503);
      expect(elapsed).toBeLessThan(5_200);
      expect(elapsed).toBeGreaterThan(4_500);
      expect((first.json() as { dependencies: { primary: { status: string } } }).dependencies.primary.status).toBe('timeout');
      expect(sockets).toHaveLength(1);
      // During the hang: the call joins the running probe; no new connection, no new SQL.
      const second = await app.inject({ method: 'GET', url: '/health' });
      expect(second.statusCode).toBe(503);
      expect(sockets).toHaveLength(1);
      // The operation settled (acquire timeout at 6.5 s); after the 1 s cache, the next call probes again.
      await sleep(1_200);
      await app.inject({ method: 'GET', url: '/health' });
      expect(sockets.length).toBe(2);
      // Liveness never touched any of it.
      const live = await app.inject({ method: 'GET', url: '/health/live' });
      expect(live.statusCode).toBe(200);
    } finally {
      await app.close();
      for (const s of sockets) s.destroy();
      silent.close();
      await ctx.db.close();
    }
  }, 20_000);

  it("with the test's own PostgreSQL stopped /health is 503 and /health/live is 200, and it recovers when the server is back", async () => {
    const own = await OwnPostgres.start();
    const ctx = await contextFor({ DATABASE_URL: own.url });
    const app = await buildApp(ctx, { web: false });
    try {
      const ready = await app.inject({ method: 'GET', url: '/health' });
      expect(ready.statusCode).toBe(200);
      expect(ctx.db.primary.pressure().total).toBeGreaterThan(0); // the pool holds a live connection to the server

      await own.stop(); // the server closes that connection under the pool's feet
      await sleep(1_100); // past the 1 s cache of the last probe
      const t0 = performance.now();
      const health = await app.inject({ method: 'GET', url: '/health' });
      const healthMs = performance.now() - t0;
      expect(health.statusCode).toBe(503);
      expect(health.headers['cache-control']).toBe('no-store');
      expect(health.json()).toMatchObject({ status: 'down', dependencies: { primary: { status: 'down' } } });
      expect(health.json().dependencies.primary.error).toBeUndefined(); // anonymous: states, never raw error text
      expect(healthMs).toBeLessThan(5_200);
      const t1 = performance.now();
      const live = await app.inject({ method: 'GET', url: '/health/live' });
      expect(live.statusCode).toBe(200);
      expect(live.headers['cache-control']).toBe('no-store');
      expect(performance.now() - t1).toBeLessThan(1_000);

      await own.start(); // same port and data directory
      await sleep(1_100);
      await expect
        .poll(async () => (await app.inject({ method: 'GET', url: '/health' })).statusCode, { timeout: 10_000, interval: 300 })
        .toBe(200);
    } finally {
      await app.close();
      await ctx.db.close();
      await own.destroy();
    }
  }, 60_000);

  it("with the test's own Redis stopped /health is 200 degraded and /health/live 200, both within their limits", async () => {
    const own = await OwnRedis.start();
    const redis = new RedisStore({ url: own.url });
    await redis.connect();
    const ctx = await contextFor({ DATABASE_URL: database.url }, { store: redis });
    const app = await buildApp(ctx, { web: false });
    try {
      expect((await app.inject({ method: 'GET', url: '/health' })).json()).toMatchObject({ status: 'ok', dependencies: { store: { status: 'up' } } });
      await own.stop();
      await expect.poll(() => redis.client.status, { timeout: 3000 }).not.toBe('ready');
      await sleep(1_100);
      const t0 = performance.now();
      const degraded = await app.inject({ method: 'GET', url: '/health' });
      expect(performance.now() - t0).toBeLessThan(5_200);
      expect(degraded.statusCode).toBe(200);
      expect(degraded.headers['cache-control']).toBe('no-store');
      expect(degraded.json()).toMatchObject({ status: 'degraded', dependencies: { primary: { status: 'up' }, store: { status: 'down' } } });
      const t1 = performance.now();
      expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
      expect(performance.now() - t1).toBeLessThan(1_000);
    } finally {
      await app.close();
      await ctx.db.close();
      await redis.close();
      await own.stop();
    }
  }, 30_000);

  it('GET /health/live over HTTP is answered before routing with what the route answers; timed like any request', async () => {
    const ctx = await contextFor({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/stopped` });
    const timings: { route: string; status: number }[] = [];
    const record = ctx.telemetry.recordRequest.bind(ctx.telemetry);
    ctx.telemetry.recordRequest = (t) => {
      timings.push({ route: t.route, status: t.status });
      record(t);
    };
    const app = await buildApp(ctx, { web: false });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const routed = await app.inject({ method: 'GET', url: '/health/live' }); // through Fastify's route
      const fast = await fetch(`${base}/health/live`);
      expect(fast.status).toBe(200);
      expect(fast.headers.get('cache-control')).toBe('no-store');
      expect(fast.headers.get('content-type')).toBe(routed.headers['content-type']);
      const body = (await fast.json()) as { status: string; replica: unknown; uptimeSeconds: number; version: string };
      const viaRoute = routed.json() as typeof body;
      expect(Object.keys(body)).toEqual(Object.keys(viaRoute));
      expect({ ...body, uptimeSeconds: 0 }).toEqual({ ...viaRoute, uptimeSeconds: 0 });
      expect(Math.abs(body.uptimeSeconds - viaRoute.uptimeSeconds)).toBeLessThanOrEqual(1);
      expect(body.replica).toEqual({ ...ctx.identity });

      const head = await fetch(`${base}/health/live`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      // The uptime moves on (the body is re-serialized once per tenth of a second at most).
      await sleep(250);
      const later = (await (await fetch(`${base}/health/live`)).json()) as typeof body;
      expect(later.uptimeSeconds).toBeGreaterThan(body.uptimeSeconds);
      // Not the exact URL: Fastify's route answers it, the same way.
      const withQuery = await fetch(`${base}/health/live?probe=1`);
      expect(withQuery.status).toBe(200);
      expect(((await withQuery.json()) as typeof body).status).toBe('ok');
      // The three answered before routing were timed under the route template (the routed ones go
      // through the app's onResponse hook as every route does).
      expect(timings).toEqual([
        { route: '/health/live', status: 200 },
        { route: '/health/live', status: 200 },
        { route: '/health/live', status: 200 },
      ]);
    } finally {
      await app.close();
      await ctx.db.close();
    }
  });

  it('/metrics: 404 when METRICS_TOKEN is unset, 401 without the token, Prometheus text with it', async () => {
    const off = await contextFor({ DATABASE_URL: database.url });
    const offApp = await buildApp(off, { web: false });
    expect((await offApp.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    await offApp.close();
    await off.db.close();

    const token = 'metrics-token-0123456789';
    const on = await contextFor({ DATABASE_URL: database.url, METRICS_TOKEN: token });
    const app = await buildApp(on, { web: false });
    await app.inject({ method: 'GET', url: '/health' }); // some query and request timing to report
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong-token-0123456789' } })).statusCode).toBe(401);
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(() => parsePrometheus(text)).not.toThrow();
    expect(text).toMatch(/# TYPE \S+ histogram/);
    expect(text).toContain(on.identity.replicaId);
    await app.close();
    await on.db.close();
  });
});
