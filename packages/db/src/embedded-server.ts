/**
 * Child-process entry of the embedded database: PGlite (one backend) behind the pg wire
 * protocol on loopback, through the socket layer that gives one connection at a time the backend
 * (./embedded-socket.ts). PGlite runs in its own process because a long statement blocks the
 * whole thread that hosts it. The parent talks to it over IPC: it sends {dataDir, maxConnections,
 * idleInTransactionTimeoutMs} and receives {ready, port} or {error}. Contrib extensions the
 * migrations create (pg_trgm, for library search) must be loaded here.
 */
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { BackendSocketServer } from './embedded-socket.ts';

interface StartMessage {
  type: 'start';
  dataDir: string;
  maxConnections: number;
  idleInTransactionTimeoutMs: number;
}

let db: PGlite | undefined;
let server: BackendSocketServer | undefined;
let stopping = false;

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await server?.stop();
  } catch {}
  try {
    await db?.close();
  } catch {}
  process.exit(code);
}

process.on('message', async (message: StartMessage | { type: 'stop' }) => {
  if (message.type === 'stop') return stop(0);
  try {
    mkdirSync(message.dataDir, { recursive: true });
    const pglite = await PGlite.create({ dataDir: message.dataDir, extensions: { pg_trgm } });
    db = pglite;
    server = new BackendSocketServer({
      backend: { exec: (messages) => pglite.runExclusive(() => pglite.execProtocolRaw(messages)) },
      host: '127.0.0.1',
      port: 0,
      maxConnections: message.maxConnections,
      idleInTransactionTimeoutMs: message.idleInTransactionTimeoutMs,
    });
    const port = await server.start();
    process.send?.({ type: 'ready', port });
  } catch (err) {
    process.send?.({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    await stop(1);
  }
});

// The parent went away: close the database cleanly so nothing is lost.
process.on('disconnect', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => {});
