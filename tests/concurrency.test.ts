import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@yumina/config';
import { DbQueryTimeoutError, withDeadline } from '@yumina/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../containers/api/src/server.ts';
import { parseEvents } from './support/collector.ts';
import { type FakeOpenAi, startFakeOpenAi } from './support/fake-openai.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { sharedRedisUrl, testPrefix } from './support/redis.ts';
import { Browser } from './support/server.ts';
import { signUp as signUpAccount } from './support/sign-up.ts';

/**
 * Many players at once, through the HTTP API of a real server, on both backends: the embedded
 * default (`npm start` with no DATABASE_URL and no REDIS_URL: PGlite in its child process behind
 * the wire protocol, the in-memory store) and real PostgreSQL with Redis. Nothing may fail, be
 * lost, or carry another request's data.
 */

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

interface Backend {
  name: string;
  /** Environment of the server beyond the common part, and what to clean up after. */
  prepare(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'the embedded default (PGlite behind its socket layer, in-memory store)',
    prepare: async () => ({ env: {}, cleanup: async () => {} }),
  },
  {
    name: 'real PostgreSQL and Redis',
    async prepare() {
      const database: TestDatabase = await createTestDatabase({ migrated: true });
      return {
        env: { DATABASE_URL: database.url, REDIS_URL: sharedRedisUrl, REDIS_KEY_PREFIX: testPrefix() },
        cleanup: () => database.drop(),
      };
    },
  },
];

/** A player's message in the turn test: `p<player>s<session> turn <round>`. */
const TURN = /^p\d+s\d+ turn \d+$/;

interface Account {
  id: string;
  email: string;
}

/** A failed request as a readable line, so a failing expectation names what went wrong. */
async function outcome(res: Response): Promise<string> {
  return `${res.status} ${res.ok ? "" : (await res.text()).slice(0, 300)}`.trim();
}

for (const backend of backends) {
  describe(`many players at once on ${backend.name}`, () => {
    let server: RunningServer;
    let provider: FakeOpenAi;
    let dataDir: string;
    let cleanup: () => Promise<void> = async () => {};
    let run = 0;
    const unique = () => `${Date.now().toString(36)}-${(run++).toString(36)}`;

    async function signUp(label: string): Promise<{ player: Browser; account: Account; res: string }> {
      const player = new Browser(server.url);
      const email = `${label}-${unique()}@example.com`;
      // The sign-up answers 202; the account is made (and the browser signed in) by following the mailed link.
      const res = await signUpAccount({ url: server.url, dataDir }, player, { email, password: 'long enough pw' }).catch((err: Error) => err);
      if (res instanceof Error) return { player, account: { id: '', email }, res: res.message };
      return { player, account: res.account as Account, res: String(res.status) };
    }

    beforeAll(async () => {
      provider = await startFakeOpenAi({ apiKey: null });
      // Each reply names the user message it answers, so a reply written into the wrong conversation shows.
      provider.setHandler((body) => {
        const messages = body.messages as { role: string; content: string }[];
        const last = messages.filter((m) => m.role === 'user' && TURN.test(m.content)).at(-1)?.content ?? '';
        return { kind: 'completion', content: `Reply to «${last}». The corridor narrows.`, chunks: 3, usage: { prompt_tokens: 30, completion_tokens: 8 } };
      });
      const prepared = await backend.prepare();
      cleanup = prepared.cleanup;
      dataDir = mkdtempSync(join(tmpdir(), 'yumina-concurrency-'));
      // On the shared PostgreSQL a pool of 20 (not the production 100) keeps the other suites' connections free.
      const pools = prepared.env.DATABASE_URL ? { DATABASE_POOL_MAX: '20', DATABASE_READ_POOL_MAX: '10' } : {};
      // Every player signs up from 127.0.0.1: the per-address sign-up limit is not what this suite measures.
      // Nor is admission (containers/api/src/admission.test.ts and the overload bench are): with the default 2 s wait, a burst of 50 turns on
      // a machine busy with other suites had turns refused with SERVER_BUSY, which this suite would
      // count as lost turns; here every turn waits for its slot as long as the test allows, and the
      // turn gate's saturated-loop refusal is off (the 50 turns at once keep this process's loop busy).
      const config = loadConfig({
        PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'fatal', DATA_DIR: dataDir, SIGNUP_RATE_LIMIT_PER_HOUR: '100000', PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: '100000',
        ADMISSION_MAX_WAIT_MS: '25000', ADMISSION_MAX_LOOP_UTILIZATION: '100', ...pools, ...prepared.env,
      });
      server = await startServer(config, { web: false });
      expect(server.ctx.db.kind).toBe(prepared.env.DATABASE_URL ? 'postgres' : 'embedded');
    }, 180_000);

    afterAll(async () => {
      await server?.close();
      await provider?.close();
      await cleanup();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('20 parallel signups all succeed, then 3 rounds of 20 parallel session reads each read their own account', async () => {
      const players = await Promise.all(Array.from({ length: 20 }, (_, i) => signUp(`signup${i}`)));
      expect(players.map((p) => p.res)).toEqual(Array(20).fill('201'));
      expect(new Set(players.map((p) => p.account.id)).size).toBe(20);
      for (let round = 0; round < 3; round++) {
        const reads = await Promise.all(
          players.map(async ({ player, account }) => {
            const res = await player.fetch('/api/auth/session');
            if (res.status !== 200) return { expected: account.id, got: await outcome(res) };
            const body = (await res.json()) as { account: Account | null };
            return { expected: `${account.id} ${account.email}`, got: body.account ? `${body.account.id} ${body.account.email}` : 'signed out' };
          }),
        );
        expect(reads.map((r) => r.got)).toEqual(reads.map((r) => r.expected));
      }
    }, 120_000);

    it('50 concurrent turns, three times over: zero errors, every reply complete, every history gap-free and in order', async () => {
      // Ten players with their own provider connection and world, five conversations each.
      const players = await Promise.all(Array.from({ length: 10 }, (_, i) => signUp(`turns${i}`)));
      expect(players.map((p) => p.res)).toEqual(Array(10).fill('201'));
      const sessions: { player: Browser; id: string; label: string }[] = [];
      await Promise.all(
        players.map(async ({ player }, p) => {
          const ai = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'any-key' } });
          expect(await outcome(ai)).toBe('200');
          const world = await player.fetch('/api/worlds', { method: 'POST', json: { world: sample('ashen-depths') } });
          expect(world.status).toBe(201);
          const worldId = ((await world.json()) as { id: string }).id;
          for (let s = 0; s < 5; s++) {
            const created = await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' });
            expect(created.status).toBe(201);
            sessions.push({ player, id: ((await created.json()) as { session: { id: string } }).session.id, label: `p${p}s${s}` });
          }
        }),
      );
      expect(sessions).toHaveLength(50);

      const rounds = 3;
      for (let round = 1; round <= rounds; round++) {
        const results = await Promise.all(
          sessions.map(async ({ player, id, label }) => {
            const content = `${label} turn ${round}`;
            const res = await player.fetch(`/api/sessions/${id}/messages`, { method: 'POST', json: { content } });
            if (res.status !== 200) return `${label}: ${await outcome(res)}`;
            const events = parseEvents(await res.text());
            const last = events.at(-1);
            if (last?.event !== 'done') return `${label}: ended with ${JSON.stringify(last).slice(0, 300)}`;
            const message = last.data.message as { content: string; status: string };
            if (message.status !== 'complete' || message.content !== `Reply to «${content}». The corridor narrows.`) {
              return `${label}: done with ${message.status} «${message.content.slice(0, 100)}»`;
            }
            return `${label}: ok`;
          }),
        );
        expect(results).toEqual(sessions.map((s) => `${s.label}: ok`));
      }

      // Every conversation, read back: exactly its own turns, positions 0..n-1, every message complete.
      const histories = await Promise.all(
        sessions.map(async ({ player, id }) => {
          const res = await player.fetch(`/api/sessions/${id}`);
          expect(res.status).toBe(200);
          return (await res.json()) as { session: { messageCount: number }; messages: { position: number; role: string; content: string; status: string }[] };
        }),
      );
      // The sample opens with its greeting (issue 44): position 0, before the turns.
      const greeting = (sample('ashen-depths') as { entries: { role: string }[] }).entries.some((e) => e.role === 'greeting') ? 1 : 0;
      histories.forEach((history, i) => {
        const { label } = sessions[i]!;
        const expected = Array.from({ length: rounds }, (_, r) => [
          { position: greeting + 2 * r, role: 'user', content: `${label} turn ${r + 1}`, status: 'complete' },
          { position: greeting + 2 * r + 1, role: 'assistant', content: `Reply to «${label} turn ${r + 1}». The corridor narrows.`, status: 'complete' },
        ]).flat();
        expect(history.messages.slice(0, greeting).map((m) => [m.position, m.role, m.status])).toEqual(greeting ? [[0, 'assistant', 'complete']] : []);
        expect(history.messages.slice(greeting).map(({ position, role, content, status }) => ({ position, role, content, status }))).toEqual(expected);
        expect(history.session.messageCount).toBe(greeting + 2 * rounds);
      });
      // Each provider request carried one conversation's own history and nothing of another's.
      for (const request of provider.completions) {
        const turns = (request.body!.messages as { role: string; content: string }[]).map((m) => m.content).filter((c) => /p\d+s\d+ turn \d+/.test(c));
        const label = /^(p\d+s\d+) turn/.exec(turns.at(-1) ?? '')?.[1];
        expect(label).toBeDefined();
        // Earlier replies quote their own turns, so every mention belongs to the same conversation.
        expect(turns.filter((c) => !c.includes(`${label} turn `))).toEqual([]);
      }
    }, 300_000);

    it('a transaction killed by its deadline leaves no other request’s statement inside it', async () => {
      const db = server.ctx.db.primary;
      await db.query('create table if not exists concurrency_probe (id text primary key)');
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const killed = withDeadline(1_000, () =>
        db.transaction(async (tx) => {
          await tx.query(`insert into concurrency_probe (id) values ('killed')`);
          opened();
          await tx.query('select pg_sleep(3)');
          await tx.query(`insert into concurrency_probe (id) values ('after the sleep')`);
        }),
      );
      const failure = killed.then(
        () => null,
        (err: unknown) => err,
      );
      await open;
      // Other requests arrive while the transaction is open and while it is being killed.
      const players = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * 150));
          return signUp(`beside${i}`);
        }),
      );
      expect(await failure).toBeInstanceOf(DbQueryTimeoutError);
      expect(players.map((p) => p.res)).toEqual(Array(10).fill('201'));
      // Everything the other requests wrote is committed; nothing of the killed transaction is.
      const { rows } = await db.query<{ id: string }>('select id from accounts where id = any($1::text[])', [players.map((p) => p.account.id)]);
      expect(rows.map((r) => r.id).sort()).toEqual(players.map((p) => p.account.id).sort());
      for (const { player, account } of players) {
        const res = await player.fetch('/api/auth/session');
        expect(((await res.json()) as { account: Account | null }).account?.id).toBe(account.id);
      }
      expect((await db.query('select id from concurrency_probe')).rows).toEqual([]);
      // And the database serves on normally afterwards.
      expect((await db.query<{ n: number }>('select 1 as n')).rows).toEqual([{ n: 1 }]);
    }, 120_000);
  });
}
