import { randomUUID } from 'node:crypto';
import { compareEventIds, type EventLogOptions, type LoggedEvent, type RateLimitResult, type Store, type Unsubscribe } from './types.ts';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

interface EventLog {
  entries: LoggedEvent[];
  /** The id before the oldest entry kept: the newest one the cap dropped ('0-0': none). */
  dropped: string;
  last: { ms: number; seq: number };
}

/** One process's store: the embedded default, and the fallback while Redis is unreachable. */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  #values = new Map<string, Expiring<string>>();
  #windows = new Map<string, Expiring<number>>();
  #locks = new Map<string, Expiring<string>>();
  #slots = new Map<string, Map<string, number>>();
  #channels = new Map<string, Set<(message: string) => void>>();
  #logs = new Map<string, Expiring<EventLog>>();
  #sets = new Map<string, Map<string, number>>();
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
    for (const map of [this.#values, this.#windows, this.#locks, this.#logs] as Map<string, Expiring<unknown>>[]) {
      for (const key of map.keys()) this.#live(map, key);
    }
    for (const slotMap of [this.#slots, this.#sets]) {
      for (const [key, slots] of slotMap) {
        this.#liveSlots(slots);
        if (slots.size === 0) slotMap.delete(key);
      }
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

  async appendEvent(log: string, channel: string, message: string, options: EventLogOptions): Promise<string> {
    const now = this.now();
    let entry = this.#live(this.#logs, log);
    if (!entry) {
      entry = { value: { entries: [], dropped: '0-0', last: { ms: 0, seq: 0 } }, expiresAt: 0 };
      this.#logs.set(log, entry);
    }
    entry.expiresAt = now + options.ttlSeconds * 1000;
    const value = entry.value;
    // ids as Redis streams make them: the time, and a sequence within the same millisecond
    value.last = now > value.last.ms ? { ms: now, seq: 0 } : { ms: value.last.ms, seq: value.last.seq + 1 };
    const id = `${value.last.ms}-${value.last.seq}`;
    value.entries.push({ id, message });
    while (value.entries.length > options.maxLength) value.dropped = value.entries.shift()!.id;
    await this.publish(channel, `${id} ${message}`);
    return id;
  }

  async readEvents(log: string, afterId: string, limit: number): Promise<LoggedEvent[] | null> {
    const value = this.#live(this.#logs, log)?.value;
    if (!value) return compareEventIds(afterId, '0-0') > 0 ? null : [];
    if (compareEventIds(afterId, value.dropped) < 0) return null;
    return value.entries.filter((e) => compareEventIds(e.id, afterId) > 0).slice(0, limit);
  }

  async lastEventId(log: string): Promise<string> {
    return this.#live(this.#logs, log)?.value.entries.at(-1)?.id ?? '0-0';
  }

  async touchMember(key: string, member: string, ttlMs: number): Promise<void> {
    const set = this.#sets.get(key) ?? new Map<string, number>();
    set.set(member, this.now() + ttlMs);
    this.#sets.set(key, set);
  }

  async removeMember(key: string, member: string): Promise<void> {
    this.#sets.get(key)?.delete(member);
  }

  async members(key: string): Promise<string[]> {
    const set = this.#sets.get(key);
    return set ? [...this.#liveSlots(set).keys()] : [];
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#channels.clear();
  }
}
