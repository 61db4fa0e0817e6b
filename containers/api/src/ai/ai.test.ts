import { meteredComplete } from '@yumina/ai';
import { grantCredits } from '@yumina/billing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { meteringFor } from './metering.ts';
import { signUp as signUpAccount } from '../../../../tests/support/sign-up.ts';

describe('model catalogue and metered calls (real PostgreSQL, loopback providers)', () => {
  let server: TestServer;
  let official: FakeOpenAi;
  let privateProvider: FakeOpenAi;

  beforeAll(async () => {
    official = await startFakeOpenAi({ apiKey: 'official-key', models: [{ id: 'platform/story-1', name: 'Story One', context_length: 32000 }] });
    privateProvider = await startFakeOpenAi({ apiKey: 'my-key', models: [{ id: 'llama-local', context_length: 8192 }] });
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: official.url, OFFICIAL_AI_API_KEY: 'official-key', WELCOME_CREDITS: '0' });
  });
  afterAll(async () => {
    await server?.stop();
    await official?.close();
    await privateProvider?.close();
  });

  const signUp = async () => {
    const b = new Browser(server.url);
    const r = await signUpAccount(server, b, { email: `ai-${Date.now()}-${Math.random()}@example.com`, password: 'long enough pw' });
    return { b, id: r.account.id };
  };

  it('lists the official and the private provider’s models; pins persist; recently used appear', async () => {
    const { b, id } = await signUp();
    await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: privateProvider.url, defaultModel: 'llama-local', apiKey: 'my-key' } });
    const list = (await (await b.fetch('/api/models')).json()) as { models: { id: string; provider: string; contextLength: number | null }[]; pinned: string[] };
    expect(list.models).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'llama-local', provider: 'private', contextLength: 8192 }),
        expect.objectContaining({ id: 'platform/story-1', provider: 'official', contextLength: 32000 }),
      ]),
    );
    expect((await b.fetch('/api/models/pins/platform%2Fstory-1', { method: 'PUT' })).status).toBe(200);
    const again = (await (await b.fetch('/api/models')).json()) as { pinned: string[]; recent: string[] };
    expect(again.pinned).toEqual(['platform/story-1']);

    // A private call: recorded in the usage ledger, no credits touched, and the model becomes "recent".
    const metering = await meteringFor(server.ctx, id);
    expect(metering.selection.source).toBe('private');
    privateProvider.enqueue({ kind: 'completion', content: 'hello', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    await meteredComplete(metering, { model: 'llama-local', messages: [{ role: 'user', content: 'hi' }] }, { purpose: 'chat' });
    const db = server.ctx.db.primary;
    expect((await db.query('select 1 from credit_reservations where account_id = $1', [id])).rowCount).toBe(0);
    const usage = await db.query<{ billing_source: string; tokens_in: number }>('select billing_source, tokens_in from usage_ledger where account_id = $1', [id]);
    expect(usage.rows).toEqual([{ billing_source: 'private', tokens_in: 12 }]);
    expect(((await (await b.fetch('/api/models')).json()) as { recent: string[] }).recent).toEqual(['llama-local']);
    await b.fetch('/api/models/pins/platform%2Fstory-1', { method: 'DELETE' });
    expect(((await (await b.fetch('/api/models')).json()) as { pinned: string[] }).pinned).toEqual([]);
  });

  it('official key: an empty balance is refused with 402 before any provider request; with credits it charges once', async () => {
    const { b, id } = await signUp();
    await b.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'official' } });
    official.reset();
    const metering = await meteringFor(server.ctx, id);
    expect(metering.selection.source).toBe('official');
    const refused = await meteredComplete(metering, { model: 'platform/story-1', messages: [{ role: 'user', content: 'hi' }], maxTokens: 500 }, { purpose: 'chat' }).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: 'INSUFFICIENT_CREDITS', statusCode: 402 });
    expect(official.completions).toHaveLength(0);

    await grantCredits(server.ctx.db.primary, id, 5, id, 'test');
    official.enqueue({ kind: 'completion', content: 'ok', usage: { prompt_tokens: 10, completion_tokens: 1200 } });
    await meteredComplete(await meteringFor(server.ctx, id), { model: 'platform/story-1', messages: [{ role: 'user', content: 'hi' }], maxTokens: 1500 }, { purpose: 'chat' });
    expect(official.completions).toHaveLength(1);
    const billing = (await (await b.fetch('/api/billing')).json()) as { credits: number; ledger: { kind: string; amount: number }[] };
    expect(billing.credits).toBe(3); // 1,210 tokens → 2 credits (of 2 held)
    expect(billing.ledger.filter((l) => l.kind === 'charge')).toEqual([expect.objectContaining({ amount: -2 })]);
  });
});
