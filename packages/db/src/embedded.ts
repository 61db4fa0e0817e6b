import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SESSION_SETTINGS } from './pool.ts';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Connections the embedded server accepts; the embedded pool is sized below it. */
export const EMBEDDED_MAX_CONNECTIONS = 20;
export const EMBEDDED_POOL_MAX = 10;

/** The file that says a process holds the embedded database under `dataDir` (beside the folder: PGlite owns the folder). */
export const embeddedLockFile = (dataDir: string) => `${resolve(dataDir)}.lock`;

/** The process that holds the embedded database under `dataDir`, if one runs (a lock a dead process left counts for nothing). */
export function embeddedHolder(dataDir: string): { pid: number } | null {
  try {
    const { pid } = JSON.parse(readFileSync(embeddedLockFile(dataDir), 'utf8')) as { pid: number };
    process.kill(pid, 0);
    return { pid };
  } catch {
    return null;
  }
}

/**
 * Starts PGlite persisted under `dataDir` in a child process and returns a postgres:// URL
 * on loopback, so all SQL goes through the same pg-based layer as a real server.
 */
export async function startEmbeddedPostgres(dataDir: string, timeoutMs = 120_000): Promise<EmbeddedPostgres> {
  const entry = fileURLToPath(new URL('./embedded-server.ts', import.meta.url));
  // The compiled production build (scripts/build.ts) runs on DATABASE_URL only: the embedded
  // database is the source tree's (`npm start`), which the bundle does not carry.
  if (!existsSync(entry)) throw new Error('The embedded database runs from the source tree (npm start); set DATABASE_URL to run the compiled build');
  // PGlite has one owner at a time: a second process on the same folder would corrupt it
  const holder = embeddedHolder(dataDir);
  if (holder) throw new Error(`The embedded database under ${resolve(dataDir)} is in use by process ${holder.pid} (a running server, npm start?): stop it first.`);
  const child: ChildProcess = fork(entry, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((ok, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`The embedded database did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', (m: { type: string; port?: number; message?: string }) => {
      if (m.type === 'ready' && m.port) {
        clearTimeout(timer);
        ok(m.port);
      } else if (m.type === 'error') {
        clearTimeout(timer);
        fail(new Error(`The embedded database failed to start: ${m.message}`));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`The embedded database exited during start-up (code ${code})`));
    });
    child.send({
      type: 'start',
      dataDir: resolve(dataDir),
      maxConnections: EMBEDDED_MAX_CONNECTIONS,
      idleInTransactionTimeoutMs: Number(SESSION_SETTINGS.idle_in_transaction_session_timeout),
    });
  });
  const lock = embeddedLockFile(dataDir);
  writeFileSync(lock, JSON.stringify({ pid: process.pid }));
  child.once('exit', () => rmSync(lock, { force: true }));
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      stopped ??= new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.send({ type: 'stop' });
      });
      return stopped;
    },
  };
}
