import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { messageView, sessionMessages, sessionView } from '../containers/api/src/conversations/model.ts';
import { fillLongSession } from '../tests/support/long-session.ts';
import { Browser, startTestServer, type TestServer } from '../tests/support/server.ts';
import { benchSignUp } from './sign-up.ts';

/**
 * Issue 24 benchmark: opening a 2,000-message session (`GET /api/sessions/:id`, real PostgreSQL),
 * the first page (the newest 50 messages, swipes only on the newest) against today's answer
 * before the issue (every message with every column, swipes included: kept below as the baseline,
 * through the same pool and serialization, without HTTP). Goal: the first page ≤ 100 KB and
 * ≤ 10 ms p50 through HTTP.
 */
let server: TestServer;
let player: Browser;
let sessionId = '';
let accountId = '';

/** Today's answer before issue 24: the whole session. */
async function wholeSession(): Promise<string> {
  const db = server.ctx.db.primary;
  const { rows } = await db.query('select * from chat_sessions where id = $1 and account_id = $2', [sessionId, accountId]);
  return JSON.stringify({ session: sessionView(rows[0] as never), messages: (await sessionMessages(db, sessionId)).map(messageView) });
}
const firstPage = async () => (await player.fetch(`/api/sessions/${sessionId}`)).text();

async function p50(fn: () => Promise<unknown>, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

beforeAll(async () => {
  server = await startTestServer({}, { redis: false });
  player = new Browser(server.url);
  await benchSignUp(server, player, { email: `bench-${Date.now()}@example.com` });
  const world = JSON.parse(readFileSync(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
  const created = (await (await player.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string };
  const session = (await (await player.fetch(`/api/worlds/${created.id}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
  sessionId = session.session.id;
  accountId = ((await server.ctx.db.primary.query<{ account_id: string }>('select account_id from chat_sessions where id = $1', [sessionId])).rows[0]!).account_id;
  await fillLongSession(server.ctx.db.primary, sessionId, 2000);
  await server.ctx.db.primary.query('vacuum analyze chat_messages');

  const pageBytes = Buffer.byteLength(await firstPage());
  const wholeBytes = Buffer.byteLength(await wholeSession());
  await p50(firstPage, 20);
  await p50(wholeSession, 5);
  const ratios: number[] = [];
  const times: [number, number][] = [];
  for (let i = 0; i < 5; i++) {
    const page = await p50(firstPage, 40);
    const whole = await p50(wholeSession, 5);
    ratios.push(whole / page);
    times.push([page, whole]);
  }
  const median = [...ratios].sort((a, b) => a - b)[2]!;
  const [page, whole] = times[ratios.indexOf(median)]!;
  console.log(
    `\nsession-history: first page of a 2,000-message session ${(pageBytes / 1024).toFixed(1)} KB (goal ≤ 100 KB) vs the whole session ${(wholeBytes / 1024 / 1024).toFixed(2)} MB; ` +
      `p50 ${page.toFixed(2)} ms through HTTP (goal ≤ 10 ms) vs ${whole.toFixed(1)} ms for the whole session without HTTP: ${median.toFixed(1)}× faster (median of 5 interleaved rounds)\n`,
  );
}, 300_000);

afterAll(async () => server?.stop());

describe('opening a 2,000-message session', () => {
  bench('first page, newest 50 (HTTP)', async () => void (await firstPage()), { time: 2000, warmupTime: 200 });
  bench('whole session, every message (baseline, no HTTP)', async () => void (await wholeSession()), { time: 2000, warmupTime: 200 });
});
