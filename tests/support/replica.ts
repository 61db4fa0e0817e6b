import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { freePort } from './ports.ts';

const root = resolve(import.meta.dirname, '../..');

/** A container replica as its own process (`containers/api/src/main.ts`), on a free loopback port. */
export interface Replica {
  name: string;
  child: ChildProcess;
  url: string;
}

/**
 * Starts a replica with `env` (container settings, DATABASE_URL, REDIS_URL…) and waits until it
 * answers. `node --import tsx`, not the tsx wrapper: a signal reaches the server process itself.
 */
export async function startReplica(name: string, env: Record<string, string>): Promise<Replica> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'containers/api/src/main.ts')], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', REPLICA_ID: name },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/api/version`)).ok) return { name, child, url };
    } catch {}
    if (child.exitCode !== null || Date.now() > until) throw new Error(`replica ${name} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
