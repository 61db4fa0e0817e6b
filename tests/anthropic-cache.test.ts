import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicBody } from '@yumina/ai';
import { CACHE_TTL_MS } from './support/anthropic-cache.ts';
import { type FakeAnthropic, startFakeAnthropic } from './support/fake-anthropic.ts';

/**
 * The loopback Anthropic fake's prompt cache (issue 47 point 3) follows Anthropic's published
 * rules: prefix match at a breakpoint (and up to 20 blocks before it), minimum cacheable length
 * (1024 tokens Sonnet/Opus, 2048 Haiku), 5-minute lifetime refreshed by a read, at most 4
 * breakpoints (400 otherwise), usage reported as input / cache_creation / cache_read tokens.
 */

let clock = 1_000_000;
let fake: FakeAnthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic({ promptCache: { now: () => clock } });
});
afterAll(() => fake?.close());

/** A text of about `tokens` tokens (bytes / 4). */
const text = (tokens: number, seed: string) => `${seed} `.padEnd(tokens * 4, 'x');
const ephemeral = { type: 'ephemeral' } as const;

async function send(body: Record<string, unknown>) {
  const res = await fetch(`${fake.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { usage?: Record<string, number>; error?: { type: string; message: string } } };
}

const request = (model: string, system: string, turns: string[], marks: { system?: boolean; last?: boolean } = { system: true, last: true }) => ({
  model,
  max_tokens: 100,
  system: [{ type: 'text', text: system, ...(marks.system ? { cache_control: ephemeral } : {}) }],
  messages: turns.map((content, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: i === turns.length - 1 && marks.last ? [{ type: 'text', text: content, cache_control: ephemeral }] : content,
  })),
});

describe("the Anthropic fake's prompt cache", () => {
  it('writes a prefix of at least 1024 tokens at a breakpoint, then reads it; usage splits the prompt into input, write and read', async () => {
    const system = text(1200, 'sys-a');
    const first = await send(request('claude-sonnet-4-5', system, ['hello there']));
    expect(first.status).toBe(200);
    // the rolling breakpoint's prefix (system + message) is written whole
    expect(first.json.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 1203, input_tokens: 0 });
    const second = await send(request('claude-sonnet-4-5', system, ['hello there', 'A reply.', 'and more']));
    // the last write is found 2 blocks before the new breakpoint: read; the rest up to it written
    expect(second.json.usage).toMatchObject({ cache_read_input_tokens: 1203, cache_creation_input_tokens: 4, input_tokens: 0 });
  });

  it('a prefix below the minimum cacheable length is not cached (no error): 1024 tokens for Sonnet, 2048 for Haiku', async () => {
    const short = await send(request('claude-sonnet-4-5', text(900, 'sys-b'), ['hi']));
    expect(short.status).toBe(200);
    expect(short.json.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0, input_tokens: 901 });
    const haiku = await send(request('claude-haiku-4-5', text(1500, 'sys-c'), ['hi']));
    expect(haiku.json.usage).toMatchObject({ cache_creation_input_tokens: 0, input_tokens: 1501 });
    const haikuLong = await send(request('claude-haiku-4-5', text(2100, 'sys-d'), ['hi']));
    expect(haikuLong.json.usage).toMatchObject({ cache_creation_input_tokens: 2101, input_tokens: 0 });
  });

  it('a cached prefix matches byte for byte and per model; it lives 5 minutes from its last use', async () => {
    const system = text(1100, 'sys-e');
    await send(request('claude-sonnet-4-5', system, ['q'], { system: true }));
    // one byte different in the system: no read
    const changed = await send(request('claude-sonnet-4-5', `${system}!`, ['q'], { system: true }));
    expect(changed.json.usage!.cache_read_input_tokens).toBe(0);
    // another model: its own cache
    const otherModel = await send(request('claude-haiku-4-5', system, ['q'], { system: true }));
    expect(otherModel.json.usage!.cache_read_input_tokens).toBe(0);
    clock += CACHE_TTL_MS - 1_000;
    const stillThere = await send(request('claude-sonnet-4-5', system, ['q'], { system: true }));
    expect(stillThere.json.usage!.cache_read_input_tokens).toBe(1100);
    // the read refreshed it: 4 more minutes later it is still there; 5 minutes after that, gone
    clock += CACHE_TTL_MS - 60_000;
    expect((await send(request('claude-sonnet-4-5', system, ['q'], { system: true }))).json.usage!.cache_read_input_tokens).toBe(1100);
    clock += CACHE_TTL_MS + 1;
    const expired = await send(request('claude-sonnet-4-5', system, ['q'], { system: true }));
    expect(expired.json.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 1100 });
  });

  it('the lookback reaches 20 blocks before a breakpoint, not further', async () => {
    const system = text(1100, 'sys-f');
    await send(request('claude-sonnet-4-5', system, ['start'], { system: false, last: true }));
    const turns = ['start'];
    for (let i = 0; i < 20; i++) turns.push(i % 2 === 0 ? `reply ${i}` : `message ${i}`);
    turns.push('last');
    // the write sits 21 blocks before the new breakpoint: out of reach
    const far = await send(request('claude-sonnet-4-5', system, turns, { system: false, last: true }));
    expect(far.json.usage!.cache_read_input_tokens).toBe(0);
    const near = await send(request('claude-sonnet-4-5', system, [...turns.slice(0, 19)], { system: false, last: true }));
    expect(near.json.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(1101);
  });

  it('more than 4 cache_control breakpoints: 400 invalid_request_error', async () => {
    const body = request('claude-sonnet-4-5', 'sys', ['a', 'b', 'c', 'd', 'e']);
    (body.messages as Array<{ content: unknown }>).forEach((m) => (m.content = [{ type: 'text', text: String(typeof m.content === 'string' ? m.content : 'e'), cache_control: ephemeral }]));
    const refused = await send(body);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toEqual({ type: 'invalid_request_error', message: 'A maximum of 4 blocks with cache_control may be provided. Found 6.' });
  });
});

describe("the platform's Anthropic request: breakpoints", () => {
  it('marks the messages flagged `cache` (the stable head, the latest message) with cache_control, one block per message, never more than 4', () => {
    const body = anthropicBody(
      {
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'World.' },
          { role: 'system', content: 'Character.', cache: true },
          { role: 'assistant', content: 'Greeting.' },
          { role: 'user', content: 'Hello.', cache: true },
          { role: 'system', content: 'A fired entry.' },
          { role: 'system', content: '## Current state' },
        ],
      },
      false,
    );
    expect(body.system).toEqual([
      { type: 'text', text: 'World.' },
      { type: 'text', text: 'Character.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: '[Start]' },
      { role: 'assistant', content: 'Greeting.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hello.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'A fired entry.' },
          { type: 'text', text: '## Current state' },
        ],
      },
    ]);
    const many = anthropicBody({ model: 'm', messages: ['a', 'b', 'c', 'd', 'e', 'f'].map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content, cache: true }) as const) }, false);
    const marks = JSON.stringify(many).match(/cache_control/g)?.length;
    expect(marks).toBe(4);
    // the last four are kept (the rolling one among them)
    expect((many.messages as Array<{ content: unknown }>).at(-1)!.content).toEqual([{ type: 'text', text: 'f', cache_control: { type: 'ephemeral' } }]);
    expect((many.messages as Array<{ content: unknown }>)[1]!.content).toBe('b');
  });
});
