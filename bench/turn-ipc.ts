import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The IPC of bench/turn.bench.ts with its two child processes (./turn-provider.ts and
 * ./turn-server.ts). The parent sends requests `{ id, type, ...fields }`; a child answers
 * `{ type: 'reply', id, value }` or `{ type: 'error', id, message }`. A child announces itself with
 * `{ type: 'ready', ...fields }`, reports a crash as `{ type: 'error', message }` before exiting, and
 * ends (after its own cleanup) when its parent goes away or sends it SIGTERM.
 */

interface Request {
  id: number;
  type: string;
  [field: string]: unknown;
}
type ChildMessage = { type: 'ready'; [field: string]: unknown } | { type: 'reply'; id: number; value: unknown } | { type: 'error'; id?: number; message: string };

const REQUEST_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 180_000;

/** The parent's handle on one child. */
export class BenchChild {
  /** Rejects with the child's message as soon as it fails or exits unexpectedly (race work against it so nothing hangs). */
  readonly failed: Promise<never>;
  #fail!: (err: Error) => void;
  #nextId = 1;
  #pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  #lastError = '';
  #stopping = false;
  #exited: Promise<void>;
  readonly #killOnExit = () => void this.child.kill('SIGTERM');

  private constructor(
    readonly label: string,
    readonly child: ChildProcess,
  ) {
    this.failed = new Promise<never>((_, reject) => (this.#fail = reject));
    this.failed.catch(() => {});
    // The child dies with the bench, however the bench's process ends (it also stops on its own when the IPC channel closes).
    process.once('exit', this.#killOnExit);
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'error' && m.id === undefined) {
        this.#lastError = m.message;
        this.#fail(new Error(`${label} process failed: ${m.message}`));
      } else if (m.type === 'reply' || m.type === 'error') {
        const pending = this.#pending.get(m.id!);
        if (!pending) return;
        this.#pending.delete(m.id!);
        clearTimeout(pending.timer);
        if (m.type === 'reply') pending.resolve(m.value);
        else pending.reject(new Error(`${label} process: ${m.message}`));
      }
    });
    child.once('error', (err) => this.#fail(new Error(`${label} process: ${err.message}`)));
    child.once('exit', (code, signal) => {
      process.off('exit', this.#killOnExit);
      const err = new Error(`${label} process exited (${signal ?? `code ${code}`})${this.#lastError ? `: ${this.#lastError}` : ''}`);
      if (!this.#stopping || code !== 0) this.#fail(err);
      for (const { reject, timer } of this.#pending.values()) {
        clearTimeout(timer);
        reject(err);
      }
      this.#pending.clear();
    });
  }

  /** Forks `file` (a TypeScript module run through tsx, with this process's environment) and waits for its `ready` message. */
  static async start(label: string, file: URL): Promise<{ child: BenchChild; ready: Record<string, unknown> }> {
    const child = new BenchChild(label, fork(fileURLToPath(file), [], { execArgv: ['--import', 'tsx'], env: process.env }));
    const ready = new Promise<Record<string, unknown>>((resolve) => {
      const on = (m: ChildMessage) => {
        if (m.type !== 'ready') return;
        child.child.off('message', on);
        resolve(m);
      };
      child.child.on('message', on);
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${label} process not ready after ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS)));
    try {
      return { child, ready: await Promise.race([ready, child.failed, timeout]) };
    } catch (err) {
      await child.stop();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  request<T>(type: string, fields: Record<string, unknown> = {}): Promise<T> {
    if (this.child.exitCode !== null || this.child.signalCode !== null || !this.child.connected) {
      return Promise.reject(new Error(`${this.label} process is not running${this.#lastError ? `: ${this.#lastError}` : ''}`));
    }
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${this.label} process did not answer ${type} within ${REQUEST_TIMEOUT_MS / 1000} s`));
      }, REQUEST_TIMEOUT_MS);
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      this.child.send({ id, type, ...fields } satisfies Request);
    });
  }

  /** Asks the child to stop (its `stop` handler), then kills it if it has not exited within 20 s. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    await this.request('stop').catch(() => {});
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.#exited;
    clearTimeout(timer);
  }
}

/** The child's side: runs `start`, announces `ready` with what it returns, answers requests with `handlers` and ends with `stop`. */
export async function serveParent(
  start: () => Promise<Record<string, unknown>>,
  handlers: Record<string, (request: Request) => unknown>,
  stop: () => Promise<void>,
): Promise<void> {
  const send = (m: ChildMessage) => (process.connected ? process.send!(m) : false);
  let stopping: Promise<void> | undefined;
  /** Cleans up (bounded to 15 s) and exits. */
  const end = (code: number) => {
    stopping ??= Promise.race([stop(), new Promise<void>((resolve) => setTimeout(resolve, 15_000).unref())])
      .catch((err) => console.error(err))
      .finally(() => process.exit(code));
    return stopping;
  };
  const crash = (err: unknown) => {
    send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    void end(1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  process.once('disconnect', () => void end(0));
  process.once('SIGTERM', () => void end(0));
  process.on('message', async (request: Request) => {
    try {
      if (request.type === 'stop') {
        send({ type: 'reply', id: request.id, value: null });
        await end(0);
        return;
      }
      const handler = handlers[request.type];
      if (!handler) throw new Error(`unknown request ${request.type}`);
      send({ type: 'reply', id: request.id, value: await handler(request) });
    } catch (err) {
      send({ type: 'error', id: request.id, message: (err as Error).stack ?? String(err) });
    }
  });
  try {
    send({ type: 'ready', ...(await start()) });
  } catch (err) {
    crash(err);
  }
}
