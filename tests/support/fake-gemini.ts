import type { ServerResponse } from 'node:http';
import { type NativeFake, type NativeFakeModel, type NativeFakeReply, type NativeFakeRoutes, sendJson, sleep, split, startNativeFake } from './fake-native.ts';

/**
 * A scriptable provider speaking Google Gemini's API on loopback (port 0), for tests:
 * `POST /v1beta/models/{model}:generateContent` (JSON) and `:streamGenerateContent?alt=sse`
 * (server-sent events, one GenerateContentResponse each, the last with its `finishReason`, no end
 * marker), `GET /v1beta/models` (paged by `pageSize` and `pageToken`), the key in
 * `x-goog-api-key` (a wrong key is a 400 `API_KEY_INVALID`, as Gemini answers), `usageMetadata`
 * with `cachedContentTokenCount`, and Gemini's checks on a body (roles `user`/`model`, text parts,
 * a model it lists: 404 `NOT_FOUND` otherwise).
 */

export interface FakeGeminiOptions {
  /** The key to require in `x-goog-api-key`; null accepts any. */
  apiKey?: string | null;
  models?: NativeFakeModel[];
}

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };
const errorBody = (code: number, message: string, status = STATUS[code] ?? 'UNKNOWN', details?: unknown[]) => ({ error: { code, message, status, ...(details ? { details } : {}) } });

const KEY_INVALID = errorBody(400, 'API key not valid. Please pass a valid API key.', 'INVALID_ARGUMENT', [
  { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
]);

function invalid(body: Record<string, unknown> | null): string | null {
  if (!body) return 'Invalid JSON payload received.';
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  for (const [i, c] of (body.contents as Array<{ role?: unknown; parts?: unknown }>).entries()) {
    if (c.role !== 'user' && c.role !== 'model') return `Please use a valid role: user, model. (contents[${i}])`;
    const partOk = (p: { text?: unknown; functionCall?: { name?: unknown }; functionResponse?: { name?: unknown } }) =>
      typeof p.text === 'string' || typeof p.functionCall?.name === 'string' || (typeof p.functionResponse?.name === 'string' && p.functionResponse.name !== '');
    if (!Array.isArray(c.parts) || c.parts.length === 0 || !c.parts.every(partOk)) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
  }
  for (const key of Object.keys(body)) {
    if (!['contents', 'systemInstruction', 'generationConfig', 'safetySettings', 'cachedContent', 'tools', 'toolConfig'].includes(key)) return `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`;
  }
  return null;
}

const sseData = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

const routes: (options: FakeGeminiOptions) => NativeFakeRoutes = (options) => ({
  versionPath: '/v1beta',
  refuseKey(req, res) {
    if (options.apiKey !== undefined && options.apiKey !== null && req.headers['x-goog-api-key'] !== options.apiKey) {
      sendJson(res, 400, KEY_INVALID);
      return true;
    }
    return false;
  },
  models(url, res, models) {
    if (url.pathname !== '/v1beta/models') return false;
    const size = Math.min(1000, Number(url.searchParams.get('pageSize') ?? 50));
    const start = Number(url.searchParams.get('pageToken') ?? 0);
    const page = models.slice(start, start + size);
    sendJson(res, 200, {
      models: [
        ...page.map((m) => ({
          name: `models/${m.id}`,
          displayName: m.name ?? m.id,
          inputTokenLimit: m.contextLength ?? 1_048_576,
          outputTokenLimit: 65_536,
          supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent'],
        })),
        // an embedding model, which cannot chat
        ...(start === 0 ? [{ name: 'models/text-embedding-004', displayName: 'Text Embedding 004', supportedGenerationMethods: ['embedContent'] }] : []),
      ],
      ...(start + size < models.length ? { nextPageToken: String(start + size) } : {}),
    });
    return true;
  },
  completion(method, url) {
    const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
    if (method !== 'POST' || !match) return null;
    const stream = match[2] === 'streamGenerateContent';
    return { model: decodeURIComponent(match[1]!), stream: stream && url.searchParams.get('alt') === 'sse' };
  },
  refuseBody(body, model, models, res) {
    const problem = invalid(body);
    if (problem) {
      sendJson(res, 400, errorBody(400, problem));
      return true;
    }
    if (!models.some((m) => m.id === model)) {
      sendJson(res, 404, errorBody(404, `models/${model} is not found for API version v1beta, or is not supported for generateContent.`));
      return true;
    }
    return false;
  },
  async answer(res, reply, { id, record, model, stream }) {
    if (reply.kind === 'hang') return;
    if (reply.kind === 'error') {
      sendJson(res, reply.status, reply.body ?? errorBody(reply.status, reply.message ?? 'The fake provider failed.', reply.type), reply.retryAfter ? { 'retry-after': reply.retryAfter } : {});
      return;
    }
    const usage = reply.kind === 'completion' && reply.usage !== undefined ? reply.usage : { input: 42, output: 7 };
    const metadata = (final: boolean) =>
      usage
        ? {
            promptTokenCount: usage.input,
            ...(final ? { candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output } : { totalTokenCount: usage.input }),
            ...(usage.cacheRead ? { cachedContentTokenCount: usage.cacheRead } : {}),
          }
        : undefined;
    const version = (reply.kind === 'completion' && reply.model) || model;
    const response = (parts: unknown[], finish: string | null, final: boolean) => ({
      candidates: [{ content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
      ...(metadata(final) ? { usageMetadata: metadata(final) } : {}),
      modelVersion: version,
      responseId: id,
    });
    if (!stream) {
      if (reply.kind !== 'completion') {
        if (reply.kind === 'stall') return;
        res.socket?.destroy();
        return;
      }
      const calls = (reply.toolCalls ?? []).map((c) => ({ functionCall: { name: c.name, args: c.arguments } }));
      sendJson(res, 200, response([...(reply.content || !calls.length ? [{ text: reply.content }] : []), ...calls], reply.stopReason ?? 'STOP', true));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    if (reply.kind === 'completion' && reply.reasoning) res.write(sseData(response([{ text: reply.reasoning, thought: true }], null, false)));
    const pieces = split(reply.content, reply.chunks ?? 3);
    for (const [i, piece] of pieces.entries()) {
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (record.aborted || res.destroyed) return;
      const last = i === pieces.length - 1 && reply.kind === 'completion';
      res.write(sseData(response([{ text: piece }], last ? (reply.stopReason ?? 'STOP') : null, last)));
    }
    if (reply.kind === 'completion') {
      // function calls arrive whole, in a chunk of their own
      if (reply.toolCalls?.length) res.write(sseData(response(reply.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.arguments } })), null, false)));
      res.end();
      return;
    }
    if (reply.kind === 'stall') return;
    if (reply.kind === 'stream-error') {
      res.end(sseData(errorBody(503, reply.message ?? 'The model is overloaded. Please try again later.')));
      return;
    }
    await sleep(reply.chunkDelayMs ?? 20);
    if (reply.how === 'end') res.end();
    else res.socket?.destroy();
  },
  notFound: (res: ServerResponse, path: string) => sendJson(res, 404, errorBody(404, `Not found: ${path}`)),
});

export type FakeGemini = NativeFake;

export function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  return startNativeFake(
    routes(options),
    options.models ?? [
      { id: 'gemini-2.5-flash', name: 'Gemini 2.5 Flash' },
      { id: 'gemini-2.5-pro', name: 'Gemini 2.5 Pro' },
    ],
    'gem-fake-',
  );
}

export type { NativeFakeReply as FakeGeminiReply };
