import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const TABLES = ['accounts', 'login_sessions', 'chat_sessions', 'chat_messages', 'chat_checkpoints', 'world_storage', 'usage_ledger', 'credit_reservations', 'credit_ledger', 'billing_accounts', 'worlds'];

describe('guest preview', () => {
  let server: TestServer;
  let official: FakeOpenAi;
  let worldId: string;

  beforeAll(async () => {
    official = await startFakeOpenAi({ apiKey: 'platform-key' });
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: official.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform/story', GUEST_PREVIEW_TURNS_PER_HOUR: '3' });
    const author = new Browser(server.url);
    await signUp(server, author, { email: `prev-${Date.now()}@example.com`, password: 'long enough pw' });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const world = JSON.parse(readFileSync(new URL('../../../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
    worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
    await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' });
  });
  afterAll(async () => {
    await server?.stop();
    await official?.close();
  });

  const counts = async () => {
    const out: Record<string, number> = {};
    for (const t of TABLES) out[t] = (await server.ctx.db.primary.query<{ n: number }>(`select count(*)::int as n from ${t}`)).rows[0]!.n;
    return out;
  };

  it('a guest sees what it can do, plays a turn, and the database is unchanged', async () => {
    const guest = new Browser(server.url);
    const preview = (await (await guest.fetch(`/api/worlds/${worldId}/preview`)).json()) as { capabilities: Record<string, boolean>; state: unknown };
    expect(preview.capabilities).toEqual({ canSendMessage: true, canPersistSession: false, canUseSessionApis: false, requiresAuth: true });
    const before = await counts();
    official.enqueue({ kind: 'completion', content: 'Bats! [hp: -3]' });
    const turn = await guest.fetch(`/api/worlds/${worldId}/preview/turn`, { method: 'POST', json: { message: 'hello', history: [], state: preview.state } });
    expect(turn.status).toBe(200);
    const body = (await turn.json()) as { displayText: string; state: { variables: { hp: number } } };
    expect(body.displayText).toBe('Bats!');
    expect(body.state.variables.hp).toBe(97);
    expect(official.completions.at(-1)!.body!.model).toBe('platform/story');
    // The world's generation settings reach the provider in the preview too.
    expect(official.completions.at(-1)!.body).toMatchObject({ temperature: 0.9, top_p: 0.95, frequency_penalty: 0, presence_penalty: 0, top_k: 40, min_p: 0.05 });
    expect(official.completions.at(-1)!.body!.response_format).toBeUndefined();
    expect(await counts()).toEqual(before);
    // The allowance is per address per hour.
    for (let i = 0; i < 2; i++) await guest.fetch(`/api/worlds/${worldId}/preview/turn`, { method: 'POST', json: { message: 'again', history: [], state: null } });
    const limited = await guest.fetch(`/api/worlds/${worldId}/preview/turn`, { method: 'POST', json: { message: 'more', history: [], state: null } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeTruthy();
    expect(await counts()).toEqual(before);
  });

  it('unpublished worlds have no preview; bad bodies are 400', async () => {
    const guest = new Browser(server.url);
    expect((await guest.fetch('/api/worlds/wld_nope/preview')).status).toBe(404);
    expect((await guest.fetch(`/api/worlds/${worldId}/preview/turn`, { method: 'POST', json: { message: '', history: [], state: null } })).status).toBe(400);
  });
});
