import type { Server, ServerResponse } from 'node:http';

/**
 * The controls every loopback provider fake shares (fake-openai.ts, fake-native.ts): queue the next
 * replies, decide replies when the queue is empty, forget between tests, and close (open streams
 * cut, connections closed).
 */
export function fakeControls<R>(parts: {
  queue: R[];
  requests: unknown[];
  open: Set<ServerResponse>;
  server: Server;
  setHandler(handler: (body: Record<string, unknown>) => R): void;
}) {
  const { queue, requests, open, server } = parts;
  return {
    enqueue: (...replies: R[]) => void queue.push(...replies),
    setHandler: parts.setHandler,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
