import { randomUUID } from 'node:crypto';
import type { RateLimitResult, Store, Unsubscribe } from './types.ts';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/** One process's store: the embedded default, and the fallback while Redis is unreachable. */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  #values = new Map<string, Expiring<string>>();
  #windows = new Map<string, Expiring<number>>();
  #locks = new Map<string, Expiring<string>>();
  #slots = new Map<string, Map<string, number>>();
  #channels = new Map<string, Set<(message: string) => void>>();
  #sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.#sweeper = setInterval(() => this.#sweep(), 60_000);
    this.#sweeper.unref();
  }

  #live<T>(map: Map<string, Expiring<T>>, key: string): Expiring<T> | undefined {
    const entry = map.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      map.delete(key);
      return undefined;
    }
    return entry;
  }

  #sweep(): void {
    for (const map of [this.#values, this.#windows, this.#locks] as Map<string, Expiring<unknown>>[]) {
      for (const key of map.keys()) this.#live(map, key);
    }
    for (const [key, slots] of this.#slots) {
      this.#liveSlots(slots);
      if (slots.size === 0) this.#slots.delete(key);
    }
  }

  async get(key: string): Promise<string | undefined> {
    return this.#live(this.#values, key)?.value;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.#values.set(key, { value, expiresAt: this.now() + ttlSeconds * 1000 });
  }

  async del(key: string): Promise<void> {
    this.#values.delete(key);
  }

  async rateLimit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const now = this.now();
    let window = this.#live(this.#windows, key);
    if (!window) {
      window = { value: 0, expiresAt: now + windowSeconds * 1000 };
      this.#windows.set(key, window);
    }
    window.value += 1;
    const allowed = window.value <= limit;
    return { allowed, count: window.value, retryAfter: allowed ? 0 : Math.max(1, Math.ceil((window.expiresAt - now) / 1000)) };
  }

  async acquireLock(key: string, ttlMs: number): Promise<string | null> {
    if (this.#live(this.#locks, key)) return null;
    const token = randomUUID();
    this.#locks.set(key, { value: token, expiresAt: this.now() + ttlMs });
    return token;
  }

  async renewLock(key: string, token: string, ttlMs: number): Promise<boolean> {
    const lock = this.#live(this.#locks, key);
    if (lock?.value !== token) return false;
    lock.expiresAt = this.now() + ttlMs;
    return true;
  }

  async releaseLock(key: string, token: string): Promise<boolean> {
    const lock = this.#live(this.#locks, key);
    if (lock?.value !== token) return false;
    this.#locks.delete(key);
    return true;
  }

  #liveSlots(slots: Map<string, number>): Map<string, number> {
    const now = this.now();
    for (const [token, expiresAt] of slots) if (expiresAt <= now) slots.delete(token);
    return slots;
  }

  async acquireSlot(key: string, max: number, ttlMs: number): Promise<string | null> {
    const slots = this.#liveSlots(this.#slots.get(key) ?? new Map());
    if (slots.size >= max) return null;
    const token = randomUUID();
    slots.set(token, this.now() + ttlMs);
    this.#slots.set(key, slots);
    return token;
  }

  async releaseSlot(key: string, token: string): Promise<void> {
    this.#slots.get(key)?.delete(token);
  }

  async publish(channel: string, message: string): Promise<void> {
    for (const listener of this.#channels.get(channel) ?? []) {
      queueMicrotask(() => listener(message));
    }
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    const listeners = this.#channels.get(channel) ?? new Set();
    listeners.add(onMessage);
    this.#channels.set(channel, listeners);
    return async () => {
      listeners.delete(onMessage);
      if (listeners.size === 0) this.#channels.delete(channel);
    };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#channels.clear();
  }
}
