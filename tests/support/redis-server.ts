import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { type Watchdog, watchdog } from './watchdog.js';

/**
 * A redis-server of the tests' own (the machine's `redis-server`), on its own port on 127.0.0.1,
 * keeping nothing on disk. The global setup starts one for the run when REDIS_URL is not set; a test
 * that stops or pauses a server starts its own. If the process that started it dies first, a
 * watchdog stops it.
 */
export class OwnRedis {
  #child: ChildProcess | undefined;
  #watchdog: Watchdog | undefined;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  static async start(): Promise<OwnRedis> {
    const own = new OwnRedis(await freePort());
    await own.start();
    return own;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
      detached: true,
    });
    this.#child = child;
    let failure: Error | undefined;
    child.on('error', (err) => (failure = err));
    if (child.pid !== undefined) this.#watchdog = watchdog(child.pid, 'TERM');
    const deadline = Date.now() + 10_000;
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
        if (failure || child.exitCode !== null || Date.now() > deadline) {
          await this.stop();
          throw new Error(`redis-server did not start on port ${this.port}: ${failure?.message ?? `exit code ${child.exitCode}`}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async stop(): Promise<void> {
    this.#watchdog?.cancel();
    const child = this.#child;
    if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
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
