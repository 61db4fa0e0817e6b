import { DbPool } from '@yumina/db';
import pg from 'pg';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { adminUrl as url } from '../tests/support/postgres.ts';

/**
 * Issue 3 benchmark: a pooled `select 1` through packages/db (deadline scope capture, timer,
 * protected client) against the same through a bare pg.Pool, on the same server.
 * Goal: the deadline layer costs ≤ 10% (bare / packages/db throughput ratio ≤ 1.10).
 */
const protectedPool = new DbPool({ name: 'primary', connectionString: url, max: 4, queryTimeoutMs: 60_000, connectTimeoutMs: 5_000 });
const barePool = new pg.Pool({ connectionString: url, max: 4 });
barePool.on('error', () => {});

const protectedRound = () =>
  Promise.all([protectedPool.query('select 1'), protectedPool.query('select 1'), protectedPool.query('select 1'), protectedPool.query('select 1')]);
const bareRound = () => Promise.all([barePool.query('select 1'), barePool.query('select 1'), barePool.query('select 1'), barePool.query('select 1')]);

/** Rounds per second of `fn` over `ms`. */
async function rate(fn: () => Promise<unknown>, ms: number): Promise<number> {
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) {
    await fn();
    n++;
  }
  return n / (ms / 1000);
}

// Interleaved rounds (A, B, A, B, …) so drift in a shared machine's load hits both sides alike;
// the printed ratio is the median of the per-round ratios.
beforeAll(async () => {
  await rate(protectedRound, 500);
  await rate(bareRound, 500);
  const ratios: number[] = [];
  for (let i = 0; i < 8; i++) {
    const a = await rate(protectedRound, 400);
    const b = await rate(bareRound, 400);
    ratios.push(b / a);
  }
  ratios.sort((x, y) => x - y);
  const median = (ratios[3]! + ratios[4]!) / 2;
  console.log(`\ndb: bare pg.Pool / packages/db throughput, median of 8 interleaved rounds: ${median.toFixed(3)} (goal ≤ 1.10)\n`);
}, 60_000);

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
