export interface RateLimitResult {
  allowed: boolean;
  /** Hits counted in the current window, this one included. */
  count: number;
  /** Seconds until the window resets; 0 when allowed. */
  retryAfter: number;
}

export type Unsubscribe = () => Promise<void>;

/**
 * The shared store of seed 000 §1.3: cache, rate limits, locks and leases, concurrency slots and
 * notifications. Two implementations: Redis (shared by every replica) and memory (one process).
 */
export interface Store {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  del(key: string): Promise<void>;
  /** Fixed window: at most `limit` hits per `windowSeconds` for `key`. */
  rateLimit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult>;
  /** Takes a lock/lease when free; returns the owner token, or null when someone else holds it. */
  acquireLock(key: string, ttlMs: number): Promise<string | null>;
  /** Extends a lease; false when the token no longer owns it. */
  renewLock(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Releases a lease; only the owner token can. False when it did not own it. */
  releaseLock(key: string, token: string): Promise<boolean>;
  /** Takes one of `max` concurrent slots for `key`; a slot expires after ttlMs if never released. */
  acquireSlot(key: string, max: number, ttlMs: number): Promise<string | null>;
  releaseSlot(key: string, token: string): Promise<void>;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
