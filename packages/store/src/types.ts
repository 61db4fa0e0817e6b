export interface RateLimitResult {
  allowed: boolean;
  /** Hits counted in the current window, this one included. */
  count: number;
  /** Seconds until the window resets; 0 when allowed. */
  retryAfter: number;
}

export type Unsubscribe = () => Promise<void>;

/** One entry of an event log (appendEvent): its id (`<ms>-<seq>`, ordered) and its message. */
export interface LoggedEvent {
  id: string;
  message: string;
}

export interface EventLogOptions {
  /** Entries kept: older ones are dropped as new ones arrive. */
  maxLength: number;
  /** The log is dropped this long after its last append. */
  ttlSeconds: number;
}

/** Compares two event ids (`<ms>-<seq>`): negative when `a` is older. */
export function compareEventIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** A published message of an event log: `<id> <message>` (eventOf splits it). */
export function eventOf(published: string): LoggedEvent {
  const space = published.indexOf(' ');
  return { id: published.slice(0, space), message: published.slice(space + 1) };
}

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
  /**
   * Appends `message` to the capped event log `log` and publishes it on `channel` as
   * `<id> <message>` (eventOf), in one step: subscribers hear the entries of one log in the order
   * of their ids. Resolves with the entry's id.
   */
  appendEvent(log: string, channel: string, message: string, options: EventLogOptions): Promise<string>;
  /**
   * The entries of `log` after `afterId`, oldest first, at most `limit`; null when entries after
   * `afterId` may have been dropped (the log was capped past it, or expired): read the whole again.
   */
  readEvents(log: string, afterId: string, limit: number): Promise<LoggedEvent[] | null>;
  /** The newest entry's id of `log`, or '0-0' when it holds none. */
  lastEventId(log: string): Promise<string>;
  /** Adds (or keeps) `member` in the expiring set `key` for `ttlMs` (presence). */
  touchMember(key: string, member: string, ttlMs: number): Promise<void>;
  removeMember(key: string, member: string): Promise<void>;
  /** The members of the expiring set `key` whose time has not run out. */
  members(key: string): Promise<string[]>;
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
