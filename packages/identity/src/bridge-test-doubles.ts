import type { EventSourceLike, TimerApi } from './bridge-dom.ts';

/**
 * Plain stand-ins for window, document and timers used by the bridge unit tests. They deliver
 * events synchronously, as the DOM does for dispatchEvent.
 */

type Listener = (event: unknown) => void;

export class FakeEventTarget implements EventSourceLike {
  private readonly listeners = new Map<string, Set<Listener>>();
  addEventListener(type: string, listener: Listener): void {
    let set = this.listeners.get(type);
    if (!set) {
      set = new Set();
      this.listeners.set(type, set);
    }
    set.add(listener);
  }
  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener);
  }
  dispatch(type: string, event: unknown = {}): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) listener(event);
  }
  listenerCount(type: string): number {
    return this.listeners.get(type)?.size ?? 0;
  }
}

export class RecordingWindow {
  readonly posts: Array<{ message: unknown; targetOrigin: string }> = [];
  postMessage(message: unknown, targetOrigin: string): void {
    this.posts.push({ message: structuredClone(message), targetOrigin });
  }
  take(): unknown[] {
    return this.posts.splice(0).map((p) => p.message);
  }
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Manual timers: `advance(ms)` fires what is due, in order. */
export class ManualTimers implements TimerApi {
  now = 0;
  private nextId = 1;
  private readonly entries = new Map<number, { at: number; fn: () => void; every: number | null }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.entries.set(id, { at: this.now + ms, fn, every: null });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.entries.delete(handle as number);
  }
  setInterval(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.entries.set(id, { at: this.now + ms, fn, every: ms });
    return id;
  }
  clearInterval(handle: unknown): void {
    this.entries.delete(handle as number);
  }
  pending(): number[] {
    return [...this.entries.values()].map((e) => e.at - this.now).sort((a, b) => a - b);
  }
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      let dueId: number | null = null;
      let dueAt = Number.POSITIVE_INFINITY;
      for (const [id, entry] of this.entries) {
        if (entry.at <= end && entry.at < dueAt) {
          dueAt = entry.at;
          dueId = id;
        }
      }
      if (dueId === null) break;
      const entry = this.entries.get(dueId)!;
      this.now = entry.at;
      if (entry.every === null) this.entries.delete(dueId);
      else entry.at += entry.every;
      entry.fn();
    }
    this.now = end;
  }
}

/** A compact unsigned JWT carrying `sub`, enough for the page's user-switch check. */
export function fakeJwt(sub: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'RS256', kid: 'k' })}.${part({ sub })}.c2lnbmF0dXJl`;
}
