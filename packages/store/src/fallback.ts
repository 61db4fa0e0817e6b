import { MemoryStore } from './memory.ts';
import type { RedisStore } from './redis.ts';
import type { EventLogOptions, LoggedEvent, RateLimitResult, Store, Unsubscribe } from './types.ts';

export interface StoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Redis first. While Redis is unreachable, rate limiting and concurrency slots use this
 * process's memory, cache reads miss and cache writes are dropped, and notifications reach this
 * replica's own subscribers; each transition is logged once. Locks and leases never fall back:
 * two replicas each holding a local lease would both lead, so their errors propagate.
 */
export class FallbackStore implements Store {
  readonly kind = 'redis' as const;
  readonly memory: MemoryStore;
  #degraded = false;

  constructor(
    readonly redis: RedisStore,
    private readonly log: StoreLogger,
    memory?: MemoryStore,
  ) {
    this.memory = memory ?? new MemoryStore();
  }

  /** True while commands are being served from memory. */
  get degraded(): boolean {
    return this.#degraded;
  }

  #ok(): void {
    if (this.#degraded) {
      this.#degraded = false;
      this.log.info({ type: 'store.recovered' }, 'Shared store reachable again: rate limits and concurrency are back on Redis');
    }
  }

  #fail(err: unknown): void {
    if (!this.#degraded) {
      this.#degraded = true;
      this.log.warn(
        { type: 'store.fallback', err: (err as Error).message },
        'Shared store unreachable: rate limits and concurrency fall back to this process',
      );
    }
  }

  async #either<T>(redis: () => Promise<T>, memory: () => Promise<T>): Promise<T> {
    try {
      const result = await redis();
      this.#ok();
      return result;
    } catch (err) {
      this.#fail(err);
      return memory();
    }
  }

  get(key: string): Promise<string | undefined> {
    return this.#either(
      () => this.redis.get(key),
      async () => undefined,
    );
  }

  set(key: string, value: string, ttlSeconds: number): Promise<void> {
    return this.#either(
      () => this.redis.set(key, value, ttlSeconds),
      async () => {},
    );
  }

  del(key: string): Promise<void> {
    return this.#either(
      () => this.redis.del(key),
      async () => {},
    );
  }

  rateLimit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    return this.#either(
      () => this.redis.rateLimit(key, limit, windowSeconds),
      () => this.memory.rateLimit(key, limit, windowSeconds),
    );
  }

  acquireSlot(key: string, max: number, ttlMs: number): Promise<string | null> {
    return this.#either(
      () => this.redis.acquireSlot(key, max, ttlMs),
      () => this.memory.acquireSlot(key, max, ttlMs),
    );
  }

  async releaseSlot(key: string, token: string): Promise<void> {
    // A slot may have been taken from either side; release both (each ignores unknown tokens).
    await this.memory.releaseSlot(key, token);
    await this.redis.releaseSlot(key, token).catch((err: unknown) => this.#fail(err));
  }

  acquireLock(key: string, ttlMs: number): Promise<string | null> {
    return this.redis.acquireLock(key, ttlMs);
  }

  renewLock(key: string, token: string, ttlMs: number): Promise<boolean> {
    return this.redis.renewLock(key, token, ttlMs);
  }

  releaseLock(key: string, token: string): Promise<boolean> {
    return this.redis.releaseLock(key, token);
  }

  publish(channel: string, message: string): Promise<void> {
    return this.#either(
      () => this.redis.publish(channel, message),
      () => this.memory.publish(channel, message),
    );
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    const local = await this.memory.subscribe(channel, onMessage);
    const remote = await this.redis.subscribe(channel, onMessage);
    return async () => {
      await local();
      await remote();
    };
  }

  appendEvent(log: string, channel: string, message: string, options: EventLogOptions): Promise<string> {
    return this.#either(
      () => this.redis.appendEvent(log, channel, message, options),
      () => this.memory.appendEvent(log, channel, message, options),
    );
  }

  readEvents(log: string, afterId: string, limit: number): Promise<LoggedEvent[] | null> {
    // While Redis is down, a reader starts over (null): this replica's memory holds only its own entries.
    return this.#either(
      () => this.redis.readEvents(log, afterId, limit),
      async () => null,
    );
  }

  lastEventId(log: string): Promise<string> {
    return this.#either(
      () => this.redis.lastEventId(log),
      () => this.memory.lastEventId(log),
    );
  }

  touchMember(key: string, member: string, ttlMs: number): Promise<void> {
    return this.#either(
      () => this.redis.touchMember(key, member, ttlMs),
      () => this.memory.touchMember(key, member, ttlMs),
    );
  }

  async removeMember(key: string, member: string): Promise<void> {
    await this.memory.removeMember(key, member);
    await this.redis.removeMember(key, member).catch((err: unknown) => this.#fail(err));
  }

  members(key: string): Promise<string[]> {
    return this.#either(
      () => this.redis.members(key),
      () => this.memory.members(key),
    );
  }

  ping(): Promise<void> {
    return this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.close();
    await this.memory.close();
  }
}
