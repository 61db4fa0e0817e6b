import { HttpError } from '@yumina/http';
import type { FastifyReply } from 'fastify';

/** A server-sent events response: `write(event, data)` sends one event (JSON data) while the response is open. */
export interface EventStream {
  write(event: string, data: unknown): void;
}

/**
 * Takes over the reply as a text/event-stream (conversation turns, the sandbox's ai.complete, the
 * live update overview): headers sent at once, no caching, no proxy buffering; `retryMs` tells
 * EventSource clients how long to wait before reconnecting.
 */
export function openEventStream(reply: FastifyReply, options: { retryMs?: number } = {}): EventStream {
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  if (options.retryMs !== undefined) res.write(`retry: ${options.retryMs}\n\n`);
  return {
    write(event, data) {
      if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
  };
}

/**
 * The cap on long-lived event streams (the live update overview): at most `perAddress` open
 * streams per client address (`request.ip`, derived through TRUST_PROXY) and `perProcess` in this
 * process. Beyond them a stream is refused before it touches the database or the store: 429 for
 * the address (Retry-After), 503 for the process. Each open stream holds a subscription and polls,
 * so an unbounded number of them would exhaust the database for everyone else.
 */
export interface StreamGate {
  /** Takes a slot for `address`, or throws the refusal; the returned function gives it back (idempotent). */
  admit(address: string): () => void;
  readonly open: number;
}

const STREAM_RETRY_AFTER_S = 30;

export function createStreamGate(limits: { perAddress: number; perProcess: number }): StreamGate {
  const byAddress = new Map<string, number>();
  let open = 0;
  return {
    get open() {
      return open;
    },
    admit(address) {
      const mine = byAddress.get(address) ?? 0;
      if (mine >= limits.perAddress) {
        throw new HttpError(429, 'TOO_MANY_STREAMS', `At most ${limits.perAddress} live update streams may be open from one address. Close another tab and try again.`, {
          'retry-after': String(STREAM_RETRY_AFTER_S),
        });
      }
      if (open >= limits.perProcess) {
        throw new HttpError(503, 'STREAMS_FULL', 'This server has as many live update streams open as it can hold. Try again in a moment.', {
          'retry-after': String(STREAM_RETRY_AFTER_S),
        });
      }
      byAddress.set(address, mine + 1);
      open++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
        const left = (byAddress.get(address) ?? 1) - 1;
        if (left > 0) byAddress.set(address, left);
        else byAddress.delete(address);
      };
    },
  };
}
