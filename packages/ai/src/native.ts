import type { IncomingMessage } from 'node:http';
import { anthropicProtocol } from './anthropic.ts';
import {
  type CallOptions,
  type ChatRequest,
  type ChatResult,
  type ChatStreamEvent,
  cleanProviderText,
  clipUtf8,
  completionBodyBound,
  Deadline,
  DEFAULT_REPLY_MAX_BYTES,
  drainForReuse,
  MODEL_LIST_MAX_BYTES,
  type ProviderEndpoint,
  ToolCallJoiner,
  type Usage,
} from './chat.ts';
import { AiInvalidResponseError, AiProviderError, AiUpstreamError, providerError } from './errors.ts';
import { geminiProtocol } from './gemini.ts';
import type { ListedModel, NativeProtocol, StreamStep } from './native-protocol.ts';
import { ERROR_BODY_MAX_BYTES, guardedFetch, guardedRequest, type GuardedRequest, readBounded, responseOf } from './outbound.ts';
import { SseParser } from './sse.ts';

/**
 * The transport of the native protocols (Anthropic Messages, Gemini generateContent): the same
 * guarded outbound client, the same deadlines and abort, the same reply cap and text cleaning as the
 * OpenAI-compatible client in chat.ts; what differs per protocol (paths, headers, bodies, events)
 * lives in anthropic.ts and gemini.ts. completeChat, streamChat and listModels send an endpoint of
 * kind `anthropic` or `gemini` here.
 */

const protocolOf = (endpoint: ProviderEndpoint): NativeProtocol => (endpoint.kind === 'gemini' ? geminiProtocol : anthropicProtocol);

/** The base URL with the protocol's version path when it has no path at all (`https://api.anthropic.com` → `…/v1`). */
function baseOf(endpoint: ProviderEndpoint, protocol: NativeProtocol): string {
  const base = endpoint.baseUrl.replace(/\/+$/, '');
  try {
    if (new URL(base).pathname === '/') return `${base}${protocol.defaultVersionPath}`;
  } catch {
    // the guard refuses it with its own message
  }
  return base;
}

function requestInit(endpoint: ProviderEndpoint, protocol: NativeProtocol, body: Record<string, unknown> | undefined, stream: boolean, deadline: Deadline): GuardedRequest {
  const headers: Record<string, string> = {
    accept: stream ? 'text/event-stream' : 'application/json',
    ...(body ? { 'content-type': 'application/json' } : {}),
    ...protocol.headers(endpoint.apiKey),
    ...endpoint.headers,
  };
  return {
    method: body ? 'POST' : 'GET',
    headers,
    body: body ? JSON.stringify(body) : undefined,
    signal: deadline.controller.signal,
    privateNetwork: endpoint.privateNetwork ?? 'deny',
  };
}

/** Retry-After as seconds (a number of seconds or an HTTP date), or null. */
export function retryAfterSeconds(value: string | null | undefined): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function errorOf(protocol: NativeProtocol, status: number, text: string, retryAfter: string | null | undefined, model: string | undefined): AiProviderError {
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const err = providerError(protocol.errorStatus(status, body), text, model);
  err.retryAfterSeconds = retryAfterSeconds(retryAfter);
  return err;
}

async function sendJson(endpoint: ProviderEndpoint, protocol: NativeProtocol, path: string, body: Record<string, unknown> | undefined, deadline: Deadline, model?: string): Promise<Response> {
  const res = await guardedFetch(`${baseOf(endpoint, protocol)}${path}`, requestInit(endpoint, protocol, body, false, deadline));
  if (res.status < 200 || res.status > 299) {
    const { text } = await readBounded(res, ERROR_BODY_MAX_BYTES, () => deadline.progress());
    throw errorOf(protocol, res.status, text, res.headers.get('retry-after'), model);
  }
  return res;
}

async function readJson(res: Response, max: number, deadline: Deadline, what: string): Promise<unknown> {
  const { text, truncated } = await readBounded(res, max, () => deadline.progress());
  deadline.arrived();
  if (truncated) throw new AiInvalidResponseError(`The AI provider sent ${what} larger than the limit.`);
  try {
    return JSON.parse(text);
  } catch {
    throw new AiInvalidResponseError(`The AI provider sent ${what} that is not JSON.`);
  }
}

/** One non-streamed completion on a native protocol. */
export async function nativeComplete(endpoint: ProviderEndpoint, request: ChatRequest, options: CallOptions = {}): Promise<ChatResult> {
  const protocol = protocolOf(endpoint);
  const deadline = new Deadline(options.signal, options.timeoutMs, options.firstByteTimeoutMs, options.idleTimeoutMs);
  try {
    const res = await sendJson(endpoint, protocol, protocol.completionPath(request, false), protocol.body(request, false), deadline, request.model);
    const cap = options.maxReplyBytes ?? DEFAULT_REPLY_MAX_BYTES;
    const json = await readJson(res, completionBodyBound(cap), deadline, 'an answer');
    const parsed = protocol.parseCompletion(json, request);
    const clipped = clipUtf8(parsed.content, cap);
    return { ...parsed, content: cleanProviderText(clipped), truncated: clipped.length < parsed.content.length };
  } catch (err) {
    throw deadline.translate(err);
  } finally {
    deadline.dispose();
  }
}

/** A streamed completion on a native protocol: the same events as streamChat (text, reasoning, then one `done`). */
export async function* nativeStream(endpoint: ProviderEndpoint, request: ChatRequest, options: CallOptions = {}): AsyncGenerator<ChatStreamEvent, void, void> {
  const protocol = protocolOf(endpoint);
  const deadline = new Deadline(options.signal, options.timeoutMs, options.firstByteTimeoutMs, options.idleTimeoutMs);
  let finished = false;
  /** The provider ended the stream on purpose. */
  let ended = false;
  let res: IncomingMessage | undefined;
  const result: ChatResult = { id: null, model: request.model, providerModel: null, content: '', refusal: null, finishReason: null, usage: null };
  const usage: Partial<Usage> = {};
  const toolCalls = new ToolCallJoiner();
  let wholeCalls = 0;
  try {
    try {
      res = await guardedRequest(`${baseOf(endpoint, protocol)}${protocol.completionPath(request, true)}`, requestInit(endpoint, protocol, protocol.body(request, true), true, deadline));
      const status = res.statusCode ?? 502;
      if (status < 200 || status > 299) {
        const retryAfter = res.headers['retry-after'];
        const { text } = await readBounded(responseOf(res), ERROR_BODY_MAX_BYTES, () => deadline.progress());
        throw errorOf(protocol, status < 200 || status > 599 ? 502 : status, text, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, request.model);
      }
    } catch (err) {
      throw deadline.translate(err);
    }
    res.on('error', () => {});
    const cap = options.maxReplyBytes ?? DEFAULT_REPLY_MAX_BYTES;
    let contentBytes = 0;
    let reasoningBytes = 0;
    const parser = new SseParser({ maxBytes: cap * 8 + 1024 * 1024, maxEventBytes: 1024 * 1024 });
    const reads = res.iterator({ destroyOnReturn: false }) as AsyncIterableIterator<Buffer>;
    let bodyEnded = false;
    while (!bodyEnded && !ended) {
      let events: string[];
      try {
        const next = await reads.next();
        bodyEnded = next.done === true;
        deadline.progress();
        events = next.done ? parser.end() : parser.push(next.value);
      } catch (err) {
        throw deadline.translate(err);
      }
      // the events of one network read leave together, consecutive ones of a kind joined
      const out: Array<{ type: 'delta' | 'reasoning'; text: string }> = [];
      const emit = (type: 'delta' | 'reasoning', text: string) => {
        const last = out.at(-1);
        if (last?.type === type) last.text += text;
        else out.push({ type, text });
      };
      let failure: AiProviderError | null = null;
      for (const data of events) {
        let step: StreamStep;
        try {
          step = protocol.streamStep(JSON.parse(data));
        } catch {
          continue; // keep-alive noise
        }
        if (step.error) {
          const err = errorOf(protocol, step.error.status, step.error.bodyText, null, request.model);
          // an unclassified error inside a stream is the upstream's failure
          failure = err.constructor === AiProviderError ? new AiUpstreamError(err) : err;
          break;
        }
        if (step.id) result.id ??= step.id;
        if (step.providerModel) result.providerModel ??= step.providerModel;
        if (step.usage) Object.assign(usage, step.usage);
        if (step.finishReason) result.finishReason = step.finishReason;
        if (step.refusal) result.refusal = step.refusal;
        if (step.toolCall) toolCalls.push([{ index: step.toolCall.index, id: step.toolCall.id, function: { name: step.toolCall.name, arguments: step.toolCall.arguments } }]);
        for (const call of step.toolCalls ?? []) toolCalls.push([{ index: wholeCalls++, id: call.id, function: { name: call.name, arguments: call.arguments } }]);
        if (step.reasoning && reasoningBytes < cap) {
          reasoningBytes += Buffer.byteLength(step.reasoning);
          emit('reasoning', step.reasoning);
        }
        const delta = step.text ? step.text.replace(/\u0000/g, '') : '';
        if (delta) {
          const size = Buffer.byteLength(delta);
          const text = contentBytes + size > cap ? clipUtf8(delta, cap - contentBytes) : delta;
          contentBytes += text === delta ? size : Buffer.byteLength(text);
          result.content += text;
          if (text) emit('delta', text);
          if (text.length < delta.length || contentBytes >= cap) {
            // the reply cap: stop reading, keep what arrived, and say it was cut
            result.truncated = true;
            result.finishReason = 'length';
            ended = true;
            break;
          }
        }
        if (step.end) {
          ended = true;
          break;
        }
      }
      // what arrived before an error is seen before it
      for (const event of out) yield event;
      if (failure) throw failure;
    }
    deadline.arrived();
    const complete = ended || (protocol.finishEndsStream && result.finishReason !== null);
    if (!complete) throw new AiInvalidResponseError('AI stream ended before the reply was finished');
    if (usage.tokensIn !== undefined && usage.tokensOut !== undefined) result.usage = usage as Usage;
    finished = true;
    result.content = cleanProviderText(result.content);
    const calls = toolCalls.result();
    if (calls.length) result.toolCalls = calls;
    yield { type: 'done', result };
  } finally {
    if (!finished || result.truncated) deadline.controller.abort(new DOMException('stream closed early', 'AbortError'));
    else if (res && !res.complete) drainForReuse(res);
    deadline.dispose();
  }
}

/** A native provider's model list, every page (at most 20 of them). */
export async function nativeListModels(endpoint: ProviderEndpoint, options: CallOptions = {}): Promise<ListedModel[]> {
  const protocol = protocolOf(endpoint);
  const deadline = new Deadline(options.signal, options.timeoutMs, options.firstByteTimeoutMs, options.idleTimeoutMs);
  try {
    const models: ListedModel[] = [];
    let page: string | null = null;
    for (let i = 0; i < 20; i++) {
      const res = await sendJson(endpoint, protocol, protocol.modelsPath(page), undefined, deadline);
      const parsed = protocol.parseModels(await readJson(res, MODEL_LIST_MAX_BYTES, deadline, 'a model list'));
      models.push(...parsed.models);
      page = parsed.next;
      if (!page) break;
    }
    return models;
  } catch (err) {
    throw deadline.translate(err);
  } finally {
    deadline.dispose();
  }
}
