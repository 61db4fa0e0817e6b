import { type CountableMessage, TokenCounter } from '@yumina/tokens';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../../../tests/support/fake-openai.ts';
import { MemoryCredits, recorder } from './credit-gate.fixture.ts';
import { AiAuthError, AiBadRequestError, AiContentRefusalError, AiReasoningRequiredError, AiUpstreamError } from './errors.ts';
import type { MeteringContext } from './metered.ts';
import type { ProviderSelection } from './provider.ts';
import { condenseHistory, type SummarySettings, summarize } from './summary.ts';

let fake: FakeOpenAi;
let counter: TokenCounter;
const settings: SummarySettings = { model: 'deepseek/deepseek-r1:free', fallbackModel: 'openai/gpt-4o-mini', maxOutputTokens: 300, attempts: 3, retryDelayMs: 5 };
const input = {
  turns: [
    { role: 'user', content: 'I open the lighthouse door.' },
    { role: 'assistant', content: 'The keeper looks up from his log and nods at the gulls.' },
  ],
  previousSummary: 'The player arrived on the island at dawn.',
};

beforeAll(async () => {
  fake = await startFakeOpenAi();
  counter = new TokenCounter();
  await counter.init();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function context(source: 'official' | 'private', credits?: MemoryCredits) {
  const usage = recorder();
  const selection: ProviderSelection = { source, endpoint: { baseUrl: fake.url, apiKey: source === 'official' ? 'sk-platform' : 'sk-mine', privateNetwork: 'allow' }, defaultModel: null };
  if (credits) credits.recorder = usage.record;
  const ctx: MeteringContext = { accountId: 'acct-9', selection, recordUsage: usage.record, credits, counter };
  return { ctx, records: usage.records };
}

describe('story summaries', () => {
  it('summarizes with reasoning disabled and the output cap, recording one usage row', async () => {
    const { ctx, records } = context('private');
    fake.enqueue(fakeReplies.completion('  The player met the keeper.  ', { prompt_tokens: 90, completion_tokens: 8 }));
    const result = await summarize(ctx, settings, input);
    expect(result).toMatchObject({ summary: 'The player met the keeper.', model: settings.model, fellBack: false, attempts: 1 });
    expect(fake.completions).toHaveLength(1);
    const body = fake.completions[0]!.body!;
    expect(body).toMatchObject({ model: settings.model, max_tokens: 300, reasoning: { enabled: false } });
    const prompt = JSON.stringify(body.messages);
    expect(prompt).toContain('The player arrived on the island at dawn.');
    expect(prompt).toContain('I open the lighthouse door.');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ model: settings.model, purpose: 'summary', tokensIn: 90, tokensOut: 8 });
  });

  describe.each([
    ['a reasoning-required 400', fakeReplies.reasoningRequired()],
    ['a refusal on a 200', fakeReplies.refusal()],
    ['a moderation refusal (403)', fakeReplies.moderationRefusal()],
  ])('after %s', (_name, failure) => {
    it('makes exactly one fallback request on the same key and cap, recorded under the fallback model', async () => {
      const { ctx, records } = context('private');
      fake.enqueue(failure, fakeReplies.completion('Fallback summary.', { prompt_tokens: 80, completion_tokens: 3 }));
      const result = await summarize(ctx, settings, input);
      expect(result).toMatchObject({ summary: 'Fallback summary.', model: 'openai/gpt-4o-mini', fellBack: true, attempts: 2 });
      expect(fake.completions).toHaveLength(2);
      const [first, second] = fake.completions.map((r) => r.body!);
      expect(first).toMatchObject({ model: settings.model });
      expect(second).toMatchObject({ model: 'openai/gpt-4o-mini', max_tokens: 300, reasoning: { enabled: false } });
      expect(second!.messages).toEqual(first!.messages);
      expect(fake.completions.map((r) => r.headers.authorization)).toEqual(['Bearer sk-mine', 'Bearer sk-mine']);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ model: 'openai/gpt-4o-mini', requestedModel: settings.model, tokensIn: 80, tokensOut: 3, billingSource: 'private' });
    });

    it('on the official key: the failed request is released, the fallback charged once', async () => {
      const credits = new MemoryCredits(100_000);
      const { ctx, records } = context('official', credits);
      fake.enqueue(failure, fakeReplies.completion('Fallback summary.', { prompt_tokens: 80, completion_tokens: 3 }));
      await summarize(ctx, settings, input);
      expect(credits.log.map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual([
        `reserve r1 ${settings.model}`,
        'release r1',
        'reserve r2 openai/gpt-4o-mini',
        'settle r2 openai/gpt-4o-mini',
      ]);
      expect(credits.balance).toBe(100_000 - 83);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ reservationId: 'r2', billingSource: 'official' });
    });
  });

  it.each([
    ['401', fakeReplies.unauthorized(), AiAuthError, 401],
    ['malformed-request 400', fakeReplies.malformed(), AiBadRequestError, 400],
  ] as const)('does not fall back on a %s: the error propagates unchanged', async (_name, reply, type, status) => {
    const { ctx, records } = context('private');
    fake.enqueue(reply, fakeReplies.completion('must not be used'));
    const err = await summarize(ctx, settings, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({ status, body: (reply as { body: unknown }).body });
    expect(fake.completions).toHaveLength(1);
    expect(records).toHaveLength(0);
  });

  it('makes only one fallback request: a failing fallback propagates its own error', async () => {
    const { ctx, records } = context('private');
    fake.enqueue(fakeReplies.reasoningRequired(), fakeReplies.refusal(), fakeReplies.completion('must not be used'));
    const err = await summarize(ctx, settings, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiContentRefusalError);
    expect(fake.completions).toHaveLength(2);
    expect(records).toHaveLength(0);
  });

  it('keeps the shared attempt allowance: no fallback when it is used up', async () => {
    const { ctx } = context('private');
    fake.enqueue(fakeReplies.reasoningRequired());
    await expect(summarize(ctx, { ...settings, attempts: 1 }, input)).rejects.toBeInstanceOf(AiReasoningRequiredError);
    expect(fake.completions).toHaveLength(1);

    fake.reset();
    fake.enqueue(fakeReplies.serverError(), fakeReplies.reasoningRequired(), fakeReplies.completion('not reached'));
    await expect(summarize(ctx, { ...settings, attempts: 2 }, input)).rejects.toBeInstanceOf(AiReasoningRequiredError);
    expect(fake.completions.map((r) => r.body!.model)).toEqual([settings.model, settings.model]);
  });

  it('retries a transient failure of the routed model within the allowance', async () => {
    const { ctx, records } = context('private');
    fake.enqueue(fakeReplies.serverError(), fakeReplies.completion('Second time lucky.'));
    const result = await summarize(ctx, settings, input);
    expect(result).toMatchObject({ summary: 'Second time lucky.', model: settings.model, attempts: 2, fellBack: false });
    expect(records).toHaveLength(1);

    fake.reset();
    fake.enqueue(fakeReplies.serverError(), fakeReplies.serverError());
    await expect(summarize(ctx, { ...settings, attempts: 2 }, input)).rejects.toBeInstanceOf(AiUpstreamError);
    expect(fake.completions).toHaveLength(2);
  });

  it('has no fallback when none is configured', async () => {
    const { ctx } = context('private');
    fake.enqueue(fakeReplies.reasoningRequired());
    await expect(summarize(ctx, { ...settings, fallbackModel: null }, input)).rejects.toBeInstanceOf(AiReasoningRequiredError);
    expect(fake.completions).toHaveLength(1);
  });
});

describe('condenseHistory', () => {
  const history = (): CountableMessage[] => [
    { role: 'system', content: 'You narrate a lighthouse story.', pinned: true },
    ...Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `Turn ${i}: the keeper and the gulls talk about the weather for a while.` })),
  ];

  it('leaves a history that fits untouched and calls no model', async () => {
    const { ctx } = context('private');
    const messages = history();
    const result = await condenseHistory(counter, messages, { budget: 100_000, summarization: { ctx, settings } });
    expect(result).toEqual({ kept: messages, dropped: [], summary: null });
    expect(fake.completions).toHaveLength(0);
  });

  it('without summarization, trims (pinned and newest kept, oldest dropped)', async () => {
    const messages = history();
    const result = await condenseHistory(counter, messages, { budget: 200, summarization: null });
    expect(result.summary).toBeNull();
    expect(result.kept[0]).toBe(messages[0]);
    expect(result.kept.at(-1)).toBe(messages.at(-1));
    expect(result.dropped[0]).toBe(messages[1]);
    expect(fake.completions).toHaveLength(0);
  });

  it('with summarization, summarizes the turns that do not fit, leaving room for the summary', async () => {
    const { ctx } = context('private');
    const messages = history();
    fake.enqueue(fakeReplies.completion('They talked about the weather.'));
    const result = await condenseHistory(counter, messages, { budget: 600, summarization: { ctx, settings: { ...settings, maxOutputTokens: 200 } } });
    expect(result.summary?.summary).toBe('They talked about the weather.');
    const trimmedOnly = await condenseHistory(counter, messages, { budget: 600, summarization: null });
    expect(result.dropped.length).toBeGreaterThan(trimmedOnly.dropped.length);
    const sent = JSON.stringify(fake.completions[0]!.body!.messages);
    expect(sent).toContain('Turn 0:');
    expect(sent).not.toContain('Turn 29:');
  });
});
