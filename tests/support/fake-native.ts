import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fakeControls } from './fake-controls.ts';
import type { AddressInfo } from 'node:net';

/**
 * The shared shape of the loopback fakes of the native provider protocols (fake-anthropic.ts,
 * fake-gemini.ts): a server on port 0 that records every request, takes queued replies (or a
 * handler) for its completions, and answers its model list. Each protocol's own file writes the
 * wire format; this file holds what they share, modelled on fake-openai.ts.
 */

export interface NativeFakeUsage {
  input: number;
  output: number;
  /** Prompt tokens read from the cache. */
  cacheRead?: number;
  /** Prompt tokens written to the cache (Anthropic only). */
  cacheWrite?: number;
}

export type NativeFakeReply =
  /** A normal answer; streamed when the request asked for a stream (`content` split into `chunks`). */
  | {
      kind: 'completion';
      content: string;
      usage?: NativeFakeUsage | null;
      stopReason?: string;
      chunks?: number;
      chunkDelayMs?: number;
      reasoning?: string;
      model?: string;
      /** Function calls in the protocol's shape (Anthropic `tool_use` blocks, Gemini `functionCall` parts). */
      toolCalls?: Array<{ id?: string; name: string; arguments: Record<string, unknown> }>;
    }
  /** An HTTP error with the protocol's error body (`body` replaces it), with Retry-After when given. */
  | { kind: 'error'; status: number; message?: string; type?: string; body?: unknown; retryAfter?: string }
  /** A stream that sends some content, then the protocol's error event. */
  | { kind: 'stream-error'; content: string; message?: string; type?: string; chunks?: number; chunkDelayMs?: number }
  /** No status line, no byte, until the client goes away. */
  | { kind: 'hang' }
  /** Streams `content`, then sends nothing more with the connection open until the client goes away. */
  | { kind: 'stall'; content: string; chunks?: number; chunkDelayMs?: number }
  /** Streams `content`, then the socket is destroyed (`destroy`) or the body ends without the protocol's end (`end`). */
  | { kind: 'drop'; content: string; chunks?: number; chunkDelayMs?: number; how?: 'destroy' | 'end' };

export interface NativeRecordedRequest {
  method: string;
  path: string;
  search: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
  /** The client closed the connection before the answer finished. */
  aborted: boolean;
}

export interface NativeFakeModel {
  id: string;
  name?: string;
  contextLength?: number;
}

export interface NativeFake {
  /** Base URL including the version path, as stored for a connection. */
  url: string;
  requests: NativeRecordedRequest[];
  /** Completion requests only. */
  readonly completions: NativeRecordedRequest[];
  enqueue(...replies: NativeFakeReply[]): void;
  setHandler(handler: (body: Record<string, unknown>) => NativeFakeReply): void;
  models: NativeFakeModel[];
  reset(): void;
  close(): Promise<void>;
}

/** What a protocol's fake answers. `reply` is null when the request was answered already (refused). */
export interface NativeFakeRoutes {
  versionPath: string;
  /** Checks the key: returns true when the request was answered (refused). */
  refuseKey(req: IncomingMessage, res: ServerResponse): boolean;
  /** Answers GET of the model list when the path is it; true when answered. */
  models(url: URL, res: ServerResponse, models: NativeFakeModel[]): boolean;
  /** A completion request: null when it is not one; otherwise the model asked for and whether it streams. */
  completion(method: string, url: URL): { model: string; stream: boolean } | null;
  /** A body the protocol refuses (answered here): true when answered. */
  refuseBody(body: Record<string, unknown> | null, model: string, models: NativeFakeModel[], res: ServerResponse): boolean;
  answer(res: ServerResponse, reply: NativeFakeReply, ctx: { model: string; stream: boolean; id: string; record: NativeRecordedRequest }): Promise<void>;
  notFound(res: ServerResponse, path: string): void;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function split(text: string, parts: number): string[] {
  if (parts <= 1 || text.length <= 1) return [text];
  const chars = [...text];
  const size = Math.ceil(chars.length / parts);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startNativeFake(routes: NativeFakeRoutes, initialModels: NativeFakeModel[], idPrefix: string): Promise<NativeFake> {
  const requests: NativeRecordedRequest[] = [];
  const queue: NativeFakeReply[] = [];
  let handler: (body: Record<string, unknown>) => NativeFakeReply = () => ({ kind: 'completion', content: 'echo from the fake', usage: { input: 42, output: 7 } });
  let counter = 0;
  const open = new Set<ServerResponse>();
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
    const record: NativeRecordedRequest = { method: req.method ?? 'GET', path: url.pathname, search: url.search, headers: req.headers, body, aborted: false };
    requests.push(record);
    res.on('close', () => {
      open.delete(res);
      if (!res.writableFinished) record.aborted = true;
    });
    if (routes.refuseKey(req, res)) return;
    if (req.method === 'GET' && routes.models(url, res, fake.models)) return;
    const call = routes.completion(req.method ?? 'GET', url);
    if (!call) {
      routes.notFound(res, url.pathname);
      return;
    }
    if (routes.refuseBody(body, call.model, fake.models, res)) return;
    const reply = queue.shift() ?? handler(body!);
    await routes.answer(res, reply, { ...call, id: `${idPrefix}${++counter}`, record });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: NativeFake = {
    url: `http://127.0.0.1:${port}${routes.versionPath}`,
    requests,
    get completions() {
      return requests.filter((r) => r.method === 'POST');
    },
    models: initialModels,
    ...fakeControls({ queue, requests, open, server, setHandler: (h) => (handler = h) }),
  };
  return fake;
}
