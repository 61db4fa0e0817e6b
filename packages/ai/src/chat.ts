import {
  AiAbortedError,
  AiInvalidResponseError,
  AiNetworkError,
  AiProviderError,
  AiTimeoutError,
  AiUpstreamError,
  providerError,
} from './errors.ts';
import { readServerSentEvents } from './sse.ts';

/**
 * A client for OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, vLLM, LM Studio…)
 * on the global fetch. No metering here: see `metered.ts` for billing and usage records.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  name?: string;
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
}

/** Where a request goes: `baseUrl` includes the version path (`https://api.openai.com/v1`, `http://localhost:11434/v1`). */
export interface ProviderEndpoint {
  baseUrl: string;
  /** Bearer key; null for local servers that take none. */
  apiKey: string | null;
  headers?: Record<string, string>;
}

export interface CallOptions {
  /** The caller's abort (user pressed stop, request went away). */
  signal?: AbortSignal;
  /** Deadline for the whole call including the streamed body. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface Usage {
  tokensIn: number;
  tokensOut: number;
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
}

/** Text deltas, reasoning deltas (`delta.reasoning` or `delta.reasoning_content`, never part of the content), then one `done`. */
export type ChatStreamEvent = { type: 'delta'; text: string } | { type: 'reasoning'; text: string } | { type: 'done'; result: ChatResult };

export function requestBody(request: ChatRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages };
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.reasoning !== undefined) body.reasoning = { enabled: request.reasoning };
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { ...body, ...request.extraBody };
}

function parseUsage(raw: unknown): Usage | null {
  if (!raw || typeof raw !== 'object') return null;
  const u = raw as { prompt_tokens?: unknown; completion_tokens?: unknown };
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  return { tokensIn: u.prompt_tokens, tokensOut: u.completion_tokens };
}

/** An abort controller joining the caller's signal and the deadline, reporting which one fired. */
class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort = () => this.controller.abort(this.callerSignal?.reason);

  constructor(
    private readonly callerSignal: AbortSignal | undefined,
    readonly timeoutMs: number | undefined,
  ) {
    if (callerSignal?.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.onAbort, { once: true });
    if (timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort(new DOMException('deadline', 'TimeoutError'));
      }, timeoutMs);
    }
  }

  /** Maps an exception thrown while the call was in flight to the right typed error. */
  translate(err: unknown): unknown {
    if (this.timedOut) return new AiTimeoutError(this.timeoutMs ?? 0, { cause: err });
    if (this.controller.signal.aborted) return new AiAbortedError({ cause: err });
    if (err instanceof TypeError) return new AiNetworkError(`AI provider unreachable: ${(err.cause as Error | undefined)?.message ?? err.message}`, { cause: err });
    return err;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onAbort);
  }
}

async function post(endpoint: ProviderEndpoint, body: Record<string, unknown>, deadline: Deadline, options: CallOptions): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: body.stream ? 'text/event-stream' : 'application/json', ...endpoint.headers };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  const res = await (options.fetch ?? fetch)(`${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: deadline.controller.signal,
  });
  if (!res.ok) throw providerError(res.status, await res.text(), body.model as string);
  return res;
}

/** One non-streaming chat completion. */
export async function completeChat(endpoint: ProviderEndpoint, request: ChatRequest, options: CallOptions = {}): Promise<ChatResult> {
  const deadline = new Deadline(options.signal, options.timeoutMs);
  try {
    const res = await post(endpoint, requestBody(request, false), deadline, options);
    const text = await res.text();
    let json: {
      id?: string;
      model?: string;
      choices?: Array<{ message?: { content?: string | null; refusal?: string | null }; finish_reason?: string | null }>;
      usage?: unknown;
      error?: unknown;
    };
    try {
      json = JSON.parse(text);
    } catch {
      throw new AiInvalidResponseError(`AI provider answered 200 with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    if (json.error) throw providerError(200, text, request.model);
    const choice = json.choices?.[0];
    if (!choice) throw new AiInvalidResponseError('AI provider answered 200 without choices');
    return {
      id: json.id ?? null,
      model: request.model,
      providerModel: json.model ?? null,
      content: choice.message?.content ?? '',
      refusal: choice.message?.refusal ?? null,
      finishReason: choice.finish_reason ?? null,
      usage: parseUsage(json.usage),
    };
  } catch (err) {
    throw deadline.translate(err);
  } finally {
    deadline.dispose();
  }
}

interface StreamChunk {
  id?: string;
  model?: string;
  choices?: Array<{ delta?: { content?: string | null; refusal?: string | null; reasoning?: string | null; reasoning_content?: string | null }; finish_reason?: string | null }>;
  usage?: unknown;
  error?: { message?: string; code?: number | string };
}

/**
 * A streaming chat completion (SSE). Yields text deltas, then one `done` event with the whole
 * result (usage included when the provider sends it). Breaking out of the loop aborts the request.
 */
export async function* streamChat(endpoint: ProviderEndpoint, request: ChatRequest, options: CallOptions = {}): AsyncGenerator<ChatStreamEvent, void, void> {
  const deadline = new Deadline(options.signal, options.timeoutMs);
  let finished = false;
  /** `[DONE]` arrived: the provider ended the stream on purpose. */
  let ended = false;
  let events: AsyncGenerator<string, void, void> | undefined;
  const result: ChatResult = { id: null, model: request.model, providerModel: null, content: '', refusal: null, finishReason: null, usage: null };
  try {
    let res: Response;
    try {
      res = await post(endpoint, requestBody(request, true), deadline, options);
    } catch (err) {
      throw deadline.translate(err);
    }
    if (!res.body) throw new AiInvalidResponseError('AI provider answered 200 without a body');
    events = readServerSentEvents(res.body);
    for (;;) {
      let next: IteratorResult<string>;
      try {
        next = await events.next();
      } catch (err) {
        throw deadline.translate(err);
      }
      if (next.done) break;
      const data = next.value;
      if (data === '[DONE]') {
        ended = true;
        break;
      }
      let chunk: StreamChunk;
      try {
        chunk = JSON.parse(data) as StreamChunk;
      } catch {
        continue; // keep-alive noise some proxies send
      }
      if (chunk.error) {
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
      const thought = choice.delta?.reasoning ?? choice.delta?.reasoning_content;
      if (thought) yield { type: 'reasoning', text: thought };
      const text = choice.delta?.content;
      if (text) {
        result.content += text;
        yield { type: 'delta', text };
      }
    }
    // A body that closes with neither a finish reason nor [DONE] was cut off (a proxy timing out,
    // a connection closed between chunks): the text so far is partial, never a finished reply.
    if (!ended && !result.finishReason) throw new AiInvalidResponseError('AI stream ended before the reply was finished');
    finished = true;
    yield { type: 'done', result };
  } finally {
    if (!finished) deadline.controller.abort(new DOMException('stream closed early', 'AbortError'));
    await events?.return().catch(() => {});
    deadline.dispose();
  }
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
  const deadline = new Deadline(options.signal, options.timeoutMs);
  try {
    const headers: Record<string, string> = { accept: 'application/json', ...endpoint.headers };
    if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
    const res = await (options.fetch ?? fetch)(`${endpoint.baseUrl.replace(/\/+$/, '')}/models`, { headers, signal: deadline.controller.signal });
    const text = await res.text();
    if (!res.ok) throw providerError(res.status, text);
    const json = JSON.parse(text) as { data?: Array<{ id?: unknown; name?: unknown; context_length?: unknown; owned_by?: unknown }> };
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
