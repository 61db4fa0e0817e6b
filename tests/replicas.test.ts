import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { sharedRedisUrl, testPrefix } from './support/redis.ts';
import { type Replica, startReplica } from './support/replica.ts';
import { containerSettings } from './support/container-settings.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('two container replicas on one database and Redis', () => {
  let database: TestDatabase;
  let db: pg.Client;
  const replicas: Replica[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-replicas-'));
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    env = {
      ...containerSettings(),
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: sharedRedisUrl,
      REDIS_KEY_PREFIX: testPrefix(),
      MAINTENANCE_PERIOD_MS: '1000',
      LEADER_LEASE_TTL_MS: '1500',
      LOGIN_RATE_LIMIT_PER_MINUTE: '4',
    };
    replicas.push(await startReplica('replica-a', env));
    replicas.push(await startReplica('replica-b', env));
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    await db?.end();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const runs = async () =>
    (
      await db.query<{ job: string; period: string; replica_id: string }>(
        `select job, extract(epoch from period_start)::text as period, replica_id from maintenance_runs order by period_start`,
      )
    ).rows;

  it('each job runs on exactly one replica per period; rate limits are shared; killing the leader hands the lease over after its TTL', async () => {
    await sleep(3_500);
    const first = await runs();
    const sessionsJob = first.filter((r) => r.job === 'expired-sessions');
    expect(sessionsJob.length).toBeGreaterThanOrEqual(2);
    const leaders = new Set(first.map((r) => r.replica_id));
    expect(leaders.size).toBe(1); // one leader ran everything
    const leader = [...leaders][0]!;

    // Rate limits are shared through Redis: the 5th attempt is refused whichever replica gets it.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const target = replicas[i % 2]!;
      const r = await fetch(`${target.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' }),
      });
      statuses.push(r.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);

    // Kill the leader without a goodbye: the other replica takes over after the lease TTL.
    const dead = replicas.find((r) => r.name === leader)!;
    const survivor = replicas.find((r) => r.name !== leader)!;
    const redis = new Redis(sharedRedisUrl, { keyPrefix: env.REDIS_KEY_PREFIX });
    dead.child.kill('SIGKILL');
    const killedAt = Date.now();
    // What is left of the dead leader's lease: the survivor may not run anything before it expires.
    const leaseLeftMs = await redis.pttl('maintenance:leader');
    expect(await redis.get('maintenance:leader')).not.toBeNull();
    // Renewed every TTL/3 (500 ms), so at least ~1000 ms of the 1500 ms lease remain.
    expect(leaseLeftMs).toBeGreaterThan(800);
    await expect
      .poll(async () => (await runs()).some((r) => r.replica_id === survivor.name), { timeout: 8_000, interval: 50 })
      .toBe(true);
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeGreaterThanOrEqual(leaseLeftMs - 50); // not before the dead leader's lease expired
    expect(takeoverMs).toBeLessThan(6_000); // and soon after it (TTL + a period + polling, with room for a loaded machine)
    redis.disconnect();

    const all = await runs();
    const perPeriod = new Map<string, number>();
    for (const r of all) perPeriod.set(`${r.job}@${r.period}`, (perPeriod.get(`${r.job}@${r.period}`) ?? 0) + 1);
    expect([...perPeriod.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);
});
