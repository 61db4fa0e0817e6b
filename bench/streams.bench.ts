import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../tests/support/server.ts';
import { benchSignUp } from './sign-up.ts';

/**
 * Issue 24 benchmark: 10,000 idle live update overviews (GET /api/worlds/:id/updates/events) on one
 * replica, real PostgreSQL and Redis, the clients in a process of their own (./stream-clients.ts).
 * Reports the server's RSS growth per open stream (goal ≤ 20 KB), its PostgreSQL connections
 * before and with the streams open (goal: no growth: an idle stream holds none), and how long a
 * published update record takes to reach all of them (goal ≤ 2 s).
 * Before issue 24 every stream polled the work every 5 s and read each record itself.
 */
const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
let server: TestServer;
let clients: ChildProcess;
let worldId = '';
let author: Browser;

const next = (child: ChildProcess, type: string) =>
  new Promise<Record<string, unknown>>((resolve, reject) => {
    const on = (m: Record<string, unknown>) => {
      if (m.type === type) {
        child.off('message', on);
        resolve(m);
      } else if (m.type === 'error') reject(new Error(String(m.message)));
    };
    child.on('message', on);
  });
const connections = async () =>
  Number((await server.ctx.db.primary.query<{ n: string }>(`select count(*) as n from pg_stat_activity where datname = current_database()`)).rows[0]!.n);
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  // One address opens them all (the caps would refuse the 21st); the production pool size, so that
  // the connections serving streams are the production share of it (docs/OPERATIONS.md: 10).
  server = await startTestServer({
    EVENT_STREAMS_PER_ADDRESS: String(STREAMS + 1000),
    EVENT_STREAMS_PER_PROCESS: String(STREAMS + 1000),
    DATABASE_POOL_MAX: '100',
  });
  await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
  author = new Browser(server.url);
  await benchSignUp(server, author, { email: `streams-${Date.now()}@example.com` });
  const world = JSON.parse(readFileSync(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
  worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
  await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' });

  clients = fork(fileURLToPath(new URL('./stream-clients.ts', import.meta.url)), { execArgv: ['--import', 'tsx'] });
  await settle(1000);
  const connectionsBefore = await connections();
  const rssBefore = process.memoryUsage().rss;
  const t = performance.now();
  clients.send({ type: 'start', url: `${server.url}/api/worlds/${worldId}/updates/events`, count: STREAMS });
  const ready = await next(clients, 'ready');
  const openMs = performance.now() - t;
  const connectionsOpening = await connections();
  // Idle: past the pool's idle timeout (30 s), six status polls and two heartbeats.
  await settle(35_000);
  const rssAfter = process.memoryUsage().rss;
  const connectionsAfter = await connections();

  clients.send({ type: 'arm' });
  await next(clients, 'armed');
  const receivedP = next(clients, 'received');
  const published = await author.fetch(`/api/worlds/${worldId}/updates`, { method: 'POST', json: { title: 'For everyone', content: 'hello', isMajor: false, notifyPlayers: false } });
  if (published.status !== 201 && published.status !== 200) throw new Error(`publish: ${published.status}`);
  const received = await receivedP;
  console.log(
    `\nstreams: ${String(ready.count)} idle update overviews on one replica (opened in ${(openMs / 1000).toFixed(1)} s): ` +
      `RSS +${((rssAfter - rssBefore) / 1024 / 1024).toFixed(1)} MB = ${((rssAfter - rssBefore) / 1024 / Number(ready.count)).toFixed(1)} KB per stream (goal ≤ 20 KB); ` +
      `PostgreSQL connections of the test database: ${connectionsBefore} before, ${connectionsOpening} right after opening them (the burst of opening reads), ${connectionsAfter} with them open and idle (goal: back at the idle size); ` +
      `a published record reached all ${String(received.count)} in ${(Number(received.ms) / 1000).toFixed(2)} s (goal ≤ 2 s)\n`,
  );
}, 600_000);

afterAll(async () => {
  clients?.send({ type: 'stop' });
  await settle(500);
  await server?.stop();
});

describe('live update overviews', () => {
  bench('open one more overview until ready (HTTP)', async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}/api/worlds/${worldId}/updates/events`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
  }, { time: 1000, warmupTime: 100 });
});
