import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_PROBE_DEADLINE_MS, withDeadline, withHealthProbeDeadline } from './deadline.ts';
import { type EmbeddedPostgres, EMBEDDED_POOL_MAX, startEmbeddedPostgres } from './embedded.ts';
import { DbPoolTimeoutError, DbQueryTimeoutError } from './errors.ts';
import { DbPool } from './pool.ts';

/**
 * The deadline contract on the embedded default: the same DbPool (pg) over the wire to PGlite in
 * its child process. Waiting for the single backend counts against a statement's own deadline.
 */
describe('DbPool on the embedded PGlite (deadlines while the single backend is held)', () => {
  let dataDir: string;
  let embedded: EmbeddedPostgres;
  const pools: DbPool[] = [];
  const makePool = (max = EMBEDDED_POOL_MAX, connectTimeoutMs = 5_000) => {
    const pool = new DbPool({ name: 'primary', connectionString: embedded.url, max, queryTimeoutMs: 60_000, connectTimeoutMs });
    pools.push(pool);
    return pool;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'yumina-embedded-db-'));
    embedded = await startEmbeddedPostgres(join(dataDir, 'pglite'));
    await makePool(1).query('create table held (id text primary key)');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end().catch(() => {})));
    await embedded?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Opens a transaction that holds the backend until `release` is called, then commits it. */
  async function holdBackend(pool: DbPool, id: string) {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    const done = pool.transaction(async (tx) => {
      await tx.query('insert into held (id) values ($1)', [id]);
      opened();
      await released;
    });
    await open;
    return { release, done };
  }

  it('a statement waiting for a transaction that holds the backend fails at its own deadline, never runs, and the pool serves on', async () => {
    const pool = makePool();
    const holder = await holdBackend(pool, 'holder');
    const waited = await withDeadline(300, () => pool.query(`insert into held (id) values ('waited')`)).catch((e: unknown) => e);
    // It answered while the transaction still held the backend: the wait counted against its 300 ms.
    expect(waited).toBeInstanceOf(DbQueryTimeoutError);
    expect(waited).toMatchObject({ timeoutMs: 300 });
    holder.release();
    await holder.done;
    const { rows } = await pool.query<{ id: string }>('select id from held order by id');
    expect(rows.map((r) => r.id)).toEqual(['holder']); // the abandoned statement was dropped with its connection
    await pool.query('delete from held');
  });

  it('the health probe keeps its deadline while the backend is held', async () => {
    const pool = makePool();
    const holder = await holdBackend(pool, 'probe-holder');
    const probe = await withHealthProbeDeadline(() => pool.query('select 1')).catch((e: unknown) => e);
    expect(probe).toBeInstanceOf(DbQueryTimeoutError);
    expect(probe).toMatchObject({ timeoutMs: HEALTH_PROBE_DEADLINE_MS });
    holder.release();
    await holder.done;
    expect((await withHealthProbeDeadline(() => pool.query<{ n: number }>('select 1 as n'))).rows).toEqual([{ n: 1 }]);
    await pool.query('delete from held');
  }, 30_000);

  it('the acquire timeout still bounds waiting for a pooled connection', async () => {
    const pool = makePool(1, 300);
    const first = await pool.connect();
    const err = await pool.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DbPoolTimeoutError);
    first.release();
    expect((await pool.query<{ n: number }>('select 2 as n')).rows).toEqual([{ n: 2 }]);
  });

  it('a statement that outlives its deadline inside a transaction: the others wait for it, then find its work rolled back', async () => {
    const pool = makePool();
    const killed = withDeadline(300, () =>
      pool.transaction(async (tx) => {
        await tx.query(`insert into held (id) values ('killed')`);
        await tx.query('select pg_sleep(1.5)');
      }),
    ).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const beside = await Promise.all(Array.from({ length: 5 }, (_, i) => pool.query('insert into held (id) values ($1)', [`beside${i}`])));
    expect(beside.map((r) => r.rowCount)).toEqual([1, 1, 1, 1, 1]);
    expect(await killed).toBeInstanceOf(DbQueryTimeoutError);
    const { rows } = await pool.query<{ id: string }>('select id from held order by id');
    expect(rows.map((r) => r.id)).toEqual(['beside0', 'beside1', 'beside2', 'beside3', 'beside4']);
    await pool.query('delete from held');
  });

  it('session settings: PGlite ignores the startup limits (statement and lock timeouts); a SET lasts on the one shared backend', async () => {
    const pool = makePool(2);
    // Documented in the README's "Embedded mode limits": only the idle-in-transaction limit is enforced (by the socket layer).
    expect((await pool.query<{ statement_timeout: string }>('show statement_timeout')).rows[0]!.statement_timeout).toBe('0');
    const a = await pool.connect();
    const b = await pool.connect();
    try {
      await a.query(`set application_name = 'set-by-a'`);
      expect((await b.query<{ application_name: string }>('show application_name')).rows[0]!.application_name).toBe('set-by-a');
      await a.query('reset application_name');
      // SET LOCAL ends with its transaction, as on PostgreSQL.
      await a.query('begin');
      await a.query(`set local application_name = 'local-to-a'`);
      await a.query('commit');
      expect((await b.query<{ application_name: string }>('show application_name')).rows[0]!.application_name).not.toBe('local-to-a');
    } finally {
      a.release();
      b.release();
    }
  });
});
