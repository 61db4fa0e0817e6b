import autocannon from 'autocannon';
import Fastify from 'fastify';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { buildApp } from '../containers/api/src/app.ts';
import { contextFor } from '../tests/support/context.ts';
import { freePort } from '../tests/support/redis.ts';

/**
 * Issue 4: GET /health/live throughput and p99 under load on loopback with the database stopped,
 * side by side with a bare Fastify hello route. Goal ≥ 0.9× the bare route's throughput.
 * autocannon's figures are printed as a table; vitest's rows time single requests.
 */
let liveUrl = '';
let helloUrl = '';
const closers: (() => Promise<unknown>)[] = [];

function load(url: string, duration = 2): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 32, duration, pipelining: 1 }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

beforeAll(async () => {
  const ctx = await contextFor({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/stopped` });
  const app = await buildApp(ctx, { web: false });
  liveUrl = `${await app.listen({ port: 0, host: '127.0.0.1' })}/health/live`;
  const bare = Fastify();
  bare.get('/hello', async () => ({ hello: 'world' }));
  helloUrl = `${await bare.listen({ port: 0, host: '127.0.0.1' })}/hello`;
  closers.push(() => app.close(), () => bare.close(), () => ctx.db.close());

  // Three interleaved rounds (live, bare, live, bare, …); the median round of each is reported.
  await load(liveUrl, 1);
  await load(helloUrl, 1);
  const lives: autocannon.Result[] = [];
  const hellos: autocannon.Result[] = [];
  for (let i = 0; i < 3; i++) {
    lives.push(await load(liveUrl));
    hellos.push(await load(helloUrl));
  }
  const median = (rs: autocannon.Result[]) => [...rs].sort((a, b) => a.requests.average - b.requests.average)[1]!;
  const live = median(lives);
  const hello = median(hellos);
  const ratio = live.requests.average / hello.requests.average;
  console.log(
    [
      '',
      'health: autocannon, 32 connections, 3 interleaved rounds of 2 s, database stopped (median round)',
      `  GET /health/live (container)  ${live.requests.average.toFixed(0)} req/s  p99 ${live.latency.p99} ms  errors ${lives.reduce((n, r) => n + r.errors + r.non2xx, 0)}`,
      `  GET /hello (bare Fastify)     ${hello.requests.average.toFixed(0)} req/s  p99 ${hello.latency.p99} ms`,
      `  ratio live/bare throughput: ${ratio.toFixed(2)}× (goal ≥ 0.90×)`,
      '',
    ].join('\n'),
  );
}, 60_000);

afterAll(async () => {
  for (const close of closers) await close();
});

describe('health: one request on loopback (database stopped)', () => {
  bench('GET /health/live (container)', async () => {
    await (await fetch(liveUrl)).arrayBuffer();
  }, { time: 2000 });
  bench('GET /hello (bare Fastify, baseline)', async () => {
    await (await fetch(helloUrl)).arrayBuffer();
  }, { time: 2000 });
});
