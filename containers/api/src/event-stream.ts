import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { HttpError } from '@yumina/http';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** A server-sent events response: `write(event, data)` sends one event (JSON data) while the response is open. */
export interface EventStream {
  write(event: string, data: unknown): void;
  /** Sends one event whose data is already JSON text (one line); with `id`, the event's id (EventSource resumes after it). */
  writeJson(event: string, json: string, id?: string): void;
  /** Sends a comment line (a heartbeat). */
  comment(text: string): void;
}

/**
 * Takes over the reply as a text/event-stream (conversation turns, the sandbox's ai.complete, the
 * live update overview): headers sent at once, no caching, no proxy buffering; `retryMs` tells
 * EventSource clients how long to wait before reconnecting.
 */
export function openEventStream(reply: FastifyReply, options: { retryMs?: number; watch?: boolean } = {}): EventStream {
  const res = reply.raw;
  if (options.watch) watchedBy(reply.server.server).add(res);
  // headers the reply was given before (a renewed login cookie) go with the stream's own
  const { 'content-length': _length, ...earlier } = reply.getHeaders() as OutgoingHttpHeaders;
  reply.hijack();
  res.writeHead(200, {
    ...earlier,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  if (options.retryMs !== undefined) res.write(`retry: ${options.retryMs}\n\n`);
  // Events written in one turn of the event loop (a provider's network read often carries many
  // deltas) leave as one chunk: gathered, then written on the next turn (or at once when the
  // response ends first: see `flush`). The first `delta` is the exception: it is what the player
  // waits for (time to first token), so it leaves at once, with anything gathered before it.
  let pending = '';
  let firstDelta = true;
  const flush = () => {
    if (pending && !res.writableEnded) res.write(pending);
    pending = '';
  };
  const send = (event: string, json: string, id?: string) => {
    if (res.writableEnded) return;
    const text = `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${json}\n\n`;
    if (firstDelta && event === 'delta') {
      firstDelta = false;
      pending += text;
      flush();
      return;
    }
    if (!pending) setImmediate(flush);
    pending += text;
  };
  const end = res.end.bind(res);
  res.end = ((...args: Parameters<typeof res.end>) => {
    flush();
    return end(...args);
  }) as typeof res.end;
  return {
    write: (event, data) => send(event, JSON.stringify(data)),
    writeJson: send,
    comment: (text) => {
      if (!res.writableEnded) {
        if (!pending) setImmediate(flush);
        pending += `: ${text}\n\n`;
      }
    },
  };
}

/** The open streams that only watch (a room's events, the live update overview), by the HTTP server serving them (one per app, whatever plugin's route opened them). */
const watching = new WeakMap<object, Set<ServerResponse>>();
function watchedBy(app: object): Set<ServerResponse> {
  let streams = watching.get(app);
  if (!streams) {
    streams = new Set();
    watching.set(app, streams);
  }
  return streams;
}

/**
 * A replica that stops (a deployment, or a scale-in: SIGTERM, then SIGKILL after ECS's stop
 * timeout) ends its watching streams at once with a `reconnect` event: their clients resume on
 * another replica (after the last event id they saw) instead of holding this one until it is
 * killed. Streams of a reply being written are not ended: the reply finishes first.
 */
export function installStreamDrain(app: FastifyInstance): void {
  app.addHook('preClose', (done) => {
    const streams = watching.get(app.server);
    for (const res of streams ?? []) {
      if (res.writableEnded) continue;
      res.write('event: reconnect\ndata: {"reason":"This server is stopping: reconnect."}\n\n');
      res.end();
    }
    streams?.clear();
    done();
  });
}

/**
 * Calls `onGone` once when the client goes away before the reply was ended, or at once when it is
 * gone already; returns the function that stops listening. It listens on the response: a request
 * whose body has been read has emitted its own `close` already (node 16 and later), so a listener
 * attached to it in a route never hears the client leave (issue 28: a turn went on after the
 * player left).
 */
export function whenClientGone(reply: FastifyReply, onGone: () => void): () => void {
  const res = reply.raw;
  const onClose = () => {
    if (!res.writableEnded) onGone();
  };
  if (res.destroyed || !res.socket || res.socket.destroyed) {
    onClose();
    return () => {};
  }
  res.once('close', onClose);
  return () => res.off('close', onClose);
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
