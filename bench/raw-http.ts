import { connect, type Socket } from 'node:net';

/**
 * A minimal HTTP/1.1 client on one keep-alive TCP connection, for benchmarks that stand for many
 * separate clients (bench/overload.bench.ts: 2,000 players, each with a browser of their own).
 * node:http's client spends ~100 µs of its one process per request and response (request and
 * response objects, header parsing, the agent's bookkeeping); with 2,000 at once that queue was the
 * players' own, and it was measured as the server's latency. Here a request is bytes serialized
 * ahead and written in one call (handed to the kernel when `write` returns: the send time), and an
 * answer is timed at its first byte (one timestamp per read) and parsed once it is complete
 * (`content-length`, or `transfer-encoding: chunked` up to its last chunk).
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** performance.now() of the answer's first byte, and of its last. */
  firstByteAt: number;
  endedAt: number;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** The answer held in `buf` when it is whole: head, body (chunked decoded) and how many bytes it took; null while incomplete. */
export function parseResponse(buf: Buffer): { status: number; headers: Record<string, string>; body: Buffer; length: number } | null {
  const headEnd = buf.indexOf(CRLF2);
  if (headEnd < 0) return null;
  const [statusLine = '', ...lines] = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  if (!statusLine.startsWith('HTTP/1.') || !Number.isInteger(status)) throw new Error(`not an HTTP/1 answer: ${JSON.stringify(statusLine.slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let at = headEnd + 4;
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const chunks: Buffer[] = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = Number.parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) throw new Error('a malformed chunk size');
      at = lineEnd + 2;
      if (size === 0) {
        // no trailers are sent: the last chunk ends with an empty line
        if (buf.length < at + 2) return null;
        return { status, headers, body: Buffer.concat(chunks), length: at + 2 };
      }
      if (buf.length < at + size + 2) return null;
      chunks.push(buf.subarray(at, at + size));
      at += size + 2;
    }
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buf.length < at + length) return null;
  return { status, headers, body: buf.subarray(at, at + length), length: at + length };
}

export class RawConnection {
  #received: Buffer[] = [];
  #size = 0;
  #firstByteAt = 0;
  #pending: { resolve: (r: RawResponse) => void; reject: (e: Error) => void } | null = null;
  #error: Error | null = null;

  private constructor(readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      const now = performance.now();
      if (!this.#pending) return;
      if (this.#size === 0) this.#firstByteAt = now;
      this.#received.push(chunk);
      this.#size += chunk.length;
      this.#check(now);
    });
    const fail = (err: Error) => {
      this.#error = err;
      const pending = this.#pending;
      this.#pending = null;
      pending?.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(Object.assign(new Error('the server closed the connection'), { code: 'ECONNCLOSED' })));
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  #check(now: number) {
    const whole = this.#received.length === 1 ? this.#received[0]! : Buffer.concat(this.#received, this.#size);
    this.#received = [whole];
    let parsed: ReturnType<typeof parseResponse>;
    try {
      parsed = parseResponse(whole);
    } catch (err) {
      this.socket.destroy(err as Error);
      return;
    }
    if (!parsed) return;
    const pending = this.#pending!;
    this.#pending = null;
    this.#received = [];
    this.#size = 0;
    pending.resolve({ status: parsed.status, headers: parsed.headers, body: parsed.body, firstByteAt: this.#firstByteAt, endedAt: now });
  }

  /** Writes `request` (a whole serialized request) and resolves with its answer; `sentAt` is when the kernel had the bytes. */
  send(request: Buffer): { sentAt: number; response: Promise<RawResponse> } {
    if (this.#error) return { sentAt: performance.now(), response: Promise.reject(this.#error) };
    if (this.#pending) throw new Error('one request at a time on a connection');
    const response = new Promise<RawResponse>((resolve, reject) => (this.#pending = { resolve, reject }));
    this.socket.write(request);
    return { sentAt: performance.now(), response };
  }

  close() {
    this.socket.destroy();
  }
}

/** A request's bytes: request line, `host`, the given headers, `content-length` when there is a body. */
export function serializeRequest(method: string, url: URL | string, headers: Record<string, string>, body?: Buffer): Buffer {
  const u = new URL(url);
  const lines = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body ?? Buffer.alloc(0)]);
}
