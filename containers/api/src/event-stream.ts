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
