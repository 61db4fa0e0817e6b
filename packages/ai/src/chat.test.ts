import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../../../tests/support/fake-openai.ts';
import { collectStream, completeChat, isOpenRouterClaude, listModels, type ProviderEndpoint, requestBody, serializeBody, streamChat } from './chat.ts';
import {
  AiAbortedError,
  AiAuthError,
  AiBadRequestError,
  AiContentRefusalError,
  AiNetworkError,
  AiRateLimitError,
  AiReasoningRequiredError,
  AiTimeoutError,
  AiUpstreamError,
} from './errors.ts';

let fake: FakeOpenAi;
let endpoint: ProviderEndpoint;
const request = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello there' }], maxTokens: 50 };

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-test' });
  endpoint = { baseUrl: fake.url, apiKey: 'sk-test', privateNetwork: 'allow' };
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('non-streaming completions', () => {
  it('sends the request with the key and returns content, model and usage', async () => {
    fake.enqueue(fakeReplies.completion('General Kenobi.', { prompt_tokens: 12, completion_tokens: 4 }, { model: 'openai/gpt-4o-mini-2024-07-18' }));
    const result = await completeChat(endpoint, { ...request, temperature: 0.2, reasoning: false });
    expect(result).toMatchObject({
      content: 'General Kenobi.',
      model: 'openai/gpt-4o-mini',
      providerModel: 'openai/gpt-4o-mini-2024-07-18',
      finishReason: 'stop',
      refusal: null,
      usage: { tokensIn: 12, tokensOut: 4 },
    });
    const [sent] = fake.completions;
    expect(sent!.headers.authorization).toBe('Bearer sk-test');
    expect(sent!.body).toEqual({ model: request.model, messages: request.messages, max_tokens: 50, temperature: 0.2, reasoning: { enabled: false } });
  });

  it('returns usage null when the provider reports none, and a structured refusal as such', async () => {
    fake.enqueue(fakeReplies.completion('ok', undefined, { usage: null }), fakeReplies.refusal('No.'));
    expect((await completeChat(endpoint, request)).usage).toBeNull();
    expect(await completeChat(endpoint, request)).toMatchObject({ content: '', refusal: 'No.' });
  });

  it.each([
    ['reasoning required 400', fakeReplies.reasoningRequired(), AiReasoningRequiredError, 400, 'AI_REASONING_REQUIRED'],
    ['malformed 400', fakeReplies.malformed(), AiBadRequestError, 400, 'AI_PROVIDER_BAD_REQUEST'],
    ['401', fakeReplies.unauthorized(), AiAuthError, 401, 'AI_PROVIDER_AUTH'],
    ['moderation 403', fakeReplies.moderationRefusal(), AiContentRefusalError, 403, 'AI_CONTENT_REFUSAL'],
    ['429', fakeReplies.rateLimited(), AiRateLimitError, 429, 'AI_PROVIDER_RATE_LIMITED'],
    ['502', fakeReplies.serverError(), AiUpstreamError, 502, 'AI_PROVIDER_UPSTREAM'],
  ] as const)('maps a %s to a typed error keeping status and body', async (_name, reply, type, status, code) => {
    fake.enqueue(reply);
    const err = await completeChat(endpoint, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({ status, code, body: (reply as { body: unknown }).body, model: request.model });
    expect((err as { bodyText: string }).bodyText).toBe(JSON.stringify((reply as { body: unknown }).body));
  });

  it('rejects a wrong key with the provider 401', async () => {
    const err = await completeChat({ ...endpoint, apiKey: 'sk-wrong' }, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiAuthError);
  });

  it('enforces its deadline with a typed timeout error', async () => {
    fake.enqueue({ kind: 'hang' });
    const started = Date.now();
    const err = await completeChat(endpoint, request, { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiTimeoutError);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reports an unreachable provider as a network error', async () => {
    const err = await completeChat({ baseUrl: 'http://127.0.0.1:1/v1', apiKey: null, privateNetwork: 'allow' }, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiNetworkError);
  });
});

describe('streaming completions', () => {
  it('streams deltas over SSE and ends with the whole result and usage', async () => {
    // chunks apart in time arrive in reads of their own: one delta each, as they come
    fake.enqueue(fakeReplies.completion('The quick brown fox jumps.', { prompt_tokens: 20, completion_tokens: 6 }, { chunks: 4, chunkDelayMs: 15 }));
    const deltas: string[] = [];
    const result = await collectStream(streamChat(endpoint, request), (t) => deltas.push(t));
    expect(deltas.length).toBe(4);
    expect(deltas.join('')).toBe('The quick brown fox jumps.');
    expect(result).toMatchObject({ content: 'The quick brown fox jumps.', finishReason: 'stop', usage: { tokensIn: 20, tokensOut: 6 } });
    expect(fake.completions[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('joins the deltas of one network read into one event, reasoning and reply text apart and in order', async () => {
    // 40 chunks written at once (a provider faster than its reader) reach the client in a read or a few
    fake.enqueue(fakeReplies.completion('a'.repeat(200), { prompt_tokens: 1, completion_tokens: 40 }, { chunks: 40, reasoning: 'thinking first' }));
    const events: { type: string; text: string }[] = [];
    for await (const event of streamChat(endpoint, request)) if (event.type !== 'done') events.push(event);
    expect(events.length).toBeLessThan(10);
    expect(events[0]).toEqual({ type: 'reasoning', text: 'thinking first' });
    expect(events[1]).toEqual({ type: 'delta', text: 'aaaaa' }); // the reply's first text (one chunk of five characters) at once
    expect(events.slice(1).every((e) => e.type === 'delta')).toBe(true);
    expect(events.slice(1).map((e) => e.text).join('')).toBe('a'.repeat(200));
  });

  it('stops a slow stream when the caller aborts, and the provider sees the connection close', async () => {
    fake.enqueue(fakeReplies.slowStream('abcdefghijklmnopqrstuvwxyz', 40));
    const controller = new AbortController();
    const deltas: string[] = [];
    const err = await collectStream(streamChat(endpoint, request, { signal: controller.signal }), (t) => {
      deltas.push(t);
      if (deltas.length === 3) controller.abort();
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiAbortedError);
    expect(deltas.length).toBe(3);
    await expect.poll(() => fake.completions[0]!.aborted, { timeout: 2000 }).toBe(true);
  });

  it('applies the deadline to the streamed body too', async () => {
    fake.enqueue(fakeReplies.slowStream('abcdefghijklmnopqrstuvwxyz', 50));
    const err = await collectStream(streamChat(endpoint, request, { timeoutMs: 200 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiTimeoutError);
  });

  it('a provider that never answers fails at the first-byte deadline; one that stops part-way at the idle deadline (issue 28)', async () => {
    const deadlines = { firstByteTimeoutMs: 200, idleTimeoutMs: 200 };
    fake.enqueue({ kind: 'hang' });
    const started = Date.now();
    const hung = await collectStream(streamChat(endpoint, request, deadlines)).catch((e: unknown) => e);
    expect(hung).toBeInstanceOf(AiTimeoutError);
    expect(hung).toMatchObject({ code: 'AI_PROVIDER_TIMEOUT', deadline: 'first-byte', timeoutMs: 200 });
    expect((hung as Error).message).toMatch(/did not start answering within 0\.2 s/);
    expect(Date.now() - started).toBeLessThan(2000);
    await expect.poll(() => fake.completions[0]!.aborted, { timeout: 2000 }).toBe(true);

    fake.enqueue({ kind: 'stall', content: 'half a', chunks: 2 });
    const deltas: string[] = [];
    const stalled = await collectStream(streamChat(endpoint, request, deadlines), (t) => deltas.push(t)).catch((e: unknown) => e);
    expect(stalled).toMatchObject({ code: 'AI_PROVIDER_TIMEOUT', deadline: 'idle' });
    expect((stalled as Error).message).toMatch(/stopped sending for 0\.2 s/);
    expect(deltas.join('')).toBe('half a');
    await expect.poll(() => fake.completions[1]!.aborted, { timeout: 2000 }).toBe(true);

    // a stream slower than the first-byte deadline in total but never idle that long is not cut
    // (600 ms in all against a first-byte deadline of 400 ms; gaps of 60 ms against an idle deadline of 1 s, a margin a loaded machine keeps)
    fake.enqueue(fakeReplies.slowStream('abcdefghij', 60, 10));
    expect((await collectStream(streamChat(endpoint, request, { firstByteTimeoutMs: 400, idleTimeoutMs: 1000 }))).content).toBe('abcdefghij');
    // and the non-streamed call has the same first-byte deadline
    fake.enqueue({ kind: 'hang' });
    expect(await completeChat(endpoint, request, deadlines).catch((e: unknown) => e)).toMatchObject({ deadline: 'first-byte' });
  });

  it('closes the request when the consumer stops reading early', async () => {
    fake.enqueue(fakeReplies.slowStream('abcdefghijklmnopqrstuvwxyz', 30));
    for await (const event of streamChat(endpoint, request)) {
      if (event.type === 'delta') break;
    }
    await expect.poll(() => fake.completions[0]!.aborted, { timeout: 2000 }).toBe(true);
  });

  it('surfaces an error event inside the stream as a typed upstream error', async () => {
    fake.enqueue({ kind: 'stream-error', content: 'partial', error: { message: 'Provider disconnected', code: 502 } });
    const err = await collectStream(streamChat(endpoint, request)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiUpstreamError);
    expect(err).toMatchObject({ status: 502, providerMessage: 'Provider disconnected' });
  });

  it('fails a streaming request with the same typed errors before the stream starts', async () => {
    fake.enqueue(fakeReplies.reasoningRequired());
    const err = await collectStream(streamChat(endpoint, request)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiReasoningRequiredError);
  });
});

describe('model list', () => {
  it('lists models from /v1/models', async () => {
    const models = await listModels(endpoint);
    expect(models).toEqual([
      { id: 'openai/gpt-4o-mini', name: 'GPT-4o mini', contextLength: 128_000, ownedBy: 'openai' },
      { id: 'deepseek/deepseek-r1:free', name: 'DeepSeek R1 (free)', contextLength: 163_840, ownedBy: 'deepseek' },
    ]);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v1/models' });
  });
});

describe('serializeBody', () => {
  it('is JSON.stringify of the body, message texts (long, escaped, repeated) and odd messages included', () => {
    const long = `He said "run"\n\u2028 — ${'ash '.repeat(200)} \\ end`;
    const bodies: Record<string, unknown>[] = [
      { model: 'm', messages: [{ role: 'system', content: long }, { role: 'user', content: 'short "q"' }, { role: 'assistant', content: long }], stream: true, top_p: 0.9 },
      { model: 'the "messages":0 model', messages: [{ role: 'user', content: long, name: 'Mira' }, { role: 'user', content: [{ type: 'text', text: 'x' }] }], messages_note: '"messages":0' },
      { model: 'm', messages: [] },
      { model: 'm' },
    ];
    for (const body of bodies) {
      const text = serializeBody(body);
      expect(JSON.parse(text)).toEqual(body);
      expect(text).toBe(JSON.stringify(body));
    }
    // the same text again (from the cache) gives the same JSON
    expect(serializeBody(bodies[0]!)).toBe(JSON.stringify(bodies[0]));
  });
});

describe('tool calling (OpenAI-compatible)', () => {
  const tools = [{ name: 'set_variable', description: 'Adds or changes a variable.', parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }];

  it('sends the tools and returns the calls of a JSON answer; a call and its answer go back in their wire shape', async () => {
    fake.enqueue(fakeReplies.toolCalls([{ id: 'call_a', name: 'set_variable', arguments: { id: 'health' } }, { name: 'set_variable', arguments: '{"id":"energy"}' }], 'Two variables.'));
    const result = await completeChat(endpoint, { ...request, tools });
    expect(result.finishReason).toBe('tool_calls');
    expect(result.content).toBe('Two variables.');
    expect(result.toolCalls).toEqual([
      { id: 'call_a', name: 'set_variable', arguments: '{"id":"health"}' },
      { id: expect.stringMatching(/^call_/), name: 'set_variable', arguments: '{"id":"energy"}' },
    ]);
    const sent = fake.completions[0]!.body!;
    expect(sent.tools).toEqual([{ type: 'function', function: tools[0] }]);
    expect(sent.tool_choice).toBe('auto');

    fake.enqueue(fakeReplies.completion('Done.'));
    await completeChat(endpoint, {
      ...request,
      tools,
      messages: [...request.messages, { role: 'assistant', content: '', toolCalls: result.toolCalls }, { role: 'tool', toolCallId: 'call_a', content: 'ok' }],
    });
    const again = fake.completions[1]!.body!.messages as Record<string, unknown>[];
    expect(again[1]).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'set_variable', arguments: '{"id":"health"}' } }, expect.anything()] });
    expect(again[2]).toEqual({ role: 'tool', tool_call_id: 'call_a', content: 'ok' });
  });

  it('joins tool calls streamed as fragments by index', async () => {
    fake.enqueue(fakeReplies.toolCalls([{ id: 'call_s', name: 'set_variable', arguments: { id: 'health', note: 'a long argument text split in two' } }]));
    const result = await collectStream(streamChat(endpoint, { ...request, tools }));
    expect(result.toolCalls).toEqual([{ id: 'call_s', name: 'set_variable', arguments: JSON.stringify({ id: 'health', note: 'a long argument text split in two' }) }]);
    expect(result.finishReason).toBe('tool_calls');
  });

  it('a request without tools sends no tool fields', async () => {
    fake.enqueue(fakeReplies.completion('Plain.'));
    const result = await completeChat(endpoint, request);
    expect(result.toolCalls).toBeUndefined();
    expect(fake.completions[0]!.body).not.toHaveProperty('tools');
  });
});

describe("prompt-cache marks on the OpenAI-compatible kind (issue 47): OpenRouter's cache_control for Claude models only", () => {
  const messages = [
    { role: 'system' as const, content: 'World.', cache: true as const },
    { role: 'user' as const, content: 'Hello.', cache: true as const },
    { role: 'system' as const, content: '## Current state' },
  ];
  it('OpenRouter and an anthropic/* model: the marked messages become a text part with cache_control', () => {
    expect(isOpenRouterClaude('https://openrouter.ai/api/v1', 'anthropic/claude-sonnet-4.5')).toBe(true);
    expect(requestBody({ model: 'anthropic/claude-sonnet-4.5', messages }, false, 'https://openrouter.ai/api/v1').messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'World.', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: [{ type: 'text', text: 'Hello.', cache_control: { type: 'ephemeral' } }] },
      { role: 'system', content: '## Current state' },
    ]);
  });
  it('another model on OpenRouter, or a Claude-named model elsewhere: plain messages, no mark', () => {
    const plain = [
      { role: 'system', content: 'World.' },
      { role: 'user', content: 'Hello.' },
      { role: 'system', content: '## Current state' },
    ];
    expect(requestBody({ model: 'openai/gpt-4o', messages }, false, 'https://openrouter.ai/api/v1').messages).toEqual(plain);
    expect(requestBody({ model: 'anthropic/claude-sonnet-4.5', messages }, false, 'https://api.example.com/v1').messages).toEqual(plain);
    expect(isOpenRouterClaude('https://openrouter.ai.evil.example/v1', 'anthropic/claude')).toBe(false);
    expect(serializeBody(requestBody({ model: 'm', messages }, false))).not.toContain('cache');
  });
});
