import type { ServerResponse } from 'node:http';
import { AnthropicPromptCache, approxTokens, breakpointCount, type CacheUsage, MAX_CACHE_BREAKPOINTS } from './anthropic-cache.ts';
import { type NativeFake, type NativeFakeModel, type NativeFakeUsage, type NativeFakeReply, type NativeFakeRoutes, sendJson, sleep, split, startNativeFake } from './fake-native.ts';

/**
 * A scriptable provider speaking the Anthropic Messages API on loopback (port 0), for tests:
 * `POST /v1/messages` (a JSON message, or server-sent events `message_start`,
 * `content_block_start`, `ping`, `content_block_delta`, `content_block_stop`, `message_delta`,
 * `message_stop` when the body says `stream: true`, an `error` event mid-stream), `GET /v1/models`
 * (paged by `limit` and `after_id`), the key in `x-api-key` (401 `authentication_error`
 * otherwise), `anthropic-version` required, and the API's checks on a body (`max_tokens`, roles
 * alternating from `user`, non-empty text, a model it lists: 404 `not_found_error` otherwise).
 * Content is a string or text blocks; a block may carry `cache_control` (at most 4 in a request,
 * 400 otherwise). With `promptCache`, a reply without scripted usage reports the usage Anthropic's
 * prompt-cache rules give (./anthropic-cache.ts): input, cache read and cache write tokens.
 */

export interface FakeAnthropicOptions {
  /** The key to require in `x-api-key`; null accepts any. */
  apiKey?: string | null;
  models?: NativeFakeModel[];
  /** Apply Anthropic's prompt-cache rules to the usage of replies that script none; `now` moves its clock. */
  promptCache?: boolean | { now?: () => number };
}

type TextBlock = { type?: unknown; text?: unknown; cache_control?: unknown };

/** A text block as the API takes it: non-empty text, and `cache_control` of type `ephemeral` (ttl 5m or 1h) when present. */
function badBlock(block: TextBlock): boolean {
  if (block.type !== 'text' || typeof block.text !== 'string' || !block.text) return true;
  if (block.cache_control === undefined) return false;
  const control = block.cache_control as { type?: unknown; ttl?: unknown } | null;
  return !control || control.type !== 'ephemeral' || (control.ttl !== undefined && control.ttl !== '5m' && control.ttl !== '1h');
}

const errorBody = (type: string, message: string) => ({ type: 'error', error: { type, message } });

/** The error type Anthropic sends with a status. */
function errorType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  return 'api_error';
}

function invalid(body: Record<string, unknown> | null): string | null {
  if (!body) return 'The request body is not valid JSON.';
  if (typeof body.model !== 'string') return 'model: Field required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: Field required';
  let previous: string | null = null;
  for (const [i, m] of (body.messages as Array<{ role?: unknown; content?: unknown }>).entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && m.role !== 'user') return 'messages: first message must use the "user" role';
    if (m.role === previous) return 'messages: roles must alternate between "user" and "assistant"';
    // text blocks (with cache_control as the API takes it), and the blocks of a tool loop
    const blockOk = (b: TextBlock & { id?: unknown; name?: unknown; tool_use_id?: unknown }) =>
      (b.type === 'text' && !badBlock(b)) ||
      (b.type === 'tool_use' && typeof b.id === 'string' && typeof b.name === 'string') ||
      (b.type === 'tool_result' && typeof b.tool_use_id === 'string' && b.tool_use_id !== '');
    if (typeof m.content === 'string' ? !m.content : !Array.isArray(m.content) || m.content.length === 0 || !(m.content as TextBlock[]).every(blockOk)) return `messages.${i}: text content blocks must be non-empty`;
    previous = m.role as string;
  }
  if (body.system !== undefined) {
    if (!Array.isArray(body.system) || body.system.some(badBlock)) return 'system: text blocks must be non-empty';
  }
  const breakpoints = breakpointCount(body);
  if (breakpoints > MAX_CACHE_BREAKPOINTS) return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`;
  for (const key of Object.keys(body)) {
    if (!['model', 'max_tokens', 'messages', 'system', 'stream', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata', 'thinking', 'tools', 'tool_choice'].includes(key)) return `${key}: Extra inputs are not permitted`;
  }
  return null;
}

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

const routes: (options: FakeAnthropicOptions, cache: AnthropicPromptCache | null, usages: CacheUsage[]) => NativeFakeRoutes = (options, cache, usages) => ({
  versionPath: '/v1',
  refuseKey(req, res) {
    if (options.apiKey !== undefined && options.apiKey !== null && req.headers['x-api-key'] !== options.apiKey) {
      sendJson(res, 401, errorBody('authentication_error', 'invalid x-api-key'));
      return true;
    }
    if (!req.headers['anthropic-version']) {
      sendJson(res, 400, errorBody('invalid_request_error', 'anthropic-version: header is required'));
      return true;
    }
    return false;
  },
  models(url, res, models) {
    if (url.pathname !== '/v1/models') return false;
    const limit = Math.min(1000, Number(url.searchParams.get('limit') ?? 20));
    const after = url.searchParams.get('after_id');
    const start = after ? models.findIndex((m) => m.id === after) + 1 : 0;
    const page = models.slice(start, start + limit);
    sendJson(res, 200, {
      data: page.map((m) => ({ type: 'model', id: m.id, display_name: m.name ?? m.id, created_at: '2025-01-01T00:00:00Z' })),
      has_more: start + limit < models.length,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
    });
    return true;
  },
  completion: (method, url) => (method === 'POST' && url.pathname === '/v1/messages' ? { model: '', stream: false } : null),
  refuseBody(body, _model, models, res) {
    const problem = invalid(body);
    if (problem) {
      sendJson(res, 400, errorBody('invalid_request_error', problem));
      return true;
    }
    if (!models.some((m) => m.id === body!.model)) {
      sendJson(res, 404, errorBody('not_found_error', `model: ${String(body!.model)}`));
      return true;
    }
    return false;
  },
  async answer(res, reply, { id, record }) {
    const body = record.body!;
    const model = String(body.model);
    const stream = body.stream === true;
    if (reply.kind === 'hang') return;
    if (reply.kind === 'error') {
      sendJson(res, reply.status, reply.body ?? errorBody(reply.type ?? errorType(reply.status), reply.message ?? 'The fake provider failed.'), reply.retryAfter ? { 'retry-after': reply.retryAfter } : {});
      return;
    }
    let usage: NativeFakeUsage | null = reply.kind === 'completion' && reply.usage !== undefined ? reply.usage : { input: 42, output: 7 };
    if (cache && !(reply.kind === 'completion' && reply.usage !== undefined)) {
      const used = cache.use(body);
      usages.push(used);
      usage = { input: used.input_tokens, cacheRead: used.cache_read_input_tokens, cacheWrite: used.cache_creation_input_tokens, output: 'content' in reply ? approxTokens(reply.content) : 0 };
    }
    const startUsage = {
      input_tokens: usage?.input ?? 0,
      cache_creation_input_tokens: usage?.cacheWrite ?? 0,
      cache_read_input_tokens: usage?.cacheRead ?? 0,
      output_tokens: 1,
    };
    if (!stream) {
      if (reply.kind !== 'completion') {
        if (reply.kind === 'stall') return;
        res.socket?.destroy();
        return;
      }
      sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: reply.model ?? model,
        content: [
          ...(reply.content || !reply.toolCalls?.length ? [{ type: 'text', text: reply.content }] : []),
          ...(reply.toolCalls ?? []).map((c, i) => ({ type: 'tool_use', id: c.id ?? `toolu_fake_${i + 1}`, name: c.name, input: c.arguments })),
        ],
        stop_reason: reply.stopReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn'),
        stop_sequence: null,
        usage: { ...startUsage, output_tokens: usage?.output ?? 0 },
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    res.write(event('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: (reply.kind === 'completion' && reply.model) || model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } }));
    let index = 0;
    if (reply.kind === 'completion' && reply.reasoning) {
      res.write(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } }));
      res.write(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: reply.reasoning } }));
      res.write(event('content_block_stop', { type: 'content_block_stop', index }));
      index++;
    }
    res.write(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    res.write(event('ping', { type: 'ping' }));
    for (const piece of split(reply.content, reply.chunks ?? 3)) {
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (record.aborted || res.destroyed) return;
      res.write(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }));
    }
    if (reply.kind === 'stall') return;
    if (reply.kind === 'stream-error') {
      res.end(event('error', errorBody(reply.type ?? 'overloaded_error', reply.message ?? 'Overloaded')));
      return;
    }
    if (reply.kind === 'drop') {
      await sleep(reply.chunkDelayMs ?? 20);
      if (reply.how === 'end') res.end();
      else res.socket?.destroy();
      return;
    }
    res.write(event('content_block_stop', { type: 'content_block_stop', index }));
    for (const [i, call] of (reply.toolCalls ?? []).entries()) {
      index++;
      const json = JSON.stringify(call.arguments);
      res.write(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id ?? `toolu_fake_${i + 1}`, name: call.name, input: {} } }));
      for (const piece of [json.slice(0, json.length >> 1), json.slice(json.length >> 1)]) {
        res.write(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }));
      }
      res.write(event('content_block_stop', { type: 'content_block_stop', index }));
    }
    const stop = reply.stopReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn');
    res.write(event('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage?.output ?? 0 } }));
    res.end(event('message_stop', { type: 'message_stop' }));
  },
  notFound: (res: ServerResponse, path: string) => sendJson(res, 404, errorBody('not_found_error', `Not found: ${path}`)),
});

export type FakeAnthropic = NativeFake & {
  /** With `promptCache`: the cache usage of each completion request, in order. */
  cacheUsage: CacheUsage[];
};

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const cache = options.promptCache ? new AnthropicPromptCache(typeof options.promptCache === 'object' ? options.promptCache.now : undefined) : null;
  const cacheUsage: CacheUsage[] = [];
  const fake = await startNativeFake(
    routes(options, cache, cacheUsage),
    options.models ?? [
      { id: 'claude-sonnet-4-5', name: 'Claude Sonnet 4.5' },
      { id: 'claude-haiku-4-5', name: 'Claude Haiku 4.5' },
    ],
    'msg_fake_',
  );
  // with the cache on, an unscripted reply reports the usage the cache rules give
  if (cache) fake.setHandler(() => ({ kind: 'completion', content: 'echo from the fake' }));
  return Object.assign(fake, { cacheUsage });
}

export type { NativeFakeReply as FakeAnthropicReply };
