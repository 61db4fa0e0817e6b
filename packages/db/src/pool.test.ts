import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, observer, type TestDatabase } from '../../../tests/support/postgres.ts';
import { withDeadline } from './deadline.ts';
import { DbPoolTimeoutError, DbQueryTimeoutError, DbUnsupportedQueryError } from './errors.ts';
import { DbPool } from './pool.ts';

describe('DbPool on real PostgreSQL (seed 000 deadline contract)', () => {
  let database: TestDatabase;
  let watch: pg.Client;
  const pools: DbPool[] = [];
  const makePool = (max = 4, extra: Partial<ConstructorParameters<typeof DbPool>[0]> = {}) => {
    const pool = new DbPool({
      name: 'primary',
      connectionString: database.url,
      max,
      queryTimeoutMs: 60_000,
      connectTimeoutMs: 5_000,
      ...extra,
    });
    pools.push(pool);
    return pool;
  };
  const backendsRunning = async (marker: string) =>
    Number(
      (
        await watch.query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and query like $1 and pid <> pg_backend_pid()`,
          [`%${marker}%`],
        )
      ).rows[0].n,
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    watch = await observer(database.url);
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end().catch(() => {})));
    await watch?.end();
    await database?.drop();
  });

  it('(a) a pg_sleep(5) past a 200 ms scope fails with DB_QUERY_TIMEOUT, outcome unknown; the client is destroyed and the pool serves on', async () => {
    const pool = makePool();
    await pool.query('select 1'); // one idle client exists
    expect(pool.pressure().total).toBe(1);
    const started = Date.now();
    const err = await withDeadline(200, () => pool.query("select pg_sleep(5), 'case-a'")).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toBeInstanceOf(DbQueryTimeoutError);
    expect(err).toMatchObject({ code: 'DB_QUERY_TIMEOUT', outcome: 'unknown', timeoutMs: 200 });
    expect(pool.pressure().total).toBe(0); // discarded, not returned
    // The backend is cancelled (CancelRequest) well before pg_sleep would end.
    await expect.poll(() => backendsRunning('case-a'), { timeout: 2_000, interval: 50 }).toBe(0);
    const next = await pool.query<{ n: number }>('select 41 + 1 as n');
    expect(next.rows[0]!.n).toBe(42);
  });

  it('(b) in a transaction, commands after a timeout fail with the same error without reaching the server; the owner releases', async () => {
    const pool = makePool();
    await pool.query('create table if not exists tx_probe (id int)');
    const client = await pool.connect();
    await client.query('begin');
    const first = await withDeadline(150, () => client.query('select pg_sleep(3)')).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(DbQueryTimeoutError);
    const second = await client.query("insert into tx_probe values (1) returning 'case-b'").catch((e: unknown) => e);
    expect(second).toBe(first); // the original error, not a new one
    expect(await backendsRunning('case-b')).toBe(0);
    client.release();
    expect(pool.pressure().total).toBe(0);
    const rows = await pool.query('select * from tx_probe');
    expect(rows.rowCount).toBe(0);
  });

  it('(b3) several commands in flight: each, and every later one, fails with the original DB_QUERY_TIMEOUT (never "Connection terminated")', async () => {
    const pool = makePool();
    const client = await pool.connect();
    await client.query('begin');
    // Three commands queued on one client: the first's deadline fires while the others wait behind it.
    const settled = await Promise.all([
      withDeadline(150, () => client.query('select pg_sleep(3)')).catch((e: unknown) => e),
      withDeadline(5_000, () => client.query("select 'case-b3-second'")).catch((e: unknown) => e),
      withDeadline(5_000, () => client.query("select 'case-b3-third'")).catch((e: unknown) => e),
    ]);
    expect(settled[0]).toBeInstanceOf(DbQueryTimeoutError);
    expect(settled[1]).toBe(settled[0]);
    expect(settled[2]).toBe(settled[0]);
    expect(client.brokenBy).toBe(settled[0]); // the stored error was not overwritten by the closed socket's
    expect(await client.query('commit').catch((e: unknown) => e)).toBe(settled[0]);
    client.release();
    expect(pool.pressure().total).toBe(0);
    // Through transaction(): the same original error reaches the owner, who released the client.
    const original = await pool
      .transaction(async (tx) => {
        await Promise.all([withDeadline(100, () => tx.query('select pg_sleep(2)')), tx.query('select 1'), tx.query('select 2')]);
      })
      .catch((e: unknown) => e);
    expect(original).toBeInstanceOf(DbQueryTimeoutError);
    expect((original as DbQueryTimeoutError).timeoutMs).toBe(100);
    expect(pool.pressure().total).toBe(0);
  });

  it('(b2) transaction(): a timeout inside propagates the original error and discards the client', async () => {
    const pool = makePool();
    let inner: unknown;
    const err = await pool
      .transaction(async (tx) => {
        inner = await withDeadline(100, () => tx.query('select pg_sleep(2)')).catch((e: unknown) => e);
        await tx.query('select 1'); // fails with the same error
      })
      .catch((e: unknown) => e);
    expect(inner).toBeInstanceOf(DbQueryTimeoutError);
    expect(err).toBe(inner);
    expect(pool.pressure().total).toBe(0);
  });

  it('(c) a query queued behind an exhausted pool runs under its own submission-time deadline', async () => {
    const pool = makePool(1);
    // The borrower holds the only client under a long scope.
    const holder = withDeadline(10_000, () => pool.query('select pg_sleep(0.6)'));
    // Submitted with a 300 ms scope while the pool is exhausted: it waits (not counted), then its own 300 ms applies.
    const queued = withDeadline(300, () => pool.query("select pg_sleep(1), 'case-c'")).catch((e: unknown) => e);
    // Submitted with a 5 s scope: must not inherit the holder's or the previous borrower's scope.
    const patient = withDeadline(5_000, () => pool.query('select pg_sleep(0.5) as ok'));
    await holder;
    const q = await queued;
    expect(q).toBeInstanceOf(DbQueryTimeoutError);
    expect((q as DbQueryTimeoutError).timeoutMs).toBe(300);
    const p = await patient;
    expect(p.rowCount).toBe(1);
  });

  it('(d) an ordinary SQL error rolls back and the same client serves again', async () => {
    const pool = makePool(1);
    await pool.query('create table if not exists d_probe (id int primary key)');
    const err = await pool
      .transaction(async (tx) => {
        await tx.query('insert into d_probe values (1)');
        await tx.query('insert into d_probe values (1)'); // unique violation
      })
      .catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('23505');
    const pid1 = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    expect((await pool.query('select * from d_probe')).rowCount).toBe(0); // rolled back
    const pid2 = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    expect(pid2).toBe(pid1);
    expect(pool.pressure().total).toBe(1);
  });

  it('(e) nested scopes: the innermost governs, in both directions', async () => {
    const pool = makePool();
    const tight = await withDeadline(5_000, () => withDeadline(100, () => pool.query('select pg_sleep(0.5)'))).catch((e: unknown) => e);
    expect(tight).toMatchObject({ code: 'DB_QUERY_TIMEOUT', timeoutMs: 100 });
    const loose = await withDeadline(100, () => withDeadline(5_000, () => pool.query('select pg_sleep(0.3) as ok')));
    expect(loose.rowCount).toBe(1);
  });

  it('(f) cursor and submittable query objects are refused with a clear error', async () => {
    const pool = makePool();
    // node-postgres' own Query object is the submittable every cursor library builds on.
    const submittable = new pg.Query('select 1');
    expect(typeof (submittable as unknown as { submit: unknown }).submit).toBe('function');
    const cursorLike = { text: 'select 1', submit() {} };
    for (const q of [submittable, cursorLike]) {
      await expect(pool.query(q as never)).rejects.toBeInstanceOf(DbUnsupportedQueryError);
      const client = await pool.connect();
      await expect(client.query(q as never)).rejects.toThrow(/not supported by the protected database pools/);
      client.release();
    }
    expect(pool.pressure().total).toBeLessThanOrEqual(1); // nothing leaked; the client serves again
    expect((await pool.query('select 1 as one')).rows[0]).toEqual({ one: 1 });
  });

  it('(g) every connection carries the server-side limits', async () => {
    const pool = makePool();
    const client = await pool.connect();
    try {
      const show = async (name: string) => (await client.query<Record<string, string>>(`show ${name}`)).rows[0]![name];
      expect(await show('statement_timeout')).toBe('5min');
      expect(await show('lock_timeout')).toBe('20s');
      expect(await show('idle_in_transaction_session_timeout')).toBe('1min');
    } finally {
      client.release();
    }
  });

  it('(i) pg_terminate_backend mid-query: an error, that client evicted, the next query works', async () => {
    const pool = makePool(2);
    const running = pool.query("select pg_sleep(5), 'case-i'").catch((e: unknown) => e);
    await expect.poll(() => backendsRunning('case-i'), { timeout: 2_000, interval: 25 }).toBe(1);
    await watch.query(`select pg_terminate_backend(pid) from pg_stat_activity where query like '%case-i%' and pid <> pg_backend_pid()`);
    const err = await running;
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DbQueryTimeoutError);
    expect(pool.pressure().total).toBe(0);
    expect((await pool.query('select 1 as ok')).rowCount).toBe(1);
  });

  it('(j) waiting on an exhausted pool fails with its own error, distinct from DB_QUERY_TIMEOUT', async () => {
    const pool = makePool(1, { connectTimeoutMs: 200 });
    const held = await pool.connect();
    const err = await pool.query('select 1').catch((e: unknown) => e);
    held.release();
    expect(err).toBeInstanceOf(DbPoolTimeoutError);
    expect(err).toMatchObject({ code: 'DB_POOL_TIMEOUT' });
    expect(err).not.toBeInstanceOf(DbQueryTimeoutError);
  });

  it('(k) a server-side statement_timeout (57014) leaves the connection reusable', async () => {
    const pool = makePool(1);
    const pid1 = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const err = await pool
      .transaction(async (tx) => {
        await tx.query("set local statement_timeout = '100ms'");
        await tx.query('select pg_sleep(1)');
      })
      .catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('57014');
    const pid2 = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    expect(pid2).toBe(pid1);
    expect(pool.pressure().total).toBe(1);
  });

  it('reports pool pressure: total, idle, waiting', async () => {
    const pool = makePool(1);
    const held = await pool.connect();
    const waiting = pool.query('select 1');
    await new Promise((r) => setTimeout(r, 20));
    expect(pool.pressure()).toMatchObject({ pool: 'primary', total: 1, idle: 0, waiting: 1, max: 1 });
    held.release();
    await waiting;
    expect(pool.pressure()).toMatchObject({ total: 1, idle: 1, waiting: 0 });
  });

  it('transaction({ snapshot: true }): every read sees the database as of the first, whatever commits between them; writes are refused', async () => {
    const pool = makePool(2);
    await pool.query('create table snap_t (id int primary key, v int)');
    await pool.query('insert into snap_t values (1, 60)');
    const seen = await pool.transaction(
      async (tx) => {
        const first = (await tx.query<{ v: number }>('select v from snap_t where id = 1')).rows[0]!.v;
        // another connection commits between the two reads (a turn completing)
        await pool.query('update snap_t set v = 55 where id = 1');
        const second = (await tx.query<{ v: number }>('select v from snap_t where id = 1')).rows[0]!.v;
        const write = await tx.query('update snap_t set v = 1').catch((e: unknown) => e);
        return { first, second, write };
      },
      { snapshot: true },
    ).catch((e: unknown) => e);
    expect(seen).toMatchObject({ first: 60, second: 60 });
    expect((seen as { write: { code?: string } }).write.code).toBe('25006'); // read_only_sql_transaction
    expect((await pool.query<{ v: number }>('select v from snap_t')).rows[0]!.v).toBe(55);
    // without the option, the second read sees the commit (READ COMMITTED)
    const plain = await pool.transaction(async (tx) => {
      await tx.query('select v from snap_t');
      await pool.query('update snap_t set v = 50 where id = 1');
      return (await tx.query<{ v: number }>('select v from snap_t')).rows[0]!.v;
    });
    expect(plain).toBe(50);
  });
});
