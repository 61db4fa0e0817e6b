import {
  AiAbortedError,
  type AiDeadline,
  AiInvalidResponseError,
  AiNetworkError,
  AiProviderError,
  AiTimeoutError,
  AiUpstreamError,
  providerError,
} from './errors.ts';
import type { IncomingMessage } from 'node:http';
import { AiUrlRefusedError, ERROR_BODY_MAX_BYTES, guardedFetch, guardedRequest, type GuardedRequest, type PrivateNetworkAccess, readBounded, responseOf } from './outbound.ts';
import { SseParser } from './sse.ts';
import type { ProviderKind } from './kinds.ts';
import { nativeComplete, nativeListModels, nativeStream } from './native.ts';

/**
 * A client for OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, vLLM, LM Studio…)
 * through the guarded outbound client (`outbound.ts`). No metering here: see `metered.ts` for
 * billing and usage records.
 */

/** Default cap of one reply's text (AI_REPLY_MAX_BYTES): 256 KB. */
export const DEFAULT_REPLY_MAX_BYTES = 256 * 1024;
/** A JSON model list larger than this is refused. */
export const MODEL_LIST_MAX_BYTES = 16 * 1024 * 1024;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  /** An assistant message's tool calls (sent back with the next request of a tool loop). */
  toolCalls?: ToolCall[];
  /** A `tool` message: the call it answers. */
  toolCallId?: string;
  /**
   * A prompt-cache breakpoint after this message (issue 47): the end of the prompt's stable head,
   * and the latest history message. Anthropic's kind sends `cache_control` there; on the
   * OpenAI-compatible kind only OpenRouter's Claude models get it (its content-part convention);
   * every other provider gets the message without it.
   */
  cache?: true;
}

/** A function the model may call (OpenAI's `tools: [{ type: 'function', function }]`). */
export interface ToolDefinition {
  name: string;
  description: string;
  /** The arguments' JSON Schema (an object schema). */
  parameters: Record<string, unknown>;
}

/** One call the model asked for: `arguments` is the JSON text the model wrote (never trusted: parse and validate it). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** Output cap (`max_tokens`). */
  maxTokens?: number;
  temperature?: number;
  /** `false` asks the provider not to reason (OpenRouter's `reasoning: { enabled: false }`); omitted leaves the default. */
  reasoning?: boolean;
  /** Extra provider-specific body fields, merged last. */
  extraBody?: Record<string, unknown>;
  /** Functions the model may call; its calls arrive as `ChatResult.toolCalls`. */
  tools?: ToolDefinition[];
  /** `auto` (default when tools are given), `none` or `required`. */
  toolChoice?: 'auto' | 'none' | 'required';
}

/** Where a request goes: `baseUrl` includes the version path (`https://api.openai.com/v1`, `http://localhost:11434/v1`). */
export interface ProviderEndpoint {
  baseUrl: string;
  /** Bearer key; null for local servers that take none. */
  apiKey: string | null;
  headers?: Record<string, string>;
  /** Whether the host may be a private network address (AI_PRIVATE_NETWORK_ACCESS); unset: `deny`. */
  privateNetwork?: PrivateNetworkAccess;
  /** The wire protocol (kinds.ts); unset: `openai`. Anthropic and Gemini go through native.ts with the same guard and deadlines. */
  kind?: ProviderKind;
}

export interface CallOptions {
  /** The caller's abort (user pressed stop, request went away). */
  signal?: AbortSignal;
  /** Deadline for the whole call including the streamed body. */
  timeoutMs?: number;
  /**
   * Deadline for the answer's first byte of body, from the request's start (AI_FIRST_BYTE_TIMEOUT_MS):
   * a provider that never answers (no status line, or a status line and nothing after it).
   */
  firstByteTimeoutMs?: number;
  /** Deadline between two network reads of the body after the first (AI_IDLE_TIMEOUT_MS): a provider that stops sending part-way. */
  idleTimeoutMs?: number;
  /** Cap of the reply's text in UTF-8 bytes (AI_REPLY_MAX_BYTES): a stream is cut there and marked truncated. */
  maxReplyBytes?: number;
}

export interface Usage {
  /** All prompt tokens, cached ones included. */
  tokensIn: number;
  tokensOut: number;
  /** Of `tokensIn`, those read from the provider's prompt cache (Anthropic cache_read_input_tokens, Gemini cachedContentTokenCount), when reported. */
  cachedTokensIn?: number;
  /** Of `tokensIn`, those written to the provider's prompt cache (Anthropic cache_creation_input_tokens), when reported. */
  cacheWriteTokensIn?: number;
}

export interface ChatResult {
  id: string | null;
  /** The model the request named. */
  model: string;
  /** The model the provider says answered (routers report the routed model), when it said. */
  providerModel: string | null;
  content: string;
  /** A structured refusal (`message.refusal`), when the model refused. */
  refusal: string | null;
  finishReason: string | null;
  /** Usage as reported by the provider; null when it reported none. */
  usage: Usage | null;
  /** True when the reply reached the reply cap and the rest was not read. */
  truncated?: boolean;
  /** The functions the model called (only when the request named `tools`). */
  toolCalls?: ToolCall[];
}

/** Text deltas, reasoning deltas (`delta.reasoning` or `delta.reasoning_content`, never part of the content), then one `done`. */
export type ChatStreamEvent = { type: 'delta'; text: string } | { type: 'reasoning'; text: string } | { type: 'done'; result: ChatResult };

/** A message as the OpenAI-compatible protocol writes it: tool calls and tool answers in their wire shape. */
function wireMessage(m: ChatMessage): ChatMessage | Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content };
  if (m.toolCalls?.length) {
    return {
      role: m.role,
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    };
  }
  if (m.toolCalls || m.toolCallId !== undefined) return m.name === undefined ? { role: m.role, content: m.content } : { role: m.role, content: m.content, name: m.name };
  return m;
}

/** OpenRouter, whose Claude models (`anthropic/...`) take Anthropic's `cache_control` on content parts. */
export function isOpenRouterClaude(baseUrl: string | undefined, model: string): boolean {
  if (!baseUrl || !model.startsWith('anthropic/')) return false;
  try {
    const host = new URL(baseUrl).hostname.toLowerCase();
    return host === 'openrouter.ai' || host.endsWith('.openrouter.ai');
  } catch {
    return false;
  }
}

/**
 * The messages as the OpenAI-compatible kind sends them: a message marked `cache` becomes, for
 * OpenRouter's Claude models, one text content part with `cache_control: {type: "ephemeral"}`
 * (OpenRouter's documented convention); everywhere else the mark is left out.
 */
function wireMessages(messages: readonly ChatMessage[], openRouterClaude: boolean, tooling: boolean): unknown[] {
  if (!tooling && !messages.some((m) => m.cache)) return messages as ChatMessage[];
  return messages.map(({ cache, ...m }) => {
    const wire = tooling ? wireMessage(m) : m;
    return cache && openRouterClaude && m.content ? { ...wire, content: [{ type: 'text', text: m.content, cache_control: { type: 'ephemeral' } }] } : wire;
  });
}

export function requestBody(request: ChatRequest, stream: boolean, baseUrl?: string): Record<string, unknown> {
  const tooling = request.tools !== undefined || request.messages.some((m) => m.role === 'tool' || m.toolCalls !== undefined);
  const body: Record<string, unknown> = { model: request.model, messages: wireMessages(request.messages, isOpenRouterClaude(baseUrl, request.model), tooling) };
  if (request.tools?.length) {
    body.tools = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
    body.tool_choice = request.toolChoice ?? 'auto';
  }
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.reasoning !== undefined) body.reasoning = { enabled: request.reasoning };
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { ...body, ...request.extraBody };
}

/**
 * JSON text of message contents, by the text: a conversation's history is sent again on every
 * turn, and each of its texts is escaped once, not once a turn. Bounded: cleared past 8 M characters.
 */
const contentJson = new Map<string, string>();
let contentJsonChars = 0;
const CONTENT_JSON_MAX_CHARS = 8_000_000;

function jsonOfContent(text: string): string {
  if (text.length < 256) return JSON.stringify(text);
  let json = contentJson.get(text);
  if (json === undefined) {
    json = JSON.stringify(text);
    if (contentJsonChars + text.length + json.length > CONTENT_JSON_MAX_CHARS) {
      contentJson.clear();
      contentJsonChars = 0;
    }
    contentJson.set(text, json);
    contentJsonChars += text.length + json.length;
  }
  return json;
}

/** The request body as JSON text: the same value as JSON.stringify(body), with message texts from {@link jsonOfContent}. */
export function serializeBody(body: Record<string, unknown>): string {
  const messages = body.messages;
  if (!Array.isArray(messages)) return JSON.stringify(body);
  const parts: string[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Record<string, unknown>;
    const plain = m !== null && typeof m === 'object' && typeof m.role === 'string' && typeof m.content === 'string' && Object.keys(m).length === 2;
    parts[i] = plain ? `{"role":${JSON.stringify(m.role)},"content":${jsonOfContent(m.content as string)}}` : JSON.stringify(m);
  }
  // the other fields as JSON.stringify writes them, the messages in their place (a key's quotes are
  // never unescaped inside a string value, so the first `"messages":0` is the key)
  return JSON.stringify({ ...body, messages: 0 }).replace('"messages":0', () => `"messages":[${parts.join(',')}]`);
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/**
 * The usage of an OpenAI-compatible answer. Cached prompt tokens: `prompt_tokens_details.cached_tokens`
 * (OpenAI, OpenRouter), or DeepSeek's `prompt_cache_hit_tokens`; tokens written to the cache:
 * `prompt_tokens_details.cache_write_tokens` (OpenRouter on models that bill cache writes). Both are
 * parts of `prompt_tokens`.
 */
function parseUsage(raw: unknown): Usage | null {
  if (!raw || typeof raw !== 'object') return null;
  const u = raw as { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: unknown; prompt_cache_hit_tokens?: unknown };
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  const usage: Usage = { tokensIn: u.prompt_tokens, tokensOut: u.completion_tokens };
  const details = u.prompt_tokens_details && typeof u.prompt_tokens_details === 'object' ? (u.prompt_tokens_details as Record<string, unknown>) : {};
  const cached = count(details.cached_tokens) ?? count(u.prompt_cache_hit_tokens);
  const written = count(details.cache_write_tokens);
  if (cached !== undefined) usage.cachedTokensIn = Math.min(cached, usage.tokensIn);
  if (written !== undefined) usage.cacheWriteTokensIn = Math.min(written, usage.tokensIn - (usage.cachedTokensIn ?? 0));
  return usage;
}

/**
 * An abort controller joining the caller's signal and the call's deadlines, reporting which one
 * fired: the whole call (`timeoutMs`), the wait for the answer's first byte of body
 * (`firstByteMs`, from the request's start) and the wait between two network reads of the body
 * after it (`idleMs`). The reader calls `progress()` on each read and `arrived()` once the answer is
 * complete (no more waiting: only the total deadline and the caller's signal stay).
 */
export class Deadline {
  readonly controller = new AbortController();
  timedOut: AiDeadline | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The first-byte timer until the first read, then the idle timer (re-armed on every read). */
  private wait: ReturnType<typeof setTimeout> | undefined;
  private waiting: 'first-byte' | 'idle' | null = null;
  private readonly onAbort = () => this.controller.abort(this.callerSignal?.reason);

  constructor(
    private readonly callerSignal: AbortSignal | undefined,
    readonly timeoutMs: number | undefined,
    private readonly firstByteMs?: number,
    private readonly idleMs?: number,
  ) {
    if (callerSignal?.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.onAbort, { once: true });
    if (timeoutMs !== undefined) this.timer = setTimeout(() => this.expire('total'), timeoutMs);
    if (firstByteMs !== undefined) {
      this.waiting = 'first-byte';
      this.wait = setTimeout(() => this.expire('first-byte'), firstByteMs);
    }
  }

  private expire(deadline: AiDeadline): void {
    if (this.timedOut || this.controller.signal.aborted) return;
    this.timedOut = deadline;
    this.controller.abort(new DOMException('deadline', 'TimeoutError'));
  }

  /** A network read of the body arrived: the idle deadline starts (again). */
  progress(): void {
    if (this.waiting === 'idle') {
      this.wait!.refresh();
      return;
    }
    clearTimeout(this.wait);
    this.wait = undefined;
    this.waiting = null;
    if (this.idleMs !== undefined) {
      this.waiting = 'idle';
      this.wait = setTimeout(() => this.expire('idle'), this.idleMs);
    }
  }

  /** The answer is complete: nothing is waited for any more. */
  arrived(): void {
    clearTimeout(this.wait);
    this.wait = undefined;
    this.waiting = null;
  }

  /** Maps an exception thrown while the call was in flight to the right typed error. */
  translate(err: unknown): unknown {
    if (this.timedOut) {
      const ms = this.timedOut === 'first-byte' ? this.firstByteMs : this.timedOut === 'idle' ? this.idleMs : this.timeoutMs;
      return new AiTimeoutError(ms ?? 0, { cause: err, deadline: this.timedOut });
    }
    if (this.controller.signal.aborted) return new AiAbortedError({ cause: err });
    if (err instanceof AiUrlRefusedError || err instanceof AiProviderError || err instanceof AiInvalidResponseError) return err;
    // connection failures (refused, reset, DNS): the details (addresses) go to the log, not the user
    if (err instanceof TypeError || (err instanceof Error && typeof (err as { code?: unknown }).code === 'string')) {
      return new AiNetworkError('The AI provider could not be reached.', { cause: err });
    }
    return err;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.arrived();
    this.callerSignal?.removeEventListener('abort', this.onAbort);
  }
}

/** Sends one request through the guard; any answer but a 2xx (a 3xx included: redirects are not followed) is a provider error. */
async function send(endpoint: ProviderEndpoint, path: string, method: 'GET' | 'POST', body: Record<string, unknown> | undefined, deadline: Deadline): Promise<Response> {
  const res = await guardedFetch(urlOf(endpoint, path), requestInit(endpoint, method, body, deadline));
  if (res.status < 200 || res.status > 299) {
    const { text } = await readBounded(res, ERROR_BODY_MAX_BYTES, () => deadline.progress());
    throw providerError(res.status, text, body?.model as string | undefined);
  }
  return res;
}

/** The same for a streamed completion: node's response, read one network read at a time. */
async function sendStream(endpoint: ProviderEndpoint, path: string, body: Record<string, unknown>, deadline: Deadline): Promise<IncomingMessage> {
  const res = await guardedRequest(urlOf(endpoint, path), requestInit(endpoint, 'POST', body, deadline));
  const status = res.statusCode ?? 502;
  if (status < 200 || status > 299) {
    const { text } = await readBounded(responseOf(res), ERROR_BODY_MAX_BYTES, () => deadline.progress());
    throw providerError(status < 200 || status > 599 ? 502 : status, text, body.model as string | undefined);
  }
  return res;
}

const urlOf = (endpoint: ProviderEndpoint, path: string) => `${endpoint.baseUrl.replace(/\/+$/, '')}${path}`;

function requestInit(endpoint: ProviderEndpoint, method: 'GET' | 'POST', body: Record<string, unknown> | undefined, deadline: Deadline): GuardedRequest {
  const headers: Record<string, string> = {
    accept: body?.stream ? 'text/event-stream' : 'application/json',
    ...(body ? { 'content-type': 'application/json' } : {}),
    ...endpoint.headers,
  };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  return { method, headers, body: body ? serializeBody(body) : undefined, signal: deadline.controller.signal, privateNetwork: endpoint.privateNetwork ?? 'deny' };
}

/** The longest body a non-streamed completion may have: the reply cap with room for JSON escapes and the envelope. */
export const completionBodyBound = (maxReplyBytes: number) => maxReplyBytes * 6 + 64 * 1024;

/**
 * Provider text made storable: U+0000 removed and unpaired surrogates replaced by U+FFFD
 * (PostgreSQL text can hold neither). Stream deltas lose U+0000 at once; the whole reply is
 * cleaned once more at the end, since a surrogate pair may arrive split across two deltas.
 */
export function cleanProviderText(text: string): string {
   
  return text.replace(/\u0000/g, '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes (never splitting a character). */
export function clipUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return text.slice(0, end);
}

/** One non-streaming chat completion. */
export async function completeChat(endpoint: ProviderEndpoint, request: ChatRequest, options: CallOptions = {}): Promise<ChatResult> {
  if (endpoint.kind === 'anthropic' || endpoint.kind === 'gemini') return nativeComplete(endpoint, request, options);
  const deadline = new Deadline(options.signal, options.timeoutMs, options.firstByteTimeoutMs, options.idleTimeoutMs);
  try {
    const res = await send(endpoint, '/chat/completions', 'POST', requestBody(request, false, endpoint.baseUrl), deadline);
    const cap = options.maxReplyBytes ?? DEFAULT_REPLY_MAX_BYTES;
    const { text, truncated: tooLarge } = await readBounded(res, completionBodyBound(cap), () => deadline.progress());
    deadline.arrived();
    if (tooLarge) throw new AiInvalidResponseError('The AI provider sent an answer larger than the reply limit.');
    let json: {
      id?: string;
      model?: string;
      choices?: Array<{ message?: { content?: string | null; refusal?: string | null; tool_calls?: unknown }; finish_reason?: string | null }>;
      usage?: unknown;
      error?: unknown;
    };
    try {
      json = JSON.parse(text);
    } catch {
      throw new AiInvalidResponseError('AI provider answered 200 with a body that is not JSON');
    }
    if (json.error) throw providerError(200, text, request.model);
    const choice = json.choices?.[0];
    if (!choice) throw new AiInvalidResponseError('AI provider answered 200 without choices');
    const content = typeof choice.message?.content === 'string' ? choice.message.content : '';
    const clipped = clipUtf8(content, cap);
    const result: ChatResult = {
      id: json.id ?? null,
      model: request.model,
      providerModel: json.model ?? null,
      content: cleanProviderText(clipped),
      truncated: clipped.length < content.length,
      refusal: choice.message?.refusal ?? null,
      finishReason: choice.finish_reason ?? null,
      usage: parseUsage(json.usage),
    };
    const calls = parseToolCalls(choice.message?.tool_calls);
    if (calls.length) result.toolCalls = calls;
    return result;
  } catch (err) {
    throw deadline.translate(err);
  } finally {
    deadline.dispose();
  }
}

/** The most tool calls one answer may carry, and the longest arguments text of one call (a model looping is cut, not stored). */
export const TOOL_CALLS_MAX = 64;
export const TOOL_ARGUMENTS_MAX_CHARS = 256 * 1024;

/** A completion's `message.tool_calls`, each call's fields checked (a malformed call is dropped, never guessed). */
export function parseToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const out: ToolCall[] = [];
  for (const item of raw.slice(0, TOOL_CALLS_MAX)) {
    const call = item as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
    const name = call?.function?.name;
    if (typeof name !== 'string' || !name) continue;
    const args = call?.function?.arguments;
    const text = typeof args === 'string' ? args : args && typeof args === 'object' ? JSON.stringify(args) : '';
    out.push({ id: typeof call?.id === 'string' && call.id ? call.id : `call_${out.length + 1}`, name: name.slice(0, 200), arguments: text.slice(0, TOOL_ARGUMENTS_MAX_CHARS) });
  }
  return out;
}

/** Tool calls streamed as fragments (`delta.tool_calls[{ index, id?, function: { name?, arguments? } }]`), joined by index. */
export class ToolCallJoiner {
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();
  push(raw: unknown): void {
    if (!Array.isArray(raw)) return;
    for (const item of raw) {
      const part = item as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
      const index = typeof part?.index === 'number' ? part.index : this.calls.size;
      if (index < 0 || index >= TOOL_CALLS_MAX) continue;
      const call = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (typeof part?.id === 'string' && part.id) call.id = part.id;
      if (typeof part?.function?.name === 'string') call.name += part.function.name;
      if (typeof part?.function?.arguments === 'string' && call.arguments.length < TOOL_ARGUMENTS_MAX_CHARS) call.arguments += part.function.arguments;
      this.calls.set(index, call);
    }
  }
  result(): ToolCall[] {
    return parseToolCalls([...this.calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => ({ id: c.id, function: { name: c.name, arguments: c.arguments } })));
  }
}

interface StreamChunk {
  id?: string;
  model?: string;
  choices?: Array<{
    delta?: { content?: string | null; refusal?: string | null; reasoning?: string | null; reasoning_content?: string | null; tool_calls?: unknown };
    finish_reason?: string | null;
  }>;
  usage?: unknown;
  error?: { message?: string; code?: number | string };
}

/**
 * A streaming chat completion (SSE). Yields text deltas, then one `done` event with the whole
 * result (usage included when the provider sends it). Breaking out of the loop aborts the request.
 * The body is parsed one network read at a time (SseParser) straight from node's response; a body
 * read to its end leaves its connection to the keep-alive pool, any other is destroyed.
 */
export async function* streamChat(endpoint: ProviderEndpoint, request: ChatRequest, options: CallOptions = {}): AsyncGenerator<ChatStreamEvent, void, void> {
  if (endpoint.kind === 'anthropic' || endpoint.kind === 'gemini') {
    yield* nativeStream(endpoint, request, options);
    return;
  }
  const deadline = new Deadline(options.signal, options.timeoutMs, options.firstByteTimeoutMs, options.idleTimeoutMs);
  let finished = false;
  /** `[DONE]` arrived: the provider ended the stream on purpose. */
  let ended = false;
  let res: IncomingMessage | undefined;
  const result: ChatResult = { id: null, model: request.model, providerModel: null, content: '', refusal: null, finishReason: null, usage: null };
  try {
    try {
      res = await sendStream(endpoint, '/chat/completions', requestBody(request, true, endpoint.baseUrl), deadline);
    } catch (err) {
      throw deadline.translate(err);
    }
    // read errors reach the loop through the iterator; one after the loop stopped reading (an abort) is expected
    res.on('error', () => {});
    const cap = options.maxReplyBytes ?? DEFAULT_REPLY_MAX_BYTES;
    let contentBytes = 0;
    let reasoningBytes = 0;
    // a body of anything but reply text (reasoning, noise) is bounded too, then refused
    const parser = new SseParser({ maxBytes: cap * 8 + 1024 * 1024, maxEventBytes: 1024 * 1024 });
    const reads = res.iterator({ destroyOnReturn: false }) as AsyncIterableIterator<Buffer>;
    let bodyEnded = false;
    const toolCalls = new ToolCallJoiner();
    // The deltas of one network read leave as one event (consecutive ones of a kind joined): a
    // provider streaming faster than it is read costs one event per read, not one per token. The
    // reply's first text is the exception: it leaves as soon as it is parsed.
    let pendingKind: 'delta' | 'reasoning' | null = null;
    let pending = '';
    reading: while (!bodyEnded) {
      if (pendingKind) {
        yield { type: pendingKind, text: pending };
        pendingKind = null;
        pending = '';
      }
      let events: string[];
      try {
        const next = await reads.next();
        bodyEnded = next.done === true;
        deadline.progress();
        events = next.done ? parser.end() : parser.push(next.value);
      } catch (err) {
        throw deadline.translate(err);
      }
      for (const data of events) {
        if (data === '[DONE]') {
          ended = true;
          break reading;
        }
        if (pendingKind && pending.length >= 16_384) {
          // a long run is not held back
          yield { type: pendingKind, text: pending };
          pendingKind = null;
          pending = '';
        }
        let chunk: StreamChunk;
        try {
          chunk = JSON.parse(data) as StreamChunk;
        } catch {
          continue; // keep-alive noise some proxies send
        }
        if (chunk.error) {
          // what arrived before the error is seen before it
          if (pendingKind) yield { type: pendingKind, text: pending };
          pendingKind = null;
          const status = typeof chunk.error.code === 'number' ? chunk.error.code : 200;
          const err = providerError(status, JSON.stringify({ error: chunk.error }), request.model);
          // an unclassified error inside a stream is the upstream's failure
          throw err.constructor === AiProviderError ? new AiUpstreamError(err) : err;
        }
        result.id ??= chunk.id ?? null;
        result.providerModel ??= chunk.model ?? null;
        const usage = parseUsage(chunk.usage);
        if (usage) result.usage = usage;
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        if (choice.finish_reason) result.finishReason = choice.finish_reason;
        if (choice.delta?.refusal) result.refusal = (result.refusal ?? '') + choice.delta.refusal;
        if (choice.delta?.tool_calls) toolCalls.push(choice.delta.tool_calls);
        const thought = choice.delta?.reasoning ?? choice.delta?.reasoning_content;
        if (typeof thought === 'string' && thought && reasoningBytes < cap) {
          reasoningBytes += Buffer.byteLength(thought);
          if (pendingKind === 'delta') {
            yield { type: 'delta', text: pending };
            pending = '';
          }
          pendingKind = 'reasoning';
          pending += thought;
        }
        const content = choice.delta?.content;
        const delta = typeof content === 'string' ? (content.includes('\u0000') ? content.replace(/\u0000/g, '') : content) : null;
        if (delta) {
          const size = Buffer.byteLength(delta);
          const text = contentBytes + size > cap ? clipUtf8(delta, cap - contentBytes) : delta;
          contentBytes += text === delta ? size : Buffer.byteLength(text);
          result.content += text;
          if (text) {
            if (pendingKind === 'reasoning') {
              yield { type: 'reasoning', text: pending };
              pendingKind = null;
              pending = '';
            }
            if (result.content === text) yield { type: 'delta', text }; // the reply's first text leaves at once (time to first token)
            else {
              pendingKind = 'delta';
              pending += text;
            }
          }
          if (text.length < delta.length || contentBytes >= cap) {
            // the reply cap: stop reading, keep what arrived, and say it was cut
            result.truncated = true;
            result.finishReason = 'length';
            ended = true;
            break reading;
          }
        }
      }
    }
    // the answer is in (or cut at the cap): what follows is the consumer's time, not the provider's
    deadline.arrived();
    if (pendingKind) yield { type: pendingKind, text: pending };
    // A body that closes with neither a finish reason nor [DONE] was cut off (a proxy timing out,
    // a connection closed between chunks): the text so far is partial, never a finished reply.
    if (!ended && !result.finishReason) throw new AiInvalidResponseError('AI stream ended before the reply was finished');
    finished = true;
    result.content = cleanProviderText(result.content);
    const calls = toolCalls.result();
    if (calls.length) result.toolCalls = calls;
    yield { type: 'done', result };
  } finally {
    // closed early, or cut at the reply cap: the rest of the body is not wanted (the abort destroys the connection)
    if (!finished || result.truncated) deadline.controller.abort(new DOMException('stream closed early', 'AbortError'));
    else if (res && !res.complete) drainForReuse(res);
    deadline.dispose();
  }
}

/**
 * After `[DONE]` the body's last bytes (the chunked encoding's end) may still be on the way: they
 * are read and dropped so that the connection returns to the pool, for at most a second; a
 * provider that keeps sending loses its connection instead.
 */
export function drainForReuse(res: IncomingMessage): void {
  const timer = setTimeout(() => res.destroy(), 1000);
  timer.unref();
  res.once('close', () => clearTimeout(timer));
  res.resume();
}

/** Collects a stream into its final result, passing each delta to `onDelta`. */
export async function collectStream(events: AsyncIterable<ChatStreamEvent>, onDelta?: (text: string) => void): Promise<ChatResult> {
  for await (const event of events) {
    if (event.type === 'delta') onDelta?.(event.text);
    else if (event.type === 'done') return event.result;
  }
  throw new AiInvalidResponseError('AI stream ended without a result');
}

/** Lists a provider's models (`GET {baseUrl}/models`), for the model catalogue. */
export async function listModels(
  endpoint: ProviderEndpoint,
  options: CallOptions = {},
): Promise<Array<{ id: string; name: string; contextLength: number | null; ownedBy: string | null }>> {
  if (endpoint.kind === 'anthropic' || endpoint.kind === 'gemini') return nativeListModels(endpoint, options);
  const deadline = new Deadline(options.signal, options.timeoutMs, options.firstByteTimeoutMs, options.idleTimeoutMs);
  try {
    const res = await send(endpoint, '/models', 'GET', undefined, deadline);
    const { text, truncated } = await readBounded(res, MODEL_LIST_MAX_BYTES, () => deadline.progress());
    deadline.arrived();
    if (truncated) throw new AiInvalidResponseError('The AI provider sent a model list larger than the limit.');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AiInvalidResponseError('The AI provider sent a model list that is not JSON.');
    }
    const json = parsed as { data?: Array<{ id?: unknown; name?: unknown; context_length?: unknown; owned_by?: unknown }> };
    return (json.data ?? [])
      .filter((m) => typeof m.id === 'string')
      .map((m) => ({
        id: m.id as string,
        name: typeof m.name === 'string' ? m.name : (m.id as string),
        contextLength: typeof m.context_length === 'number' ? m.context_length : null,
        ownedBy: typeof m.owned_by === 'string' ? m.owned_by : null,
      }));
  } catch (err) {
    throw deadline.translate(err);
  } finally {
    deadline.dispose();
  }
}

/** The largest spoken reply read from a provider (about ten minutes of MP3 at 128 kbit/s). */
export const SPEECH_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Text to speech through an OpenAI-compatible `POST {baseUrl}/audio/speech` (OpenAI's own, and the
 * servers that copy it): `{ model, input, voice, response_format }` answered with the audio's
 * bytes. Through the guard and deadlines like every provider call; a body over SPEECH_MAX_BYTES is
 * refused, not cut (a cut MP3 would still play, silently short).
 */
export async function synthesizeSpeech(
  endpoint: ProviderEndpoint,
  request: { model: string; input: string; voice: string; format?: 'mp3' | 'opus' | 'aac' | 'wav' },
  options: CallOptions = {},
): Promise<{ audio: Buffer; contentType: string }> {
  const deadline = new Deadline(options.signal, options.timeoutMs, options.firstByteTimeoutMs, options.idleTimeoutMs);
  try {
    const res = await send(endpoint, '/audio/speech', 'POST', { model: request.model, input: request.input, voice: request.voice, response_format: request.format ?? 'mp3' }, deadline);
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          deadline.progress();
          size += value.byteLength;
          if (size > SPEECH_MAX_BYTES) throw new AiInvalidResponseError('The AI provider sent more audio than the limit.');
          chunks.push(value);
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    }
    deadline.arrived();
    const contentType = res.headers.get('content-type')?.split(';')[0]?.trim() || 'audio/mpeg';
    if (!/^audio\/[\w.+-]+$/.test(contentType)) throw new AiInvalidResponseError('The AI provider did not answer with audio.');
    return { audio: Buffer.concat(chunks), contentType };
  } catch (err) {
    throw deadline.translate(err);
  } finally {
    deadline.dispose();
  }
}
