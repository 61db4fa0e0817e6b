import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fakeControls } from './fake-controls.ts';
import type { AddressInfo } from 'node:net';

/**
 * A scriptable OpenAI-compatible provider on loopback (port 0) for tests. It speaks the real wire
 * protocol: `POST /v1/chat/completions` (JSON, or SSE when the request says `stream: true`),
 * `GET /v1/models` and `POST /v1/audio/speech` (text to speech: a few bytes of an MP3 frame, or
 * `speechReply` when set). Tests queue replies (or set a handler) and read back every request received.
 */

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** As OpenAI and OpenRouter report a prompt's cached part (`cached_tokens`, part of prompt_tokens) and OpenRouter a cache write. */
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
}

export type FakeReply =
  /** A normal completion; streamed when the request asked for a stream (content split into `chunks`). */
  | {
      kind: 'completion';
      content: string;
      usage?: FakeUsage | null;
      finishReason?: string;
      model?: string;
      chunks?: number;
      chunkDelayMs?: number;
      refusal?: string;
      reasoning?: string;
      /** Function calls (`message.tool_calls`; streamed as fragments by index); the finish reason becomes `tool_calls`. */
      toolCalls?: FakeToolCall[];
    }
  /** Any HTTP error with a JSON (or raw text) body. */
  | { kind: 'error'; status: number; body: unknown }
  /** An SSE stream that sends an error event after some content (as OpenRouter does mid-stream). */
  | { kind: 'stream-error'; content: string; error: { message: string; code?: number | string } }
  /** Hangs without answering (no status line, no byte) until the client goes away. */
  | { kind: 'hang' }
  /**
   * Streams `content` (in `chunks`), then sends nothing more, the connection left open, until the
   * client goes away: a provider that stops sending mid-stream.
   */
  | { kind: 'stall'; content: string; chunks?: number; chunkDelayMs?: number }
  /**
   * Streams `content` (in `chunks`), then the connection drops: `destroy` (default) kills the socket
   * mid-body, as a crashed proxy or a network cut does; `end` closes the body cleanly but without a
   * finish reason or `[DONE]`, as a proxy that times out between chunks does.
   */
  | { kind: 'drop'; content: string; chunks?: number; chunkDelayMs?: number; how?: 'destroy' | 'end' };

/** A function call the fake model makes: `arguments` as an object is sent as its JSON text, a string as is (to send broken JSON). */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
  /** True when the client closed the connection before the reply finished. */
  aborted: boolean;
}

export interface FakeModel {
  id: string;
  name?: string;
  context_length?: number;
  owned_by?: string;
}

export interface FakeOpenAiOptions {
  /** Bearer key to require (401 otherwise); null accepts any request. */
  apiKey?: string | null;
  models?: FakeModel[];
}

export interface FakeOpenAi {
  /** Base URL including `/v1`, as stored for a private connection. */
  url: string;
  requests: RecordedRequest[];
  /** Chat-completion requests only. */
  readonly completions: RecordedRequest[];
  /** Text-to-speech requests only (`POST /v1/audio/speech`). */
  readonly speeches: RecordedRequest[];
  /** How the next speech requests are answered (default: 200 with FAKE_SPEECH as audio/mpeg). */
  speechReply: { status: number; contentType: string; body: Buffer | string };
  /** Queues replies used in order by the next chat-completion requests. */
  enqueue(...replies: FakeReply[]): void;
  /** Decides replies for requests when the queue is empty (default: a short completion echoing the model). */
  setHandler(handler: (body: Record<string, unknown>) => FakeReply): void;
  models: FakeModel[];
  /** Forgets queued replies and recorded requests (between tests). */
  reset(): void;
  close(): Promise<void>;
}

const UNAUTHORIZED_BODY = { error: { message: 'Incorrect API key provided: sk-***.', type: 'invalid_request_error', code: 'invalid_api_key' } };
const MALFORMED_BODY = { error: { message: "Invalid value for 'messages': expected an array.", type: 'invalid_request_error', param: 'messages', code: null } };

/** Canned replies for the cases the summary fallback distinguishes. */
export const fakeReplies = {
  completion: (content: string, usage: FakeUsage = { prompt_tokens: 42, completion_tokens: 7 }, extra: Partial<Extract<FakeReply, { kind: 'completion' }>> = {}): FakeReply => ({
    kind: 'completion',
    content,
    usage,
    ...extra,
  }),
  /** OpenRouter's answer when a model that must reason is asked not to. */
  reasoningRequired: (): FakeReply => ({
    kind: 'error',
    status: 400,
    body: { error: { message: 'Reasoning is mandatory for this endpoint and cannot be disabled.', code: 400, metadata: { provider_name: 'Chutes' } } },
  }),
  /** A structured refusal on a 200 (OpenAI's `message.refusal`). */
  refusal: (text = "I'm sorry, but I can't help with that request."): FakeReply => ({
    kind: 'completion',
    content: '',
    refusal: text,
    finishReason: 'stop',
    usage: { prompt_tokens: 40, completion_tokens: 11 },
  }),
  /** A moderation refusal as an error body (OpenRouter answers 403 with a moderation error). */
  moderationRefusal: (): FakeReply => ({
    kind: 'error',
    status: 403,
    body: { error: { message: 'Input was flagged by content moderation', code: 403, metadata: { reasons: ['violence'], flagged_input: '...' } } },
  }),
  unauthorized: (): FakeReply => ({ kind: 'error', status: 401, body: UNAUTHORIZED_BODY }),
  malformed: (): FakeReply => ({ kind: 'error', status: 400, body: MALFORMED_BODY }),
  rateLimited: (): FakeReply => ({ kind: 'error', status: 429, body: { error: { message: 'Rate limit exceeded', code: 429 } } }),
  serverError: (): FakeReply => ({ kind: 'error', status: 502, body: { error: { message: 'Upstream provider error', code: 502 } } }),
  /** The model calls functions (with an optional text beside them). */
  toolCalls: (calls: FakeToolCall[], content = '', usage: FakeUsage = { prompt_tokens: 1200, completion_tokens: 300 }): FakeReply => ({ kind: 'completion', content, usage, toolCalls: calls }),
  slowStream: (content: string, chunkDelayMs: number, chunks = content.length): FakeReply => ({
    kind: 'completion',
    content,
    chunks,
    chunkDelayMs,
    usage: { prompt_tokens: 10, completion_tokens: chunks },
  }),
};

/** What the fake's speech endpoint answers: an MPEG audio frame header and silence (a real MP3's first bytes). */
export const FAKE_SPEECH = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413)]);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
  res.end(text);
}

function split(text: string, parts: number): string[] {
  if (parts <= 1 || text.length <= 1) return [text];
  const chars = [...text];
  const size = Math.ceil(chars.length / parts);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  let handler: (body: Record<string, unknown>) => FakeReply = (body) => fakeReplies.completion(`echo from ${String(body.model)}`);
  let counter = 0;
  const open = new Set<ServerResponse>();

  async function completion(res: ServerResponse, record: RecordedRequest): Promise<void> {
    const body = record.body;
    if (!body || !Array.isArray(body.messages) || typeof body.model !== 'string') {
      sendJson(res, 400, MALFORMED_BODY);
      return;
    }
    const reply = queue.shift() ?? handler(body);
    const id = `chatcmpl-fake-${++counter}`;
    const created = Math.floor(Date.now() / 1000);
    if (reply.kind === 'hang') return; // the client's deadline or abort ends it
    if (reply.kind === 'error') {
      sendJson(res, reply.status, reply.body);
      return;
    }
    const stream = body.stream === true;
    if (reply.kind === 'stream-error') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta: { role: 'assistant', content: reply.content }, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, error: reply.error, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] })}\n\n`);
      res.end();
      return;
    }
    if (reply.kind === 'drop' || reply.kind === 'stall') {
      if (!stream) {
        if (reply.kind === 'stall') return; // a JSON answer that never comes
        res.socket?.destroy(); // a JSON answer cut before its body
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
      for (const piece of split(reply.content, reply.chunks ?? 3)) {
        if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
        if (record.aborted || res.destroyed) return;
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      }
      if (reply.kind === 'stall') return; // the client's deadline or abort ends it
      // Let the written chunks reach the client before the connection goes.
      await sleep(reply.chunkDelayMs ?? 20);
      if (reply.how === 'end') res.end();
      else res.socket?.destroy();
      return;
    }
    const model = reply.model ?? (body.model as string);
    const usage = reply.usage === null ? undefined : (reply.usage ?? { prompt_tokens: 42, completion_tokens: 7 });
    const usageBody = usage ? { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } : undefined;
    const finishReason = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
    const wireCalls = (reply.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${counter}_${i + 1}`,
      type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    }));
    if (!stream) {
      const message: Record<string, unknown> = { role: 'assistant', content: reply.refusal ? null : reply.content || (wireCalls.length ? null : '') };
      if (reply.refusal) message.refusal = reply.refusal;
      if (wireCalls.length) message.tool_calls = wireCalls;
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        ...(usageBody ? { usage: usageBody } : {}),
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
    res.write(': OPENROUTER PROCESSING\n\n');
    res.write(chunk({ role: 'assistant', content: '' }, null));
    if (reply.refusal) res.write(chunk({ refusal: reply.refusal }, null));
    if (reply.reasoning) for (const piece of split(reply.reasoning, 2)) res.write(chunk({ content: null, reasoning: piece }, null));
    for (const piece of reply.refusal ? [] : split(reply.content, reply.chunks ?? 3)) {
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (record.aborted || res.destroyed) return;
      res.write(chunk({ content: piece }, null));
    }
    wireCalls.forEach((call, index) => {
      const args = call.function.arguments;
      const half = Math.floor(args.length / 2);
      res.write(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: args.slice(0, half) } }] }, null));
      res.write(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, null));
    });
    res.write(chunk({}, finishReason));
    const options = body.stream_options as { include_usage?: boolean } | undefined;
    if (usageBody && options?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageBody })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  }

  const models: FakeModel[] = options.models ?? [
    { id: 'openai/gpt-4o-mini', name: 'GPT-4o mini', context_length: 128_000, owned_by: 'openai' },
    { id: 'deepseek/deepseek-r1:free', name: 'DeepSeek R1 (free)', context_length: 163_840, owned_by: 'deepseek' },
  ];

  const server: Server = createServer(async (req, res) => {
    open.add(res);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await readBody(req);
    let body: Record<string, unknown> | null = null;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
    } catch {
      body = null;
    }
    const record: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body, aborted: false };
    requests.push(record);
    res.on('close', () => {
      open.delete(res);
      if (!res.writableFinished) record.aborted = true;
    });
    if (options.apiKey !== undefined && options.apiKey !== null && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      sendJson(res, 401, UNAUTHORIZED_BODY);
      return;
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: fake.models.map((m) => ({ object: 'model', created: 1_700_000_000, owned_by: 'fake', ...m })) });
      return;
    }
    if (req.method === 'POST' && url.pathname === '/v1/audio/speech') {
      if (!body || typeof body.input !== 'string' || typeof body.voice !== 'string' || typeof body.model !== 'string') {
        sendJson(res, 400, { error: { message: "'input', 'model' and 'voice' are required.", type: 'invalid_request_error' } });
        return;
      }
      const answer = fake.speechReply;
      res.writeHead(answer.status, { 'content-type': answer.contentType });
      res.end(answer.body);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      if (raw && body === null) {
        sendJson(res, 400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error' } });
        return;
      }
      await completion(res, record);
      return;
    }
    sendJson(res, 404, { error: { message: `Unknown route ${req.method} ${url.pathname}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeOpenAi = {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get completions() {
      return requests.filter((r) => r.path === '/v1/chat/completions');
    },
    get speeches() {
      return requests.filter((r) => r.path === '/v1/audio/speech');
    },
    speechReply: { status: 200, contentType: 'audio/mpeg', body: FAKE_SPEECH },
    models,
    ...fakeControls({ queue, requests, open, server, setHandler: (h) => (handler = h) }),
  };
  return fake;
}
