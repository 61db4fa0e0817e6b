import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../tests/support/postgres.ts';
import { runMigrations } from './migrate.ts';
import { DbPool } from './pool.ts';

/** Two replicas of one deploy start together: the migrations run once, under the advisory lock. */
describe('migrations under the advisory lock (real PostgreSQL)', () => {
  let database: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), 'yumina-migrations-'));
  const pools: DbPool[] = [];
  const pool = () => {
    const p = new DbPool({ name: 'primary', connectionString: database.url, max: 2, queryTimeoutMs: 60_000, connectTimeoutMs: 5_000 });
    pools.push(p);
    return p;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    // A slow migration: the second replica starts while the first is inside it.
    writeFileSync(join(dir, '001_slow.sql'), `create table deploy_probe (id int); select pg_sleep(1.5); insert into deploy_probe values (1);`);
    writeFileSync(join(dir, '002_next.sql'), `insert into deploy_probe values (2);`);
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end().catch(() => {})));
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a replica that starts during a migration waits for it, then finds nothing left to apply', async () => {
    const [a, b] = [pool(), pool()];
    const first = runMigrations(a, dir);
    await new Promise((r) => setTimeout(r, 300)); // the first holds the lock and is inside 001
    const startedSecond = performance.now();
    const second = runMigrations(b, dir);
    const [one, two] = await Promise.all([first, second]);
    expect(one.applied).toEqual(['001_slow.sql', '002_next.sql']);
    expect(two).toEqual({ applied: [], skipped: 2 });
    expect(performance.now() - startedSecond).toBeGreaterThan(900); // it waited for the lock
    const rows = await a.query<{ id: number }>('select id from deploy_probe order by id');
    expect(rows.rows.map((r) => r.id)).toEqual([1, 2]); // each migration ran once
  });
});
