import { DbPool } from '@yumina/db';
import pg from 'pg';
import { afterAll, bench, describe } from 'vitest';

/**
 * Issue 3 benchmark: a pooled `select 1` through packages/db (deadline scope capture, timer,
 * protected client) against the same through a bare pg.Pool, on the same server.
 * Goal: the deadline layer costs ≤ 10% (bare / packages/db throughput ratio ≤ 1.10).
 */
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const protectedPool = new DbPool({ name: 'primary', connectionString: url, max: 4, queryTimeoutMs: 60_000, connectTimeoutMs: 5_000 });
const barePool = new pg.Pool({ connectionString: url, max: 4 });
barePool.on('error', () => {});

afterAll(async () => {
  await protectedPool.end();
  await barePool.end();
});

describe('db: pooled select 1 (4 in flight)', () => {
  bench(
    'packages/db DbPool.query',
    async () => {
      await Promise.all([protectedPool.query('select 1'), protectedPool.query('select 1'), protectedPool.query('select 1'), protectedPool.query('select 1')]);
    },
    { time: 3000, warmupTime: 500 },
  );
  bench(
    'bare pg.Pool.query (baseline)',
    async () => {
      await Promise.all([barePool.query('select 1'), barePool.query('select 1'), barePool.query('select 1'), barePool.query('select 1')]);
    },
    { time: 3000, warmupTime: 500 },
  );
});
