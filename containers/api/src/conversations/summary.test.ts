import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp as signUpAccount } from '../../../../tests/support/sign-up.ts';

const ashen = JSON.parse(readFileSync(new URL('../../../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8')) as { entries: { role: string }[]; settings: Record<string, unknown> };
/** The Ashen Depths without its greeting: this test counts the turns' messages alone. */
const sample = { ...ashen, entries: ashen.entries.filter((e) => e.role !== 'greeting') };

/**
 * Story summaries in a real conversation (issue 7): history over the world's budget is summarized
 * by the configured summary model; when that routed model refuses with "reasoning required", one
 * fallback request goes to the secondary summary model, and the usage ledger in PostgreSQL gets
 * one summary row, under the model that answered.
 */
describe('story summaries with the one-step fallback, through a conversation (real PostgreSQL)', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let player: Browser;
  let accountId: string;
  let worldId: string;
  const LONG_REPLY = `${'The corridor stretches on, damp stone after damp stone. '.repeat(80)}[gold: +1]`;

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'player-key' });
    provider.setHandler((body) => {
      if (body.model === 'free-router-model') return fakeReplies.reasoningRequired();
      if (body.model === 'backup-summary-model') return fakeReplies.completion('SUMMARY: ren walked a long damp corridor and found a coin.');
      return fakeReplies.completion(LONG_REPLY);
    });
    server = await startTestServer({ SUMMARY_MODEL: 'free-router-model', SUMMARY_FALLBACK_MODEL: 'backup-summary-model' });
    player = new Browser(server.url);
    const signUp = await signUpAccount(server, player, { email: `summary-${Date.now()}@example.com`, password: 'long enough pw', username: 'ren' });
    accountId = signUp.account.id;
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'player-key' } });
    // A small context budget (maxContext − maxTokens = 500 tokens): one long reply overflows it.
    const world = { ...sample, settings: { ...sample.settings, maxContext: 1000, maxTokens: 500 } };
    worldId = ((await (await player.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  const ledger = async () =>
    (
      await server.ctx.db.primary.query<{ model: string; requested_model: string | null; purpose: string; billing_source: string }>(
        'select model, requested_model, purpose, billing_source from usage_ledger where account_id = $1 order by id',
        [accountId],
      )
    ).rows;

  it('summarizes the overflowing history through the fallback model after a reasoning-required 400; one ledger row for it', async () => {
    const session = (await (await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
    const send = async (content: string) => (await player.fetch(`/api/sessions/${session.session.id}/messages`, { method: 'POST', json: { content } })).text();

    type Read = { session: { state: { variables: { gold: number } } }; messages: { content: string; compacted: boolean; attachments: unknown[] }[] };
    const read = async () => (await (await player.fetch(`/api/sessions/${session.session.id}`)).json()) as Read;
    // The first turn fits the budget: no summary request, nothing compacted.
    await send('I walk on.');
    expect(provider.completions.map((c) => c.body!.model)).toEqual(['story-model']);
    expect((await ledger()).map((r) => r.purpose)).not.toContain('summary');
    expect((await read()).messages.map((m) => m.compacted)).toEqual([false, false]);

    // The second turn's history overflows it: the summary model refuses, the fallback answers once.
    await send('I keep walking.');
    expect(provider.completions.map((c) => c.body!.model)).toEqual(['story-model', 'free-router-model', 'backup-summary-model', 'story-model']);
    const summaryRequest = provider.completions[2]!.body!;
    // The dropped turns go to the summary (the newest message is always kept, so the long reply stays).
    expect(JSON.stringify(summaryRequest.messages)).toContain('Player: I walk on.');
    // The turn's prompt carries the summary instead of the dropped turns.
    const turn = JSON.stringify(provider.completions[3]!.body!.messages);
    expect(turn).toContain('SUMMARY: ren walked a long damp corridor');
    expect(turn).not.toContain('I walk on.');

    const summaries = (await ledger()).filter((r) => r.purpose === 'summary');
    expect(summaries).toEqual([{ model: 'backup-summary-model', requested_model: 'free-router-model', purpose: 'summary', billing_source: 'private' }]);
    // The reply itself is applied as usual.
    const after = await read();
    expect(after.session.state.variables.gold).toBe(12);
    // `compacted` is true exactly on the message folded into the summary; no message has attachments.
    expect(after.messages.map((m) => [m.content.slice(0, 16), m.compacted])).toEqual([
      ['I walk on.', true],
      ['The corridor str', false],
      ['I keep walking.', false],
      ['The corridor str', false],
    ]);
    expect(after.messages.map((m) => m.attachments)).toEqual([[], [], [], []]);
  });
});
