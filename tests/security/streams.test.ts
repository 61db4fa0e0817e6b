import { type ClientRequest, get, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@yumina/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../containers/api/src/server.ts';
import { sharedRedisUrl, testPrefix } from '../support/redis.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';

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
      resolve({ status: res.statusCode!, headers: res.headers, body, request });
    });
    request.on('error', reject);
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
    await author.fetch('/api/auth/signup', { method: 'POST', json: { email: 'streams@example.com', password: 'long enough pw' } });
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
    const refused = results.filter((r) => r.status === 429);
    expect(ok.length).toBe(PER_ADDRESS);
    expect(refused.length).toBe(1000 - PER_ADDRESS);
    const body = JSON.parse(await refused[0]!.body) as unknown;
    expect(body).toEqual({ error: { code: 'TOO_MANY_STREAMS', message: expect.any(String) } });
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThan(0);

    // Meanwhile: this server's other routes, and another server on the same PostgreSQL, answer.
    const other = new Browser(server.url);
    expect((await other.fetch('/api/auth/signup', { method: 'POST', headers: { 'x-forwarded-for': '192.0.2.9' }, json: { email: 'bystander@example.com', password: 'long enough pw' } })).status).toBe(201);
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
