import { connect, type Socket } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BackendSocketServer, lastReadyStatus } from './embedded-socket.ts';

/** The socket layer in front of one PGlite backend, driven by real pg clients and by raw protocol bytes. */
describe('the socket layer in front of the single PGlite backend', () => {
  let db: PGlite;
  let server: BackendSocketServer;
  let url: string;
  const clients: pg.Client[] = [];

  async function client(options = ''): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: url, options: options || undefined });
    c.on('error', () => {});
    await c.connect();
    clients.push(c);
    return c;
  }

  beforeAll(async () => {
    db = await PGlite.create();
    server = new BackendSocketServer({
      backend: { exec: (messages) => db.runExclusive(() => db.execProtocolRaw(messages)) },
      maxConnections: 8,
    });
    url = `postgres://postgres@127.0.0.1:${await server.start()}/postgres`;
    await db.exec('create table t (id text primary key)');
  }, 60_000);

  beforeEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
    await db.exec('delete from t');
  });

  afterAll(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
    await server?.stop();
    await db?.close();
  });

  const ids = async (c: pg.Client) => (await c.query<{ id: string }>('select id from t order by id')).rows.map((r) => r.id);
  const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);

  it('many connections running parameterised queries at once each get their own answers', async () => {
    const conns = await Promise.all(Array.from({ length: 6 }, () => client()));
    const answers = await Promise.all(
      conns.map(async (c, i) => {
        const wrong: string[] = [];
        for (let j = 0; j < 40; j++) {
          const { rows } = await c.query<{ v: string; n: number }>('select $1::text as v, $2::int * 2 as n', [`c${i}q${j}`, j]);
          if (`${rows[0]!.v}:${rows[0]!.n}` !== `c${i}q${j}:${j * 2}`) wrong.push(`c${i}q${j} got ${rows[0]!.v}:${rows[0]!.n}`);
        }
        return wrong;
      }),
    );
    expect(answers.flat()).toEqual([]);
  });

  it('a transaction owns the backend from BEGIN to COMMIT: another connection’s statement waits and never runs inside it', async () => {
    const a = await client();
    const b = await client();
    await a.query('begin');
    await a.query(`insert into t values ('a')`);
    const beside = b.query(`insert into t values ('b')`);
    expect(await settled(beside)).toBe(false); // waits for the owner
    expect(await ids(a)).toEqual(['a']);
    await a.query('rollback');
    await beside;
    expect(await ids(b)).toEqual(['b']); // committed on its own, not rolled back with A
    expect(server.stats().owned).toBe(false);
  });

  it('a new connection opens at once while a transaction holds the backend; its first statement waits', async () => {
    const a = await client();
    await a.query('begin');
    await a.query(`insert into t values ('a')`);
    const late = new pg.Client({ connectionString: url });
    late.on('error', () => {});
    clients.push(late);
    expect(await settled(late.connect())).toBe(true);
    const beside = late.query<{ n: number }>('select count(*)::int as n from t');
    expect(await settled(beside)).toBe(false);
    await a.query('commit');
    expect((await beside).rows).toEqual([{ n: 1 }]);
  });

  it('a failed transaction (status E) keeps the backend until its ROLLBACK', async () => {
    const a = await client();
    const b = await client();
    await a.query('begin');
    await a.query(`insert into t values ('a')`);
    await expect(a.query('select nonsense_column from t')).rejects.toThrow(/nonsense_column/);
    const beside = b.query(`insert into t values ('b')`);
    expect(await settled(beside)).toBe(false);
    await a.query('rollback');
    await beside;
    expect(await ids(b)).toEqual(['b']);
  });

  it('an owner that goes away mid-transaction is rolled back before anyone else runs', async () => {
    const a = await client();
    const b = await client();
    await a.query('begin');
    await a.query(`insert into t values ('lost')`);
    const beside = b.query(`insert into t values ('b')`);
    expect(await settled(beside)).toBe(false);
    (a as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
    await beside;
    expect(await ids(b)).toEqual(['b']);
    expect(db.isInTransaction()).toBe(false);
  });

  it('an owner idle in its transaction past its idle_in_transaction_session_timeout is ended (25P03) and the others go on', async () => {
    const a = await client('-c idle_in_transaction_session_timeout=300');
    const b = await client();
    const ended = new Promise<Error>((resolve) => a.once('error', resolve));
    await a.query('begin');
    await a.query(`insert into t values ('forgotten')`);
    await b.query(`insert into t values ('b')`); // waits until A is ended and rolled back
    expect(await ids(b)).toEqual(['b']);
    expect(((await ended) as { code?: string }).code).toBe('25P03');
  });

  it('a half-sent exchange of a vanished connection never runs; a flushed but unsynced one is rolled back, not committed', async () => {
    const b = await client();
    for (const flush of [false, true]) {
      const raw = await rawConnection();
      const insert = Buffer.concat([
        message('P', Buffer.concat([cstring(''), cstring(`insert into t values ('${flush ? 'flushed' : 'half'}')`), Buffer.alloc(2)])),
        message('B', Buffer.concat([cstring(''), cstring(''), Buffer.alloc(6)])),
        message('E', Buffer.concat([cstring(''), Buffer.alloc(4)])),
        ...(flush ? [message('H', Buffer.alloc(0))] : []),
      ]);
      raw.socket.write(insert);
      if (flush) {
        await raw.until((data) => data.includes(Buffer.from('INSERT 0 1'))); // it ran, inside its implicit transaction
        // The exchange is open (no Sync yet): it keeps the backend.
        const beside = ids(b);
        expect(await settled(beside)).toBe(false);
        raw.socket.destroy();
        expect(await beside).toEqual([]);
      } else {
        await new Promise((r) => setTimeout(r, 100));
        raw.socket.destroy();
      }
      expect(await ids(b)).toEqual([]);
    }
  });

  it('refuses connections beyond its limit with a FATAL 53300', async () => {
    await Promise.all(Array.from({ length: 8 }, () => client()));
    const extra = new pg.Client({ connectionString: url });
    extra.on('error', () => {});
    await expect(extra.connect()).rejects.toMatchObject({ code: '53300' });
    await extra.end().catch(() => {});
  });

  it('reads the status of the ReadyForQuery that ends an answer', () => {
    const z = (s: string) => Buffer.from([0x5a, 0, 0, 0, 5, s.charCodeAt(0)]);
    const complete = message('C', cstring('BEGIN'));
    expect(lastReadyStatus(Buffer.concat([complete, z('T')]))).toBe('T');
    expect(lastReadyStatus(Buffer.concat([z('I'), complete, z('E')]))).toBe('E');
    expect(lastReadyStatus(complete)).toBeUndefined();
    // Not ready at the end (a flushed exchange still open after an earlier ReadyForQuery): no status.
    expect(lastReadyStatus(Buffer.concat([z('I'), complete]))).toBeUndefined();
    // A notice after the ReadyForQuery does not hide it.
    expect(lastReadyStatus(Buffer.concat([z('T'), message('N', Buffer.concat([cstring('SNOTICE'), Buffer.alloc(1)]))]))).toBe('T');
  });

  /** A connection speaking raw protocol bytes, past the startup exchange. */
  async function rawConnection(): Promise<{ socket: Socket; until(test: (data: Buffer) => boolean): Promise<void> }> {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let received = Buffer.alloc(0);
    const waiters: (() => void)[] = [];
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      waiters.splice(0).forEach((w) => w());
    });
    socket.on('error', () => {});
    const until = async (test: (data: Buffer) => boolean) => {
      while (!test(received)) await new Promise<void>((r) => waiters.push(r));
    };
    const params = Buffer.concat([cstring('user'), cstring('postgres'), cstring('database'), cstring('postgres'), Buffer.alloc(1)]);
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + params.length, 0);
    startup.writeInt32BE(196608, 4);
    socket.write(Buffer.concat([startup, params]));
    await until((data) => lastReadyStatus(data) === 'I');
    received = Buffer.alloc(0);
    return { socket, until };
  }
});

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function cstring(s: string): Buffer {
  return Buffer.from(`${s}\0`, 'utf8');
}
