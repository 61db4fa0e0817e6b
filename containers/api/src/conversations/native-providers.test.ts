import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../../../../tests/support/fake-anthropic.ts';
import { type FakeGemini, startFakeGemini } from '../../../../tests/support/fake-gemini.ts';
import type { NativeFake } from '../../../../tests/support/fake-native.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

/**
 * Issue 47 point 1, end to end through the HTTP API: a player's own connection of kind `anthropic`
 * or `gemini` (and the platform's provider of kind `anthropic`) carries a turn, a stop, a
 * regenerate and a failure, on loopback fakes that speak each wire protocol; bad settings (an
 * unknown kind, a key for another provider, a model the provider does not list) are refused with a
 * clear message and save nothing.
 */

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

async function sse(res: Response): Promise<SseEvent[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => ({
      event: /^event: (.+)$/m.exec(block)?.[1] ?? 'message',
      data: JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>,
    }));
}

interface SessionBody {
  session: { id: string; state: { variables: Record<string, unknown> } };
  messages: Array<{ role: string; content: string; status: string; failure?: { code: string; message: string } | null; swipes: unknown[]; activeSwipeIndex: number }>;
}

describe('native providers (Anthropic, Gemini) end to end through the HTTP API', () => {
  let server: TestServer;
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;
  let official: FakeAnthropic;

  beforeAll(async () => {
    [anthropic, gemini, official] = await Promise.all([
      startFakeAnthropic({ apiKey: 'sk-ant-player' }),
      startFakeGemini({ apiKey: 'gem-player' }),
      startFakeAnthropic({ apiKey: 'sk-ant-platform', models: [{ id: 'claude-platform', name: 'Claude (platform)' }] }),
    ]);
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: official.url, OFFICIAL_AI_API_KEY: 'sk-ant-platform', OFFICIAL_AI_KIND: 'anthropic', OFFICIAL_AI_MODEL: 'claude-platform', WELCOME_CREDITS: '100' });
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([anthropic?.close(), gemini?.close(), official?.close()]);
  });

  async function player(name: string): Promise<{ b: Browser; worldId: string }> {
    const b = new Browser(server.url);
    await signUp(server, b, { email: `${name}-${Date.now()}@example.com`, password: 'long enough pw', username: name.replace(/-/g, '_') });
    const w = await b.fetch('/api/worlds', { method: 'POST', json: { world: sample('ashen-depths') } });
    return { b, worldId: ((await w.json()) as { id: string }).id };
  }

  const create = async (b: Browser, worldId: string) => (await (await b.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as SessionBody;
  /** The session without the sample's greeting (its first message since issue 44): the turns' messages only. */
  const read = async (b: Browser, id: string) => {
    const body = (await (await b.fetch(`/api/sessions/${id}`)).json()) as SessionBody;
    return { ...body, messages: body.messages.slice(body.messages[0]?.role === 'assistant' ? 1 : 0) };
  };
  const send = async (b: Browser, id: string, content: string) => sse(await b.fetch(`/api/sessions/${id}/messages`, { method: 'POST', json: { content } }));

  async function usageOf(accountEmailPrefix: string) {
    const { rows } = await server.ctx.db.primary.query(
      `select u.model, u.tokens_in, u.tokens_out, u.partial, u.estimated, u.billing_source from usage_ledger u join accounts a on a.id = u.account_id
        where a.email like $1 and u.purpose = 'chat' order by u.id`,
      [`${accountEmailPrefix}-%`],
    );
    return rows;
  }

  // A prompt of 1300 tokens, 1000 of them read from the cache: Anthropic's input_tokens counts only
  // the uncached rest, Gemini's promptTokenCount counts them all.
  const cases: Array<{ kind: 'anthropic' | 'gemini'; fake: () => NativeFake; key: string; model: string; otherModel: string; keyHeader: string; usage: { input: number; output: number; cacheRead: number } }> = [
    { kind: 'anthropic', fake: () => anthropic, key: 'sk-ant-player', model: 'claude-sonnet-4-5', otherModel: 'claude-haiku-4-5', keyHeader: 'x-api-key', usage: { input: 300, output: 40, cacheRead: 1000 } },
    { kind: 'gemini', fake: () => gemini, key: 'gem-player', model: 'gemini-2.5-flash', otherModel: 'gemini-2.5-pro', keyHeader: 'x-goog-api-key', usage: { input: 1300, output: 40, cacheRead: 1000 } },
  ];

  for (const c of cases) {
    describe(`a player's own ${c.kind} connection`, () => {
      it('bad settings say what is wrong and save nothing: an unknown kind, a key for another provider, a model the provider does not list', async () => {
        const { b } = await player(`${c.kind}-bad`);
        const put = (json: Record<string, unknown>) => b.fetch('/api/settings/ai', { method: 'PUT', json });
        const base = { baseUrl: c.fake().url, apiKey: c.key, defaultModel: c.model, kind: c.kind };

        const unknown = await put({ ...base, kind: 'mistral' });
        expect(unknown.status).toBe(400);
        expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/kind: must be one of openai, anthropic, gemini/);

        const before = c.fake().requests.length;
        const wrongKey = await put({ ...base, apiKey: 'sk-proj-an-openai-key' });
        expect(wrongKey.status).toBe(400);
        const wrongMessage = ((await wrongKey.json()) as { error: { code: string; message: string } }).error;
        expect(wrongMessage.code).toBe('INVALID_REQUEST');
        expect(wrongMessage.message).toMatch(new RegExp(`apiKey: ${c.kind === 'anthropic' ? 'Anthropic' : 'Google Gemini'} refused this key \\(401\\)\\. Check that it is a`));
        // the key was tried on the model list, with the provider's own header
        expect(c.fake().requests.slice(before).map((r) => [r.method, r.headers[c.keyHeader]])).toEqual([['GET', 'sk-proj-an-openai-key']]);

        const unlisted = await put({ ...base, defaultModel: 'gpt-4o' });
        expect(unlisted.status).toBe(400);
        expect(((await unlisted.json()) as { error: { message: string } }).error.message).toMatch(/defaultModel: .* does not list the model "gpt-4o"/);

        // nothing of the three was stored
        expect(await (await b.fetch('/api/settings/ai')).json()).toEqual({ configured: false });
        const rows = await server.ctx.db.primary.query(`select 1 from ai_connections c join accounts a on a.id = c.account_id where a.email like $1`, [`${c.kind}-bad-%`]);
        expect(rows.rowCount).toBe(0);

        // the probe of an unsaved form says the same about a wrong key, and stores nothing either
        const probe = (await (await b.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: c.fake().url, apiKey: 'sk-proj-an-openai-key', kind: c.kind } })).json()) as Record<string, unknown>;
        expect(probe).toMatchObject({ ok: false, kind: c.kind, status: 401 });
        expect(String(probe.message)).toMatch(/refused this key \(401\)/);
        expect(await (await b.fetch('/api/settings/ai')).json()).toEqual({ configured: false });
      });

      it('saved with its kind; a turn streams on the player’s key, with usage (cached tokens included) recorded on the private connection', async () => {
        const { b, worldId } = await player(`${c.kind}-turn`);
        const saved = await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: c.fake().url, apiKey: c.key, defaultModel: c.model, kind: c.kind } });
        expect(saved.status).toBe(200);
        expect(await saved.json()).toMatchObject({ configured: true, kind: c.kind, defaultModel: c.model, apiKey: `••••${c.key.slice(-4)}` });
        expect(await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()).toMatchObject({ ok: true, models: 2 });

        const s = await create(b, worldId);
        c.fake().enqueue({ kind: 'completion', content: 'The ghoul claws you. [hp: -15] You stagger back.', chunks: 4, reasoning: 'A ghoul waits.', usage: c.usage });
        const events = await send(b, s.session.id, 'I open the door');
        expect(events.at(-1)!.event).toBe('done');
        expect(events.filter((e) => e.event === 'reasoning').map((e) => e.data.text).join('')).toBe('A ghoul waits.');
        expect(events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('')).toBe('The ghoul claws you. [hp: -15] You stagger back.');
        const after = await read(b, s.session.id);
        expect(after.messages.map((m) => [m.role, m.status])).toEqual([
          ['user', 'complete'],
          ['assistant', 'complete'],
        ]);
        expect(after.messages[1]!.content).not.toContain('[hp:');
        expect(after.session.state.variables.hp).toBe(85);
        const request = c.fake().completions.at(-1)!;
        expect(request.headers[c.keyHeader]).toBe(c.key);
        expect(request.headers.authorization).toBeUndefined();
        expect(JSON.stringify(request.body)).toContain('I open the door');
        expect(JSON.stringify(request.body)).toContain('Ashen Depths');
        expect(await usageOf(`${c.kind}-turn`)).toEqual([{ model: c.model, tokens_in: 1300, tokens_out: 40, partial: false, estimated: false, billing_source: 'private' }]);

        // regenerate: the old reply stays as a swipe
        c.fake().enqueue({ kind: 'completion', content: 'A trap! [gold: +5]' });
        const again = await sse(await b.fetch(`/api/sessions/${s.session.id}/regenerate`, { method: 'POST' }));
        expect(again.at(-1)!.event).toBe('done');
        const regenerated = await read(b, s.session.id);
        expect(regenerated.messages[1]).toMatchObject({ content: 'A trap!', activeSwipeIndex: 1 });
        expect(regenerated.messages[1]!.swipes).toHaveLength(2);
        expect(regenerated.session.state.variables).toMatchObject({ hp: 100, gold: 15 });

        // stop: a reply that stalls part-way is stopped; the provider sees its connection go
        c.fake().enqueue({ kind: 'stall', content: 'The torch gutters and', chunks: 2 });
        const pending = b.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'I wait' } });
        const calls = c.fake().completions.length;
        await expect.poll(() => c.fake().completions.length, { timeout: 20_000 }).toBe(calls + 1);
        expect((await b.fetch(`/api/sessions/${s.session.id}/stop`, { method: 'POST' })).status).toBe(200);
        const stopped = await sse(await pending);
        expect(stopped.at(-1)).toMatchObject({ event: 'error', data: { stopped: true } });
        await expect.poll(() => c.fake().completions.at(-1)!.aborted, { timeout: 20_000 }).toBe(true);
        const afterStop = await read(b, s.session.id);
        expect(afterStop.messages.at(-1)).toMatchObject({ role: 'user', content: 'I wait' });
        expect(afterStop.session.state.variables).toMatchObject({ hp: 100, gold: 15 });

        // the connection's model list on the catalogue, from the native list
        const catalogue = (await (await b.fetch('/api/models')).json()) as { models: Array<{ id: string; provider: string }> };
        expect(catalogue.models.filter((m) => m.provider === 'private').map((m) => m.id)).toEqual([c.model, c.otherModel]);
      });

      it('a failure: an error event mid-stream keeps the player’s message with the failure, no reply, nothing applied; a 429 says so', async () => {
        const { b, worldId } = await player(`${c.kind}-fail`);
        expect((await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: c.fake().url, apiKey: c.key, kind: c.kind } })).status).toBe(200);
        // no model given: the first the provider lists
        expect(await (await b.fetch('/api/settings/ai')).json()).toMatchObject({ kind: c.kind, defaultModel: c.model });
        const s = await create(b, worldId);
        c.fake().enqueue({ kind: 'stream-error', content: 'The floor gives way. [hp: -50] You fall' });
        const events = await send(b, s.session.id, 'I step forward');
        expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'AI_PROVIDER_UPSTREAM', stopped: false } });
        const after = await read(b, s.session.id);
        expect(after.messages).toHaveLength(1);
        expect(after.messages[0]).toMatchObject({ role: 'user', content: 'I step forward', failure: { code: 'AI_PROVIDER_UPSTREAM' } });
        expect(after.session.state.variables.hp).toBe(100);

        c.fake().enqueue({ kind: 'error', status: 429, retryAfter: '30' });
        const limited = await send(b, s.session.id, 'I try again');
        expect(limited.at(-1)).toMatchObject({ event: 'error', data: { code: 'AI_PROVIDER_RATE_LIMITED', retryAfter: 30 } });
      });
    });
  }

  it('the platform’s provider of kind anthropic (OFFICIAL_AI_KIND) carries a turn on credits, with the platform key in x-api-key', async () => {
    const { b, worldId } = await player('official-native');
    const catalogue = (await (await b.fetch('/api/models')).json()) as { models: Array<{ id: string; provider: string }> };
    expect(catalogue.models).toEqual([expect.objectContaining({ id: 'claude-platform', provider: 'official' })]);
    const s = await create(b, worldId);
    official.enqueue({ kind: 'completion', content: 'You find a coin. [gold: +1]', usage: { input: 200, output: 12, cacheWrite: 100 } });
    const events = await send(b, s.session.id, 'I search');
    expect(events.at(-1)!.event).toBe('done');
    expect(official.completions.at(-1)!.headers['x-api-key']).toBe('sk-ant-platform');
    expect((official.completions.at(-1)!.body as { model: string }).model).toBe('claude-platform');
    expect(await usageOf('official-native')).toEqual([{ model: 'claude-platform', tokens_in: 300, tokens_out: 12, partial: false, estimated: false, billing_source: 'official' }]);
  });
});
