import { type ClientRequest, get, type IncomingMessage } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@yumina/config';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../containers/api/src/server.ts';
import { sharedRedisUrl, testPrefix } from '../support/redis.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Item 7 (live update streams) of issue 18: a flood of server-sent event streams from one address
 * is refused beyond the per-address cap (429), a flood from many addresses beyond the per-process
 * cap (503), and the database stays available to everyone else — this server's other routes and
 * another server on the same PostgreSQL.
 */
const PER_ADDRESS = 40;
const PER_PROCESS = 120;

interface Opened {
  status: number;
  headers: IncomingMessage['headers'];
  body: Promise<string>;
  request: ClientRequest;
  response: IncomingMessage;
}

/** Opens one stream on its own connection; resolves once the status line arrives. */
function openStream(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const body =
        res.statusCode === 200
          ? Promise.resolve('')
          : new Promise<string>((done) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (text += c));
              res.on('end', () => done(text));
            });
      if (res.statusCode === 200) res.on('error', () => {});
      resolve({ status: res.statusCode!, headers: res.headers, body, request, response: res });
    });
    request.on('error', reject);
  });
}

/** The name of an open stream's first event (null when none arrives within 20 s). */
function firstEvent(opened: Opened): Promise<string | null> {
  return new Promise((resolve) => {
    let text = '';
    const timer = setTimeout(() => done(null), 20_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /^event: (\S+)$/m.exec(text);
      if (match) done(match[1]!);
    };
    function done(name: string | null) {
      clearTimeout(timer);
      opened.response.off('data', onData);
      opened.response.pause();
      resolve(name);
    }
    opened.response.on('data', onData);
  });
}

describe('live update streams are capped per address and per process', () => {
  let server: TestServer;
  let replica: RunningServer;
  let replicaDir: string;
  let worldId: string;
  const opened: Opened[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      TRUST_PROXY: '127.0.0.1',
      EVENT_STREAMS_PER_ADDRESS: String(PER_ADDRESS),
      EVENT_STREAMS_PER_PROCESS: String(PER_PROCESS),
    });
    const author = new Browser(server.url);
    await signUp(server, author, { email: 'streams@example.com', password: 'long enough pw' });
    await signUp(server, new Browser(server.url), { email: 'bystander@example.com', password: 'long enough pw', headers: { 'x-forwarded-for': '192.0.2.9' } });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const world = JSON.parse(
      (await import('node:fs')).readFileSync(new URL('../../packages/world/samples/willow-street.json', import.meta.url), 'utf8'),
    ) as unknown;
    worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
    expect(((await (await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' })).json()) as { status: string }).status).toBe('published');
    // Another server of the same PostgreSQL (a second replica).
    replicaDir = mkdtempSync(join(tmpdir(), 'yumina-replica-'));
    replica = await startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'fatal',
        DATA_DIR: replicaDir,
        DATABASE_URL: server.database.url,
        REDIS_URL: sharedRedisUrl,
        REDIS_KEY_PREFIX: testPrefix(),
        DATABASE_POOL_MAX: '5',
      }),
      { web: false },
    );
  }, 120_000);
  afterAll(async () => {
    for (const o of opened) o.request.destroy();
    await replica?.close();
    await server?.stop();
    if (replicaDir) rmSync(replicaDir, { recursive: true, force: true });
  });

  it('1000 streams from one address: the first N open, every other one is a 429 with Retry-After, and other clients keep working', async () => {
    const url = `${server.url}/api/worlds/${worldId}/updates/events`;
    const results = await Promise.all(Array.from({ length: 1000 }, () => openStream(url)));
    opened.push(...results);
    const ok = results.filter((r) => r.status === 200);
    // refused by the per-address cap (429), or, when the burst fills the replica's admission queue
    // before its requests reach the cap, by the queue (503 SERVER_BUSY; one in 1,000 did in a CI run):
    // either way at once, with Retry-After, nothing held
    const statuses: Record<number, number> = {};
    for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    expect(Object.keys(statuses).filter((s) => !['200', '429', '503'].includes(s)), JSON.stringify(statuses)).toEqual([]);
    const refused = results.filter((r) => r.status === 429);
    const shed = results.filter((r) => r.status === 503);
    expect(ok.length).toBe(PER_ADDRESS);
    expect(refused.length + shed.length).toBe(1000 - PER_ADDRESS);
    expect(refused.length).toBeGreaterThan((1000 - PER_ADDRESS) * 0.9);
    for (const r of shed) {
      expect(JSON.parse(await r.body)).toMatchObject({ error: { code: 'SERVER_BUSY' } });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    const body = JSON.parse(await refused[0]!.body) as unknown;
    expect(body).toEqual({ error: { code: 'TOO_MANY_STREAMS', message: expect.any(String) } });
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThan(0);

    // Meanwhile: this server's other routes, and another server on the same PostgreSQL, answer.
    // (The bystander signed up before the streams opened: its sign-up mail is not what this measures.)
    const other = new Browser(server.url);
    expect((await other.fetch('/api/auth/login', { method: 'POST', json: { email: 'bystander@example.com', password: 'long enough pw' }, headers: { 'x-forwarded-for': '192.0.2.9' } })).status).toBe(200);
    expect((await other.fetch(`/api/worlds/${worldId}`)).status).toBe(200);
    expect((await fetch(`${replica.url}/api/library`)).status).toBe(200);
    expect((await fetch(`${replica.url}/health`)).status).toBe(200);
    // A stream of another address is still admitted.
    const elsewhere = await openStream(url, { 'x-forwarded-for': '198.51.100.1' });
    opened.push(elsewhere);
    expect(elsewhere.status).toBe(200);
  });

  it('streams from many addresses stop at the per-process cap with a 503; closed streams give their slots back', async () => {
    const url = `${server.url}/api/worlds/${worldId}/updates/events`;
    const before = opened.filter((o) => o.status === 200).length;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => openStream(url, { 'x-forwarded-for': `203.0.113.${i % 250}` })));
    opened.push(...results);
    const ok = results.filter((r) => r.status === 200).length;
    const full = results.filter((r) => r.status === 503);
    expect(before + ok).toBe(PER_PROCESS);
    expect(full.length).toBe(200 - ok);
    expect(JSON.parse(await full[0]!.body)).toEqual({ error: { code: 'STREAMS_FULL', message: expect.any(String), requestId: expect.any(String) } });
    expect((await fetch(`${replica.url}/api/library`)).status).toBe(200);

    // Closing every stream frees the slots: a new one from the first address opens.
    for (const o of opened) o.request.destroy();
    opened.length = 0;
    await expect
      .poll(async () => {
        const again = await openStream(url);
        opened.push(again);
        return again.status;
      }, { timeout: 10_000, interval: 200 })
      .toBe(200);
  });
});

/**
 * Issue 28, point 3: opening a stream reads through a bounded path. 2,000 streams opened at once
 * from 100 addresses (inside the per-address cap), half of them with a forged login cookie of their
 * own (so that no read can be shared), while the database is slow (an observer holds a lock on
 * `worlds` and `login_sessions` for the first 1.5 s, so a read waits there holding its connection): the server's
 * connections to PostgreSQL, sampled from another observer connection during the burst, stay
 * within the documented bound (docs/OPERATIONS.md: a tenth of DATABASE_POOL_MAX, at least 1, serve
 * streams), and every stream either opens (200 and its `ready` event) or is refused cleanly (503
 * with Retry-After and the JSON error shape), never a 500.
 */
describe('a burst of 2,000 streams from 100 addresses reads through a bounded path', () => {
  const POOL_MAX = 30;
  /** docs/OPERATIONS.md: the connections that serve live update streams, per server process. */
  const STREAM_CONNECTIONS = Math.max(1, Math.floor(POOL_MAX / 10));
  let server: TestServer;
  let sampler: pg.Client;
  let locker: pg.Client;
  let worldId: string;
  const opened: Opened[] = [];

  const observer = async () => {
    const c = new pg.Client({ connectionString: server.database.url, application_name: 'stream-test-observer' });
    c.on('error', () => {});
    await c.connect();
    return c;
  };

  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY: '127.0.0.1', DATABASE_POOL_MAX: String(POOL_MAX) });
    const author = new Browser(server.url);
    await signUp(server, author, { email: 'burst@example.com', password: 'long enough pw' });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/willow-street.json', import.meta.url), 'utf8')) as unknown;
    worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
    expect(((await (await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' })).json()) as { status: string }).status).toBe('published');
    sampler = await observer();
    locker = await observer();
  }, 120_000);
  afterAll(async () => {
    for (const o of opened) o.request.destroy();
    await locker?.end().catch(() => {});
    await sampler?.end().catch(() => {});
    await server?.stop();
  });

  /** The server's connections to its database (every one but the observers'). */
  const serverConnections = async () =>
    (
      await sampler.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name <> 'stream-test-observer'`,
      )
    ).rows[0]!.n;

  it('stays within the documented connections, and every stream is open or refused with 503 and Retry-After', async () => {
    const before = await serverConnections();
    const url = `${server.url}/api/worlds/${worldId}/updates/events`;
    let bursting = true;
    const samples: number[] = [];
    const sampling = (async () => {
      while (bursting) samples.push(await serverConnections());
    })();
    await locker.query('begin');
    await locker.query('lock table worlds, login_sessions in access exclusive mode');
    const burst = Promise.all(
      Array.from({ length: 2000 }, (_, i) => {
        const headers: Record<string, string> = { 'x-forwarded-for': `198.18.${Math.floor(i / 20)}.${(i % 20) + 1}` };
        if (i % 2) headers.cookie = `yumina_session=forged-${i}-${Math.random().toString(36).slice(2)}`;
        return openStream(url, headers).then(async (o) => ({ ...o, ready: o.status === 200 ? await firstEvent(o) : null }));
      }),
    );
    await new Promise((r) => setTimeout(r, 1500));
    await locker.query('commit');
    const results = await burst;
    bursting = false;
    await sampling;
    opened.push(...results);

    const statuses = new Map<number, number>();
    for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const peak = Math.max(before, ...samples);
    console.log(`stream burst: ${JSON.stringify(Object.fromEntries(statuses))}; server connections ${before} before, peak ${peak} (${samples.length} samples), bound ${STREAM_CONNECTIONS} + ${before}`);

    expect([...statuses.keys()].filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(samples.length).toBeGreaterThan(3);
    expect(peak).toBeLessThanOrEqual(before + STREAM_CONNECTIONS);
    for (const r of results) {
      if (r.status === 200) {
        expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(r.ready).toBe('ready');
      } else {
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
        const body = JSON.parse(await r.body) as { error: { code: string; message: string } };
        expect(body).toEqual({ error: { code: expect.any(String), message: expect.any(String), requestId: expect.any(String) } });
      }
    }
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
  }, 60_000);
});
