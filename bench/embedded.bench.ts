import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@yumina/config';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { type RunningServer, startServer } from '../containers/api/src/server.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../tests/support/fake-openai.ts';
import { createTestDatabase, type TestDatabase } from '../tests/support/postgres.ts';
import { Browser } from '../tests/support/server.ts';
import { benchSignUp } from './sign-up.ts';

/**
 * Issue 17: one turn through the HTTP API (send a message, read the streamed reply to its end)
 * on the embedded default (PGlite behind its socket layer) beside real PostgreSQL, at concurrency
 * 1 and 10 (ten players' turns at once, each in its own conversation). Both servers use the
 * in-memory store and the same loopback provider, so the database is the only difference.
 * Goal: embedded at concurrency 10 within 3× of PostgreSQL's time per turn, same run.
 * The ratio comes from interleaved rounds on fresh conversations (printed as `embedded:` lines);
 * vitest's rows time single iterations of the same work.
 */
const PLAYERS = 10;
const sample = JSON.parse(readFileSync(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

interface Side {
  name: string;
  server: RunningServer;
  players: { browser: Browser; worldId: string }[];
  /** Conversations the vitest rows cycle through, so no history grows long. */
  ring: { browser: Browser; id: string }[][];
  next: number;
  close(): Promise<void>;
}

let provider: FakeOpenAi;
const sides: Record<'embedded' | 'postgres', Side> = {} as never;

async function startSide(name: string, env: Record<string, string>, close: () => Promise<void>): Promise<Side> {
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-bench-embedded-'));
  const server = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'fatal', DATA_DIR: dataDir, ...env }), { web: false });
  const players = await Promise.all(
    Array.from({ length: PLAYERS }, async (_, i) => {
      const browser = new Browser(server.url);
      await benchSignUp({ url: server.url, dataDir }, browser, { email: `bench${i}-${Date.now()}@example.com` });
      await browser.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'any-key' } });
      const world = await browser.fetch('/api/worlds', { method: 'POST', json: { world: sample } });
      return { browser, worldId: ((await world.json()) as { id: string }).id };
    }),
  );
  const side: Side = {
    name,
    server,
    players,
    ring: [],
    next: 0,
    async close() {
      await server.close();
      await close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < 20; i++) side.ring.push(await conversations(side, PLAYERS));
  return side;
}

/** One fresh conversation for each of the first `count` players. */
function conversations(side: Side, count: number): Promise<{ browser: Browser; id: string }[]> {
  return Promise.all(
    side.players.slice(0, count).map(async ({ browser, worldId }) => {
      const res = await browser.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' });
      return { browser, id: ((await res.json()) as { session: { id: string } }).session.id };
    }),
  );
}

/** One turn: the message is sent and the reply read to its end; anything but `done` is an error. */
async function turn(browser: Browser, sessionId: string): Promise<void> {
  const res = await browser.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I walk on.' } });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('event: done')) throw new Error(`turn failed: ${res.status} ${text.slice(-300)}`);
}

/** `turns` turns in each of the conversations at once; returns the wall time per turn in ms. */
async function round(list: { browser: Browser; id: string }[], turns: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    list.map(async ({ browser, id }) => {
      for (let i = 0; i < turns; i++) await turn(browser, id);
    }),
  );
  return (performance.now() - started) / (list.length * turns);
}

function nextConversations(side: Side, count: number) {
  const list = side.ring[side.next++ % side.ring.length]!;
  return list.slice(0, count);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

beforeAll(async () => {
  provider = await startFakeOpenAi({ apiKey: null });
  provider.setHandler(() => ({ kind: 'completion', content: 'The corridor narrows. A draught smells of ash. [gold: +1]', chunks: 3, usage: { prompt_tokens: 30, completion_tokens: 12 } }));
  const database: TestDatabase = await createTestDatabase();
  sides.embedded = await startSide('embedded', {}, async () => {});
  sides.postgres = await startSide('postgres', { DATABASE_URL: database.url }, () => database.drop());

  // Interleaved rounds (embedded, PostgreSQL, then the other way round) on fresh conversations.
  const lines = ['', 'embedded: one turn through the HTTP API, wall time per turn (median of 6 interleaved rounds, 4 turns per conversation)'];
  for (const concurrency of [1, 10]) {
    await round(await conversations(sides.embedded, concurrency), 2);
    await round(await conversations(sides.postgres, concurrency), 2);
    const embedded: number[] = [];
    const postgres: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < 6; r++) {
      const e = await conversations(sides.embedded, concurrency);
      const p = await conversations(sides.postgres, concurrency);
      let te: number;
      let tp: number;
      if (r % 2) {
        tp = await round(p, 4);
        te = await round(e, 4);
      } else {
        te = await round(e, 4);
        tp = await round(p, 4);
      }
      embedded.push(te);
      postgres.push(tp);
      ratios.push(te / tp);
    }
    lines.push(
      `  concurrency ${String(concurrency).padStart(2)}: embedded ${median(embedded).toFixed(1)} ms, PostgreSQL ${median(postgres).toFixed(1)} ms per turn; embedded/PostgreSQL ${median(ratios).toFixed(2)}×${concurrency === 10 ? ' (goal ≤ 3×)' : ''}`,
    );
  }
  console.log(`${lines.join('\n')}\n`);
}, 600_000);

afterAll(async () => {
  await sides.embedded?.close();
  await sides.postgres?.close();
  await provider?.close();
});

for (const concurrency of [1, 10]) {
  describe(`embedded: one turn through the HTTP API, concurrency ${concurrency}`, () => {
    bench(
      'embedded default (PGlite behind its socket layer)',
      async () => {
        await round(nextConversations(sides.embedded, concurrency), 1);
      },
      { time: 3000, warmupTime: 500 },
    );
    bench(
      'real PostgreSQL (baseline)',
      async () => {
        await round(nextConversations(sides.postgres, concurrency), 1);
      },
      { time: 3000, warmupTime: 500 },
    );
  });
}
