import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { loadConfig } from '@yumina/config';
import { currentDeadlineMs, HEALTH_PROBE_DEADLINE_MS, MAINTENANCE_DEADLINE_MS, withHealthProbeDeadline, withMaintenanceDeadline } from '@yumina/db';
import { HEALTH_SQL_PROBE_DEADLINE_MS, PROBE_RESPONSE_LIMIT_MS } from '@yumina/health';
import { CPU_PROFILE_MAX_SECONDS, CPU_PROFILE_SAMPLING_INTERVAL_MS, CPU_PROFILE_TOP_STACKS } from '../packages/telemetry/src/cpu-profile.ts';
import { HEALTHY_SAMPLE_EVERY_MS, STALL_MAX_MS, STALL_P95_MS, STALL_TIMER_LATE_MS } from '@yumina/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../containers/api/src/app.ts';
import { contextFor } from './support/context.ts';
import { adminUrl, createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { freePort } from './support/redis.ts';

/** Seed 000 §2.1, §2.2 and §8: each value pinned, so a change fails here. */
describe('seed 000 values', () => {
  it('§2.2 stall reporting: p95 50 ms, max 1000 ms, timer late 1000 ms, a healthy sample every 30 s', () => {
    expect(STALL_P95_MS).toBe(50);
    expect(STALL_MAX_MS).toBe(1000);
    expect(STALL_TIMER_LATE_MS).toBe(1000);
    expect(HEALTHY_SAMPLE_EVERY_MS).toBe(30_000);
  });

  it('§2.1 CPU profile: 25 stacks, 10 ms sampling, off by default, at most 180 s', () => {
    expect(CPU_PROFILE_TOP_STACKS).toBe(25);
    expect(CPU_PROFILE_SAMPLING_INTERVAL_MS).toBe(10);
    expect(CPU_PROFILE_MAX_SECONDS).toBe(180);
    expect(loadConfig({}).telemetry.cpuProfileSeconds).toBe(0);
    expect(() => loadConfig({ RUNTIME_CPU_PROFILE_SECONDS: '181' })).toThrow(/RUNTIME_CPU_PROFILE_SECONDS/);
  });

  it('§2.1 pool caps 100 primary and 80 read by default, refused above; the 60,000 ms query default', () => {
    const config = loadConfig({});
    expect(config.database.poolMax).toBe(100);
    expect(config.database.readPoolMax).toBe(80);
    expect(() => loadConfig({ DATABASE_POOL_MAX: '101' })).toThrow(/DATABASE_POOL_MAX/);
    expect(() => loadConfig({ DATABASE_READ_POOL_MAX: '81' })).toThrow(/DATABASE_READ_POOL_MAX/);
    expect(config.database.queryTimeoutMs).toBe(60_000);
    // Outside any scope a query gets the configured default.
    expect(currentDeadlineMs(config.database.queryTimeoutMs)).toBe(60_000);
  });

  it('§2.1 the maintenance scope is 300,000 ms and the health SQL probe scope 4,000 ms, whatever the default', () => {
    expect(MAINTENANCE_DEADLINE_MS).toBe(300_000);
    expect(withMaintenanceDeadline(() => currentDeadlineMs(60_000))).toBe(300_000);
    expect(HEALTH_PROBE_DEADLINE_MS).toBe(4_000);
    expect(HEALTH_SQL_PROBE_DEADLINE_MS).toBe(4_000);
    expect(withHealthProbeDeadline(() => currentDeadlineMs(60_000))).toBe(4_000);
    expect(PROBE_RESPONSE_LIMIT_MS).toBe(5_000);
  });
});

/**
 * A TCP relay in front of the real PostgreSQL that, once told to, stops passing the client's bytes
 * on: connections it already made stay open, so a query sent afterwards hangs after connecting.
 */
async function startHangingRelay(target: { host: string; port: number }) {
  let hang = false;
  const sockets: Socket[] = [];
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    sockets.push(client, upstream);
    upstream.on('data', (d) => client.write(d));
    client.on('data', (d) => {
      if (!hang) upstream.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port,
    hang: () => (hang = true),
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe('§2.1 the health SQL deadline on a query that hangs after connecting', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('GET /health answers 503 at the 4,000 ms SQL deadline (DB_QUERY_TIMEOUT), before the 5 s response limit', async () => {
    const admin = new URL(adminUrl);
    const relay = await startHangingRelay({ host: admin.hostname, port: Number(admin.port || 5432) });
    const url = new URL(database.url);
    url.host = `127.0.0.1:${relay.port}`;
    // The operator's token shows the probe's error text (anonymous callers see states only).
    const ctx = await contextFor({ DATABASE_URL: url.toString(), DATABASE_POOL_MAX: '1', METRICS_TOKEN: 'operator-token-of-this-test' });
    const app = await buildApp(ctx, { web: false });
    try {
      // Connected and answering: the pool holds one open connection through the relay.
      expect((await ctx.db.primary.query<{ one: number }>('select 1 as one')).rows[0]!.one).toBe(1);
      relay.hang();
      const t0 = performance.now();
      const answer = await app.inject({ method: 'GET', url: '/health', headers: { authorization: 'Bearer operator-token-of-this-test' } });
      const elapsed = performance.now() - t0;
      expect(answer.statusCode).toBe(503);
      const primary = (answer.json() as { dependencies: { primary: { status: string; error?: string; latencyMs: number } } }).dependencies.primary;
      expect(primary.status).toBe('down');
      expect(primary.error).toMatch(/exceeded its 4000 ms deadline/);
      expect(primary.latencyMs).toBeGreaterThanOrEqual(3_990);
      expect(elapsed).toBeGreaterThanOrEqual(3_990);
      expect(elapsed).toBeLessThan(PROBE_RESPONSE_LIMIT_MS);
    } finally {
      await app.close();
      relay.close();
      await ctx.db.close();
    }
  }, 20_000);
});
