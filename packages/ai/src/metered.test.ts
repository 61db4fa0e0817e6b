import { TokenCounter } from '@yumina/tokens';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../../../tests/support/fake-openai.ts';
import { collectStream } from './chat.ts';
import { InsufficientCreditsError, MemoryCredits, recorder } from './credit-gate.fixture.ts';
import { AiAbortedError, AiBadRequestError } from './errors.ts';
import { type MeteringContext, meteredComplete, meteredStream } from './metered.ts';
import type { ProviderSelection } from './provider.ts';

let fake: FakeOpenAi;
let counter: TokenCounter;
let official: ProviderSelection;
let privately: ProviderSelection;
const request = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Tell me a story.' }], maxTokens: 100 };

beforeAll(async () => {
  fake = await startFakeOpenAi();
  counter = new TokenCounter();
  await counter.init();
  official = { source: 'official', endpoint: { baseUrl: fake.url, apiKey: 'sk-platform', privateNetwork: 'allow' }, defaultModel: null };
  privately = { source: 'private', endpoint: { baseUrl: fake.url, apiKey: 'sk-mine', privateNetwork: 'allow' }, defaultModel: 'gpt-4o' };
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function context(selection: ProviderSelection, credits?: MemoryCredits) {
  const usage = recorder();
  if (credits) credits.recorder = usage.record;
  const ctx: MeteringContext = { accountId: 'acct-1', selection, recordUsage: usage.record, credits, counter };
  return { ctx, records: usage.records };
}

describe('metered calls', () => {
  it('official key: reserves before the call, settles the reported usage after, one usage record', async () => {
    const credits = new MemoryCredits(10_000);
    const { ctx, records } = context(official, credits);
    fake.enqueue(fakeReplies.completion('Once upon a time.', { prompt_tokens: 30, completion_tokens: 5 }));
    const result = await meteredComplete(ctx, request, { purpose: 'chat' });
    expect(result.usage).toEqual({ tokensIn: 30, tokensOut: 5 });
    expect(credits.log).toHaveLength(2);
    expect(credits.log[0]).toMatch(/^reserve r1 openai\/gpt-4o-mini /);
    expect(credits.log[1]).toBe('settle r1 openai/gpt-4o-mini 35');
    expect(credits.balance).toBe(10_000 - 35);
    expect(records).toEqual([
      {
        accountId: 'acct-1',
        model: 'openai/gpt-4o-mini',
        requestedModel: 'openai/gpt-4o-mini',
        providerModel: 'openai/gpt-4o-mini',
        tokensIn: 30,
        tokensOut: 5,
        estimated: false,
        partial: false,
        billingSource: 'official',
        purpose: 'chat',
        reservationId: 'r1',
      },
    ]);
    expect(fake.completions[0]!.headers.authorization).toBe('Bearer sk-platform');
  });

  it('official key with an empty balance: refused with 402 and no outbound request', async () => {
    const credits = new MemoryCredits(0);
    const { ctx, records } = context(official, credits);
    const err = await meteredComplete(ctx, request, { purpose: 'chat' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientCreditsError);
    expect(err).toMatchObject({ status: 402 });
    expect(fake.requests).toHaveLength(0);
    expect(records).toHaveLength(0);
    expect(credits.balance).toBe(0);
  });

  it('private connection: never touches credits and records the call as private', async () => {
    const credits = new MemoryCredits(0);
    const { ctx, records } = context(privately, credits);
    fake.enqueue(fakeReplies.completion('Free of charge.'));
    await meteredComplete(ctx, request, { purpose: 'chat' });
    expect(credits.log).toEqual([]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ billingSource: 'private', reservationId: null });
    expect(fake.completions[0]!.headers.authorization).toBe('Bearer sk-mine');
  });

  it('a failed official call releases its reservation and writes no usage record', async () => {
    const credits = new MemoryCredits(5_000);
    const { ctx, records } = context(official, credits);
    fake.enqueue(fakeReplies.malformed());
    await expect(meteredComplete(ctx, request, { purpose: 'chat' })).rejects.toBeInstanceOf(AiBadRequestError);
    expect(credits.log[1]).toBe('release r1');
    expect(credits.balance).toBe(5_000);
    expect(records).toHaveLength(0);
  });

  it('estimates usage with the tokenizer when the provider reports none', async () => {
    const { ctx, records } = context(privately);
    fake.enqueue(fakeReplies.completion('Seven words are in this reply here.', undefined, { usage: null }));
    const result = await meteredComplete(ctx, request, { purpose: 'chat' });
    expect(result.estimated).toBe(true);
    expect(result.usage.tokensOut).toBe(counter.countText('Seven words are in this reply here.'));
    expect(result.usage.tokensIn).toBeGreaterThan(counter.countText('Tell me a story.'));
    expect(records[0]).toMatchObject({ estimated: true, tokensOut: result.usage.tokensOut });
  });

  it('streams with settle at the end and one record', async () => {
    const credits = new MemoryCredits(10_000);
    const { ctx, records } = context(official, credits);
    fake.enqueue(fakeReplies.completion('A streamed story.', { prompt_tokens: 15, completion_tokens: 4 }, { chunks: 3 }));
    const result = await collectStream(meteredStream(ctx, request, { purpose: 'chat' }));
    expect(result.content).toBe('A streamed story.');
    expect(credits.log.at(-1)).toBe('settle r1 openai/gpt-4o-mini 19');
    expect(records).toHaveLength(1);
  });

  it('an aborted stream is charged once for what arrived, marked partial', async () => {
    const credits = new MemoryCredits(10_000);
    const { ctx, records } = context(official, credits);
    fake.enqueue(fakeReplies.slowStream('abcdefghijklmnopqrstuvwxyz', 30));
    const controller = new AbortController();
    let seen = '';
    const err = await collectStream(meteredStream(ctx, request, { purpose: 'chat', signal: controller.signal }), (t) => {
      seen += t;
      if (seen.length === 3) controller.abort();
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiAbortedError);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ partial: true, estimated: true, tokensOut: counter.countText('abc') });
    expect(credits.log.filter((l) => l.startsWith('settle'))).toHaveLength(1);
    expect(credits.reservations.size).toBe(0);
  });

  it("the context's first-byte and idle deadlines reach every call: a hang is released, a stall charged for what arrived (issue 28)", async () => {
    const credits = new MemoryCredits(10_000);
    const { ctx, records } = context(official, credits);
    ctx.deadlines = { firstByteTimeoutMs: 150, idleTimeoutMs: 150 };
    fake.enqueue({ kind: 'hang' });
    expect(await meteredComplete(ctx, request, { purpose: 'summary' }).catch((e: unknown) => e)).toMatchObject({ code: 'AI_PROVIDER_TIMEOUT', deadline: 'first-byte' });
    expect(records).toHaveLength(0); // nothing arrived: released, not charged
    fake.enqueue({ kind: 'stall', content: 'abc', chunks: 1 });
    const err = await collectStream(meteredStream(ctx, request, { purpose: 'chat' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AI_PROVIDER_TIMEOUT', deadline: 'idle' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ partial: true, tokensOut: counter.countText('abc') });
    expect(credits.reservations.size).toBe(0);
  });

  it('a stream the consumer leaves early is still settled exactly once', async () => {
    const credits = new MemoryCredits(10_000);
    const { ctx, records } = context(official, credits);
    fake.enqueue(fakeReplies.slowStream('abcdefghij', 30));
    for await (const event of meteredStream(ctx, request, { purpose: 'chat' })) if (event.type === 'delta') break;
    expect(records).toHaveLength(1);
    expect(records[0]!.partial).toBe(true);
    expect(credits.reservations.size).toBe(0);
  });
});
