import { createSocket, type Socket } from 'node:dgram';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback "collector" for security tests: a server that counts (and keeps) every request it
 * receives. A collector that must not be reached is asserted to have seen 0 requests. By default
 * it answers like an OpenAI-compatible provider would (a model list, a short completion), so a
 * request that does reach it would have succeeded; `respond` overrides the answer. It also counts
 * bare TCP connections and UDP datagrams on the same port (STUN from a WebRTC peer connection).
 */

export interface CollectedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Collector {
  /** `http://<host>:<port>` (no path; host 127.0.0.1 unless given). */
  origin: string;
  port: number;
  requests: CollectedRequest[];
  /** TCP connections accepted (a browser may connect before refusing a navigation). */
  connections: number;
  /** UDP datagrams received on the same port. */
  datagrams: number;
  /** Requests, connections and datagrams counted so far. */
  total(): number;
  /** Every header value and body received, joined: for "this secret was never sent here". */
  everything(): string;
  close(): Promise<void>;
}

export type Responder = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const providerAnswer: Responder = (req, res) => {
  if (req.url?.endsWith('/models')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ id: 'collected-model' }] }));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'x', choices: [{ message: { content: 'reached' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
};

export async function startCollector(respond: Responder = providerAnswer, host = '127.0.0.1'): Promise<Collector> {
  const requests: CollectedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      respond(req, res, body);
    });
  });
  server.on('connection', () => {
    collector.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const udp: Socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', () => {
    collector.datagrams++;
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, host, () => resolve());
  });
  const collector: Collector = {
    origin: `http://${host}:${port}`,
    port,
    requests,
    connections: 0,
    datagrams: 0,
    total: () => collector.connections + collector.requests.length + collector.datagrams,
    everything: () => requests.map((r) => `${JSON.stringify(r.headers)}\n${r.url}\n${r.body}`).join('\n'),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    },
  };
  return collector;
}

/** The events of a text/event-stream body. */
export function parseEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => ({
      event: /^event: (.+)$/m.exec(block)?.[1] ?? 'message',
      data: JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>,
    }));
}

/** Reads a text/event-stream answer into its events. */
export async function readEvents(res: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  return parseEvents(await res.text());
}

/** Internal detail that must never reach a client: PostgreSQL and Redis messages, socket errors, stacks, addresses. */
export const INTERNAL_DETAIL =
  /\b(?:ECONN\w+|ETIMEDOUT|ENOTFOUND|EPIPE)\b|terminating connection|[Cc]onnection terminated|does not allow connections|relation "|duplicate key|violates|syntax error at|ReplyError|WRONGTYPE|NOAUTH|\bMOVED\b|\n\s+at |node:internal|\.ts:\d+|127\.0\.0\.1:\d+/;

/** A PostgreSQL SQLSTATE (`57P01`, `23505`, `XX000`) in a message. */
const SQLSTATE = /\b(?:\d{2}[0-9A-Z]\d{2}|[A-Z]{2}\d{3}|P0\d{3})\b/;

/** Asserts the shared error shape with nothing internal in it. */
export function isCleanErrorBody(body: unknown): boolean {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string') return false;
  return /^[A-Z][A-Z0-9_]*$/.test(e.code) && !INTERNAL_DETAIL.test(e.message) && !SQLSTATE.test(e.message);
}
