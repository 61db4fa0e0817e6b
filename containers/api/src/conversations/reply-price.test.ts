import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../../../../tests/support/fake-anthropic.ts';
import { type FakeGemini, startFakeGemini } from '../../../../tests/support/fake-gemini.ts';
import { type FakeOpenAi, type FakeReply, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

/**
 * Issue 47 point 4, through the HTTP API on real PostgreSQL and Redis: a turn on the platform's
 * provider of each kind (OpenAI-compatible, Anthropic, Gemini, each a loopback fake speaking its
 * wire protocol) records the prompt's tokens, those read from and written to the provider's cache,
 * the reply's tokens and the credits charged at the price table's price of each kind of token; the
 * credits equal the credit ledger's charges; the reply and the session's total show the same
 * figures. On a player's own key the reply is not charged and shows the platform's estimate.
 */

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

// credits per million tokens: fresh input 3000, cache read 300, cache write 3750, output 15000
const PRICE = { input: 3000, cacheRead: 300, cacheWrite: 3750, output: 15000 };
const credits = (fresh: number, read: number, written: number, out: number) =>
  Math.max(1, Math.ceil((fresh * PRICE.input + read * PRICE.cacheRead + written * PRICE.cacheWrite + out * PRICE.output) / 1_000_000));

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

async function sse(res: Response): Promise<SseEvent[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => ({ event: /^event: (.+)$/m.exec(block)?.[1] ?? 'message', data: JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown> }));
}

interface Reply {
  role: string;
  tokenCount: number;
  promptTokens: number;
  cachedTokens: number | null;
  cacheWriteTokens: number | null;
  creditsCharged: number | null;
  creditsEstimate: number | null;
}
interface Spent {
  replies: number;
  tokensIn: number;
  cachedTokens: number;
  tokensOut: number;
  credits: number;
  creditsEstimate: number;
}

/** One turn's usage as each fake reports it, and what it means: prompt (all of it), of it read and written, reply. */
interface Case {
  kind: 'openai' | 'anthropic' | 'gemini';
  model: string;
  first: Turn;
  second: Turn;
}
/** `shown`: the reply's cachedTokens and cacheWriteTokens as the provider reported them (null: not reported). */
interface Turn {
  reply: unknown;
  prompt: number;
  read: number;
  written: number;
  out: number;
  shown: [number | null, number | null];
}

const cases: Case[] = [
  {
    kind: 'openai',
    model: 'platform/gpt-priced',
    first: {
      reply: { kind: 'completion', content: 'The lantern flickers. [gold: +1]', usage: { prompt_tokens: 2000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 1800 } } },
      prompt: 2000,
      read: 0,
      written: 1800,
      out: 100,
      shown: [0, 1800],
    },
    second: {
      reply: { kind: 'completion', content: 'A draft from below.', usage: { prompt_tokens: 2100, completion_tokens: 60, prompt_tokens_details: { cached_tokens: 1800 } } },
      prompt: 2100,
      read: 1800,
      written: 0,
      out: 60,
      shown: [1800, null],
    },
  },
  {
    kind: 'anthropic',
    model: 'claude-priced',
    // Anthropic's input_tokens counts only what follows the cache: the prompt is all three parts
    first: { reply: { kind: 'completion', content: 'The lantern flickers. [gold: +1]', usage: { input: 200, output: 100, cacheWrite: 1800 } }, prompt: 2000, read: 0, written: 1800, out: 100, shown: [0, 1800] },
    second: { reply: { kind: 'completion', content: 'A draft from below.', usage: { input: 300, output: 60, cacheRead: 1800 } }, prompt: 2100, read: 1800, written: 0, out: 60, shown: [1800, 0] },
  },
  {
    kind: 'gemini',
    model: 'gemini-priced',
    // Gemini's promptTokenCount counts the cached part too
    first: { reply: { kind: 'completion', content: 'The lantern flickers. [gold: +1]', usage: { input: 2000, output: 100 } }, prompt: 2000, read: 0, written: 0, out: 100, shown: [null, null] },
    second: { reply: { kind: 'completion', content: 'A draft from below.', usage: { input: 2100, output: 60, cacheRead: 1800 } }, prompt: 2100, read: 1800, written: 0, out: 60, shown: [1800, null] },
  },
];

for (const c of cases) {
  describe(`the price of a reply on the platform's ${c.kind} provider`, () => {
    let server: TestServer;
    let fake: { url: string; enqueue(...r: never[]): void; close(): Promise<void> };
    let own: FakeOpenAi;

    beforeAll(async () => {
      const models = [{ id: c.model, name: c.model }];
      const started: FakeOpenAi | FakeAnthropic | FakeGemini =
        c.kind === 'openai'
          ? await startFakeOpenAi({ apiKey: 'platform-key', models: [{ id: c.model, name: c.model, context_length: 128000 }] })
          : c.kind === 'anthropic'
            ? await startFakeAnthropic({ apiKey: 'platform-key', models })
            : await startFakeGemini({ apiKey: 'platform-key', models });
      fake = started as unknown as typeof fake;
      own = await startFakeOpenAi({ apiKey: 'sk-own-key', models: [{ id: 'gpt-own-priced' }, { id: 'gpt-unpriced' }] });
      server = await startTestServer({
        OFFICIAL_AI_BASE_URL: started.url,
        OFFICIAL_AI_API_KEY: 'platform-key',
        OFFICIAL_AI_KIND: c.kind,
        OFFICIAL_AI_MODEL: c.model,
        WELCOME_CREDITS: '500',
        // the platform's model, and a model a player's own key may use (its estimate is shown)
        AI_PRICES: JSON.stringify({ [c.model]: PRICE, 'gpt-own-priced': PRICE }),
      });
    });
    afterAll(async () => {
      await server?.stop();
      await Promise.all([fake?.close(), own?.close()]);
    });

    async function player(name: string) {
      const b = new Browser(server.url);
      const email = `${name}-${Date.now()}@example.com`;
      await signUp(server, b, { email, password: 'long enough pw', username: name.replace(/-/g, '_') });
      const w = await b.fetch('/api/worlds', { method: 'POST', json: { world: sample('ashen-depths') } });
      const worldId = ((await w.json()) as { id: string }).id;
      const s = (await (await b.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
      const { rows } = await server.ctx.db.primary.query<{ id: string }>('select id from accounts where email = $1', [email]);
      return { b, accountId: rows[0]!.id, sessionId: s.session.id };
    }
    const session = async (b: Browser, id: string) => (await (await b.fetch(`/api/sessions/${id}`)).json()) as { session: { spent: Spent }; messages: Reply[] };

    it('records prompt, cached, cache-write and reply tokens and the credits at the model’s price; credits equal the ledger; the reply and the session total say the same', async () => {
      const { b, accountId, sessionId } = await player(`price-${c.kind}`);
      const turns = [c.first, c.second];
      for (const [i, turn] of turns.entries()) {
        fake.enqueue(turn.reply as never);
        const events = await sse(await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: `I look around (${i})` } }));
        expect(events.at(-1)!.event).toBe('done');
        const expected = credits(turn.prompt - turn.read - turn.written, turn.read, turn.written, turn.out);
        // the streamed reply carries its figures
        expect((events.at(-1)!.data.message as Reply)).toMatchObject({ promptTokens: turn.prompt, cachedTokens: turn.shown[0], cacheWriteTokens: turn.shown[1], tokenCount: turn.out, creditsCharged: expected, creditsEstimate: null });
      }
      const expected = turns.map((t) => credits(t.prompt - t.read - t.written, t.read, t.written, t.out));
      // the cache discount is real: the second turn costs less than its prompt at the input price
      expect(expected[1]).toBeLessThan(credits(c.second.prompt, 0, 0, c.second.out));

      // the usage ledger: one row per call with its cache figures and its credits
      const usage = await server.ctx.db.primary.query<{ tokens_in: number; cached_tokens_in: number; cache_write_tokens_in: number; tokens_out: number; credits: string; billing_source: string }>(
        `select tokens_in, cached_tokens_in, cache_write_tokens_in, tokens_out, credits::text, billing_source from usage_ledger where account_id = $1 order by id`,
        [accountId],
      );
      expect(usage.rows).toEqual(
        turns.map((t, i) => ({ tokens_in: t.prompt, cached_tokens_in: t.read, cache_write_tokens_in: t.written, tokens_out: t.out, credits: String(expected[i]), billing_source: 'official' })),
      );
      // credits equal the ledger: what usage says it cost is what the credit ledger charged, and the balance moved by exactly that
      const ledger = await server.ctx.db.primary.query<{ charged: string; granted: string }>(
        `select coalesce(-sum(amount) filter (where kind = 'charge'), 0)::text as charged, coalesce(sum(amount) filter (where kind = 'grant'), 0)::text as granted from credit_ledger where account_id = $1`,
        [accountId],
      );
      const total = expected[0]! + expected[1]!;
      expect(Number(ledger.rows[0]!.charged)).toBe(total);
      const balance = await server.ctx.db.primary.query<{ credits: string }>('select credits::text from billing_accounts where account_id = $1', [accountId]);
      expect(Number(balance.rows[0]!.credits)).toBe(Number(ledger.rows[0]!.granted) - total);

      // the player's view: each reply and the session's total
      const read = await session(b, sessionId);
      const replies = read.messages.filter((m) => m.role === 'assistant' && m.promptTokens !== null);
      expect(replies.map((m) => [m.promptTokens, m.cachedTokens, m.cacheWriteTokens, m.tokenCount, m.creditsCharged])).toEqual(
        turns.map((t, i) => [t.prompt, t.shown[0], t.shown[1], t.out, expected[i]]),
      );
      expect(read.session.spent).toEqual({
        replies: 2,
        tokensIn: c.first.prompt + c.second.prompt,
        cachedTokens: c.first.read + c.second.read,
        tokensOut: c.first.out + c.second.out,
        credits: total,
        creditsEstimate: 0,
      });

      // a regenerated reply is charged again: the session's total counts it, the ledger still agrees
      fake.enqueue(c.second.reply as never);
      expect((await sse(await b.fetch(`/api/sessions/${sessionId}/regenerate`, { method: 'POST' }))).at(-1)!.event).toBe('done');
      const again = await session(b, sessionId);
      expect(again.session.spent).toMatchObject({ replies: 3, credits: total + expected[1]! });
      const sums = await server.ctx.db.primary.query<{ usage: string; charged: string }>(
        `select (select sum(credits) from usage_ledger where account_id = $1)::text as usage,
                (select -sum(amount) from credit_ledger where account_id = $1 and kind = 'charge')::text as charged`,
        [accountId],
      );
      expect(sums.rows[0]).toEqual({ usage: String(total + expected[1]!), charged: String(total + expected[1]!) });
    });

    it('the studio’s expected cost per turn: an estimate from the world’s prompt before anyone played it, then the average of its played replies; its author only', async () => {
      const { b, sessionId } = await player(`cost-${c.kind}`);
      const worldId = ((await (await b.fetch(`/api/sessions/${sessionId}`)).json()) as { session: { worldId: string } }).session.worldId;
      const cost = async () => (await (await b.fetch(`/api/worlds/${worldId}/expected-cost`)).json()) as Record<string, number | string | boolean>;
      const before = await cost();
      expect(before).toMatchObject({ basis: 'estimate', turns: 0, cachedTokens: 0, replyTokens: 1500, model: c.model, listedPrice: true });
      expect(before.promptTokens as number).toBeGreaterThan(100);
      const fresh = before.promptTokens as number;
      expect(before.credits).toBe(Math.round(((fresh * PRICE.input + (before.replyTokens as number) * PRICE.output) / 1e6) * 100) / 100);

      for (const turn of [c.first, c.second]) {
        fake.enqueue(turn.reply as never);
        expect((await sse(await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I go on' } }))).at(-1)!.event).toBe('done');
      }
      const after = await cost();
      const prompt = (c.first.prompt + c.second.prompt) / 2;
      const cached = (c.first.read + c.second.read) / 2;
      const out = (c.first.out + c.second.out) / 2;
      expect(after).toMatchObject({ basis: 'played', turns: 2, promptTokens: prompt, cachedTokens: cached, replyTokens: out });
      expect(after.credits).toBe(Math.round((((prompt - cached) * PRICE.input + cached * PRICE.cacheRead + out * PRICE.output) / 1e6) * 100) / 100);
      expect(after.creditsWithoutCache).toBe(Math.round(((prompt * PRICE.input + out * PRICE.output) / 1e6) * 100) / 100);

      // another account learns nothing of it
      const other = (await player(`cost-other-${c.kind}`)).b;
      const refused = await other.fetch(`/api/worlds/${worldId}/expected-cost`);
      expect([403, 404]).toContain(refused.status);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toMatch(/NOT_FOUND|NOT_AUTHOR/);
    });

    it('on a player’s own key: not charged, the tokens recorded, the platform’s estimate shown where the price table names the model', async () => {
      const { b, accountId, sessionId } = await player(`own-${c.kind}`);
      const saved = await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: own.url, apiKey: 'sk-own-key', defaultModel: 'gpt-own-priced', kind: 'openai' } });
      expect(saved.status).toBe(200);
      own.enqueue({ kind: 'completion', content: 'Quiet halls.', usage: { prompt_tokens: 2000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 1500 } } } satisfies FakeReply);
      const events = await sse(await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I listen' } }));
      expect(events.at(-1)!.event).toBe('done');
      const estimate = credits(500, 1500, 0, 100);
      expect(events.at(-1)!.data.message).toMatchObject({ promptTokens: 2000, cachedTokens: 1500, tokenCount: 100, creditsCharged: null, creditsEstimate: estimate });
      const usage = await server.ctx.db.primary.query(`select tokens_in, cached_tokens_in, credits, billing_source from usage_ledger where account_id = $1`, [accountId]);
      expect(usage.rows).toEqual([{ tokens_in: 2000, cached_tokens_in: 1500, credits: null, billing_source: 'private' }]);
      expect((await server.ctx.db.primary.query(`select 1 from credit_ledger where account_id = $1 and kind = 'charge'`, [accountId])).rowCount).toBe(0);
      expect((await session(b, sessionId)).session.spent).toEqual({ replies: 1, tokensIn: 2000, cachedTokens: 1500, tokensOut: 100, credits: 0, creditsEstimate: estimate });

      // a model the price table does not name: tokens only, no estimate
      expect((await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: own.url, defaultModel: 'gpt-unpriced', kind: 'openai' } })).status).toBe(200);
      own.enqueue({ kind: 'completion', content: 'Still quiet.', usage: { prompt_tokens: 2100, completion_tokens: 50 } } satisfies FakeReply);
      const second = await sse(await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I wait' } }));
      expect(second.at(-1)!.data.message).toMatchObject({ promptTokens: 2100, cachedTokens: null, creditsCharged: null, creditsEstimate: null });
    });
  });
}
