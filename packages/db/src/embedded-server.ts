/**
 * Child-process entry of the embedded database: PGlite (one backend) behind the pg wire
 * protocol on loopback. PGlite runs in its own process because a long statement blocks the
 * whole thread that hosts it. The parent talks to it over IPC: it sends {dataDir, maxConnections}
 * and receives {ready, port} or {error}.
 */
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

interface StartMessage {
  type: 'start';
  dataDir: string;
  maxConnections: number;
}

let db: PGlite | undefined;
let server: PGLiteSocketServer | undefined;
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
    db = await PGlite.create({ dataDir: message.dataDir });
    server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: message.maxConnections });
    await server.start();
    const port = Number(server.getServerConn().split(':').pop());
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
