import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../../../tests/support/fake-anthropic.ts';
import { type FakeGemini, startFakeGemini } from '../../../tests/support/fake-gemini.ts';
import type { NativeFake } from '../../../tests/support/fake-native.ts';
import { type ChatMessage, type ChatStreamEvent, collectStream, completeChat, listModels, type ProviderEndpoint, streamChat } from './chat.ts';
import { AiAbortedError, AiAuthError, AiBadRequestError, AiInvalidResponseError, AiNetworkError, AiRateLimitError, AiTimeoutError, AiUpstreamError } from './errors.ts';
import { providerKindOf } from './kinds.ts';

let anthropic: FakeAnthropic;
let gemini: FakeGemini;

beforeAll(async () => {
  [anthropic, gemini] = await Promise.all([startFakeAnthropic({ apiKey: 'sk-ant-right' }), startFakeGemini({ apiKey: 'gem-right' })]);
});
afterAll(async () => {
  await Promise.all([anthropic?.close(), gemini?.close()]);
});
beforeEach(() => {
  anthropic.reset();
  gemini.reset();
});

/** A world's prompt: system blocks, the world's greeting, a depth-placed system entry, the player's words. */
const messages: ChatMessage[] = [
  { role: 'system', content: 'You narrate Willow Street.' },
  { role: 'system', content: 'Lore: it always rains.' },
  { role: 'assistant', content: 'Rain taps the window.' },
  { role: 'system', content: '[The lamp flickers.]' },
  { role: 'user', content: 'I open the door.' },
];

const kinds: Array<{ kind: 'anthropic' | 'gemini'; fake: () => NativeFake; key: string; model: string }> = [
  { kind: 'anthropic', fake: () => anthropic, key: 'sk-ant-right', model: 'claude-sonnet-4-5' },
  { kind: 'gemini', fake: () => gemini, key: 'gem-right', model: 'gemini-2.5-flash' },
];

async function events(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe('provider kind detection', () => {
  it('names the kind by the base URL host, anything else OpenAI-compatible', () => {
    expect(providerKindOf('https://api.anthropic.com/v1')).toBe('anthropic');
    expect(providerKindOf('https://generativelanguage.googleapis.com/v1beta')).toBe('gemini');
    expect(providerKindOf('https://api.anthropic.com.evil.example/v1')).toBe('openai');
    expect(providerKindOf('https://openrouter.ai/api/v1')).toBe('openai');
    expect(providerKindOf('not a url')).toBe('openai');
  });
});

describe('the Anthropic Messages wire format', () => {
  it('leading system messages become system blocks; later ones user text; the greeting gets a user turn before it; the key and version go in their headers', async () => {
    const endpoint: ProviderEndpoint = { baseUrl: anthropic.url, apiKey: 'sk-ant-right', kind: 'anthropic', privateNetwork: 'allow' };
    anthropic.enqueue({ kind: 'completion', content: 'The door creaks.', usage: { input: 100, output: 9, cacheRead: 800, cacheWrite: 50 } });
    const result = await collectStream(streamChat(endpoint, { model: 'claude-sonnet-4-5', messages, maxTokens: 300, temperature: 1.4, extraBody: { top_p: 0.9, frequency_penalty: 0.5 } }));
    const sent = anthropic.completions[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-right');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 300,
      system: [
        { type: 'text', text: 'You narrate Willow Street.' },
        { type: 'text', text: 'Lore: it always rains.' },
      ],
      messages: [
        { role: 'user', content: '[Start]' },
        { role: 'assistant', content: 'Rain taps the window.' },
        { role: 'user', content: '[The lamp flickers.]\n\nI open the door.' },
      ],
      temperature: 1,
      top_p: 0.9,
      stream: true,
    });
    // usage: the whole prompt is input + cache reads + cache writes
    expect(result).toMatchObject({ content: 'The door creaks.', finishReason: 'stop', id: 'msg_fake_1', usage: { tokensIn: 950, tokensOut: 9, cachedTokensIn: 800, cacheWriteTokensIn: 50 } });
  });
});

describe('the Gemini wire format', () => {
  it('system messages before the conversation become systemInstruction; the assistant is the model role; the key goes in x-goog-api-key', async () => {
    const endpoint: ProviderEndpoint = { baseUrl: gemini.url, apiKey: 'gem-right', kind: 'gemini', privateNetwork: 'allow' };
    gemini.enqueue({ kind: 'completion', content: 'The door creaks.', usage: { input: 900, output: 9, cacheRead: 700 } });
    const result = await collectStream(streamChat(endpoint, { model: 'gemini-2.5-flash', messages, maxTokens: 300, temperature: 1.4, extraBody: { top_p: 0.9, frequency_penalty: 0.5, min_p: 0.1 } }));
    const sent = gemini.completions[0]!;
    expect(`${sent.path}${sent.search}`).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(sent.headers['x-goog-api-key']).toBe('gem-right');
    expect(sent.body).toEqual({
      systemInstruction: { parts: [{ text: 'You narrate Willow Street.' }, { text: 'Lore: it always rains.' }] },
      contents: [
        { role: 'model', parts: [{ text: 'Rain taps the window.' }] },
        { role: 'user', parts: [{ text: '[The lamp flickers.]' }, { text: 'I open the door.' }] },
      ],
      generationConfig: { maxOutputTokens: 300, temperature: 1.4, topP: 0.9, frequencyPenalty: 0.5 },
    });
    expect(result).toMatchObject({ content: 'The door creaks.', finishReason: 'stop', providerModel: 'gemini-2.5-flash', usage: { tokensIn: 900, tokensOut: 9, cachedTokensIn: 700 } });
  });
});

describe.each(kinds)('$kind through the shared client', ({ kind, fake, key, model }) => {
  const endpoint = (): ProviderEndpoint => ({ baseUrl: fake().url, apiKey: key, kind, privateNetwork: 'allow' });
  const request = { model, messages: [{ role: 'user' as const, content: 'Hello' }], maxTokens: 50 };

  it('streams text and reasoning apart, then one done', async () => {
    fake().enqueue({ kind: 'completion', content: 'Hello, traveller, and welcome.', chunks: 4, reasoning: 'Greet them.', usage: { input: 12, output: 6 } });
    const out = await events(streamChat(endpoint(), request));
    expect(out.filter((e) => e.type === 'delta').map((e) => (e as { text: string }).text).join('')).toBe('Hello, traveller, and welcome.');
    expect(out.filter((e) => e.type === 'reasoning').map((e) => (e as { text: string }).text).join('')).toBe('Greet them.');
    expect(out.at(-1)).toMatchObject({ type: 'done', result: { content: 'Hello, traveller, and welcome.', usage: { tokensIn: 12, tokensOut: 6 } } });
  });

  it('a non-streamed completion', async () => {
    fake().enqueue({ kind: 'completion', content: 'Plain answer.', usage: { input: 5, output: 2 } });
    expect(await completeChat(endpoint(), request)).toMatchObject({ content: 'Plain answer.', finishReason: 'stop', usage: { tokensIn: 5, tokensOut: 2 } });
  });

  it('the model list, every page, with ids as a request names them', async () => {
    const saved = fake().models.slice();
    fake().models.splice(0, fake().models.length, ...Array.from({ length: 1203 }, (_, i) => ({ id: `m-${i}` })));
    try {
      const listed = await listModels(endpoint());
      expect(listed.map((m) => m.id)).toEqual(Array.from({ length: 1203 }, (_, i) => `m-${i}`));
      expect(fake().requests.filter((r) => r.method === 'GET').length).toBe(2);
    } finally {
      fake().models.splice(0, fake().models.length, ...saved);
    }
  });

  it('a wrong key is an auth error (Gemini answers it with a 400)', async () => {
    const wrong = { ...endpoint(), apiKey: 'sk-openai-key' };
    await expect(listModels(wrong)).rejects.toBeInstanceOf(AiAuthError);
    await expect(collectStream(streamChat(wrong, request))).rejects.toBeInstanceOf(AiAuthError);
  });

  it('a model the provider does not list is a bad request', async () => {
    await expect(collectStream(streamChat(endpoint(), { ...request, model: 'no-such-model' }))).rejects.toBeInstanceOf(AiBadRequestError);
  });

  it('429 and an overload carry the Retry-After', async () => {
    fake().enqueue({ kind: 'error', status: 429, retryAfter: '17' });
    const limited = await collectStream(streamChat(endpoint(), request)).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(AiRateLimitError);
    expect((limited as AiRateLimitError).retryAfterSeconds).toBe(17);
    fake().enqueue({ kind: 'error', status: kind === 'anthropic' ? 529 : 503, retryAfter: '3' });
    const overloaded = await completeChat(endpoint(), request).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(AiUpstreamError);
    expect((overloaded as AiUpstreamError).retryAfterSeconds).toBe(3);
  });

  it('an error event mid-stream: the text before it is seen, then an upstream error', async () => {
    fake().enqueue({ kind: 'stream-error', content: 'Half a sen' });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const e of streamChat(endpoint(), request)) if (e.type === 'delta') seen.push(e.text);
    })().catch((e: unknown) => e);
    expect(seen.join('')).toBe('Half a sen');
    expect(err).toBeInstanceOf(AiUpstreamError);
  });

  it('a dropped connection and a body that ends without its end are failures, never a finished reply', async () => {
    fake().enqueue({ kind: 'drop', content: 'Cut off', how: 'destroy' });
    await expect(collectStream(streamChat(endpoint(), request))).rejects.toBeInstanceOf(AiNetworkError);
    fake().enqueue({ kind: 'drop', content: 'Cut off', how: 'end' });
    await expect(collectStream(streamChat(endpoint(), request))).rejects.toBeInstanceOf(AiInvalidResponseError);
  });

  it('the caller’s abort stops the stream and the provider sees the connection go', async () => {
    fake().enqueue({ kind: 'stall', content: 'Slowly…' });
    const controller = new AbortController();
    const err = await (async () => {
      for await (const e of streamChat(endpoint(), request, { signal: controller.signal })) if (e.type === 'delta') controller.abort();
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiAbortedError);
    await expect.poll(() => fake().completions.at(-1)!.aborted).toBe(true);
  });

  it('first-byte and idle deadlines apply', async () => {
    fake().enqueue({ kind: 'hang' });
    const first = await collectStream(streamChat(endpoint(), request, { firstByteTimeoutMs: 150 })).catch((e: unknown) => e);
    expect(first).toMatchObject({ deadline: 'first-byte' });
    expect(first).toBeInstanceOf(AiTimeoutError);
    fake().enqueue({ kind: 'stall', content: 'Then nothing' });
    const idle = await collectStream(streamChat(endpoint(), request, { idleTimeoutMs: 150 })).catch((e: unknown) => e);
    expect(idle).toMatchObject({ deadline: 'idle' });
  });

  it('the reply cap cuts the stream and marks it', async () => {
    fake().enqueue({ kind: 'completion', content: 'x'.repeat(400), chunks: 8 });
    const result = await collectStream(streamChat(endpoint(), request, { maxReplyBytes: 120 }));
    expect(result).toMatchObject({ truncated: true, finishReason: 'length' });
    expect(result.content.length).toBe(120);
  });

  it('the guard refuses a private address under deny, before anything is sent', async () => {
    const before = fake().requests.length;
    await expect(listModels({ ...endpoint(), privateNetwork: 'deny' })).rejects.toMatchObject({ code: 'AI_URL_REFUSED' });
    expect(fake().requests.length).toBe(before);
  });
});

describe('tool calling on the native protocols (issue 48)', () => {
  const tools = [{ name: 'set_variable', description: 'Adds a variable.', parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }];
  for (const c of kinds) {
    const endpoint = (): ProviderEndpoint => ({ baseUrl: c.fake().url, apiKey: c.key, kind: c.kind, privateNetwork: 'allow' });
    it(`${c.kind}: sends the tools in its own shape, reads the calls of a JSON and a streamed answer, and sends a call and its answer back`, async () => {
      const reply = { kind: 'completion' as const, content: '', toolCalls: [{ id: 'call_1', name: 'set_variable', arguments: { id: 'health' } }], usage: { input: 100, output: 20 } };
      c.fake().enqueue(reply, reply);
      const json = await completeChat(endpoint(), { model: c.model, messages, tools });
      expect(json.toolCalls).toEqual([{ id: c.kind === 'anthropic' ? 'call_1' : 'call_1', name: 'set_variable', arguments: '{"id":"health"}' }]);
      expect(json.finishReason).toBe('tool_calls');
      const streamed = await collectStream(streamChat(endpoint(), { model: c.model, messages, tools }));
      expect(streamed.toolCalls?.map((t) => [t.name, t.arguments])).toEqual([['set_variable', '{"id":"health"}']]);
      const sent = c.fake().completions[0]!.body!;
      if (c.kind === 'anthropic') {
        expect(sent.tools).toEqual([{ name: 'set_variable', description: 'Adds a variable.', input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }]);
        expect(sent.tool_choice).toEqual({ type: 'auto' });
      } else {
        expect(sent.tools).toEqual([{ functionDeclarations: [{ name: 'set_variable', description: 'Adds a variable.', parametersJsonSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }] }]);
        expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
      }
      // the loop's next request: the call and its answer, which the fake's checks accept
      c.fake().enqueue({ kind: 'completion', content: 'Done.' });
      const next = await completeChat(endpoint(), {
        model: c.model,
        tools,
        messages: [...messages, { role: 'assistant', content: '', toolCalls: json.toolCalls }, { role: 'tool', toolCallId: json.toolCalls![0]!.id, name: 'set_variable', content: 'Added.' }],
      });
      expect(next.content).toBe('Done.');
      const turns = c.fake().completions[2]!.body![c.kind === 'anthropic' ? 'messages' : 'contents'] as Array<Record<string, unknown>>;
      if (c.kind === 'anthropic') {
        expect(turns.slice(-2)).toEqual([
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'set_variable', input: { id: 'health' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Added.' }] },
        ]);
      } else {
        expect(turns.slice(-2)).toEqual([
          { role: 'model', parts: [{ functionCall: { name: 'set_variable', args: { id: 'health' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'set_variable', response: { content: 'Added.' } } }] },
        ]);
      }
    });
  }
});
