import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { requireOrSkip } from './required.js';

/** The machine's shared Redis (REDIS_URL in CI); tests isolate themselves with a random key prefix. */
export const sharedRedisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function probe(): Promise<boolean> {
  const client = new Redis(sharedRedisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (err) {
    return requireOrSkip(`Redis at ${sharedRedisUrl}`, (err as Error).message);
  } finally {
    client.disconnect();
  }
}

export const hasRedis: boolean = await probe();
export const testPrefix = () => `test:${randomBytes(4).toString('hex')}:`;

export { freePort } from './ports.js';

/** A redis-server of the test's own, on its own port (never the shared 6379), that the test may stop and pause. */
export class OwnRedis {
  #child: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<OwnRedis> {
    const own = new OwnRedis(await freePort());
    await own.start();
    return own;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    this.#child = child;
    const deadline = Date.now() + 5000;
    for (;;) {
      const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.ping();
        c.disconnect();
        return;
      } catch {
        c.disconnect();
        if (Date.now() > deadline) throw new Error('redis-server did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** CLIENT PAUSE: the server accepts commands and answers none for `ms`. */
  async pause(ms: number): Promise<void> {
    const c = new Redis(this.url);
    await c.call('CLIENT', 'PAUSE', String(ms), 'ALL');
    c.disconnect();
  }
}
