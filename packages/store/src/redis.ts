import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { compareEventIds, type EventLogOptions, type LoggedEvent, type RateLimitResult, type Store, StoreUnavailableError, type Unsubscribe } from './types.ts';

/** Seed 000 §2.1: every shared-store command has a 3 s deadline. */
export const STORE_COMMAND_TIMEOUT_MS = 3_000;

const RATE_LIMIT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {c, ttl}`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
// An event log is a Redis stream: the append, its expiry and the publication in one script, so
// subscribers hear one log's entries in the order of their ids. Each entry keeps the id before it
// (`p`): a reader knows whether the cap dropped entries after the id it asks from.
const APPEND_EVENT = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = '0-0'
if last[1] then prev = last[1][1] end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'm', ARGV[2], 'p', prev)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], id .. ' ' .. ARGV[2])
return id`;
// The id before the oldest entry kept ('gone' when the log is), and the entries after ARGV[1].
const READ_EVENTS = `
local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)
if not first[1] then return {'gone', {}} end
return {first[1][2][4], redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', ARGV[2])}`;
const MEMBERS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)`;
const TOUCH_MEMBER = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

export interface RedisStoreOptions {
  url: string;
  /** Prefix of every key and channel, to share one server between deployments or test files. */
  prefix?: string;
  commandTimeoutMs?: number;
}

/**
 * Redis with the seed's contract: commands fail at once, without queuing, while disconnected
 * (enableOfflineQueue false) and after 3 s against a server that does not answer.
 */
export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly client: Redis;
  #subscriber: Redis | undefined;
  #listeners = new Map<string, Set<(message: string) => void>>();
  #prefix: string;

  constructor(options: RedisStoreOptions) {
    this.#prefix = options.prefix ?? '';
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      commandTimeout: options.commandTimeoutMs ?? STORE_COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      connectTimeout: 3_000,
      keyPrefix: this.#prefix,
      retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 2_000),
      lazyConnect: true,
    });
    this.client.on('error', () => {}); // state changes are observed through command failures
  }

  /** Waits up to `ms` for the first connection; the store works (failing fast) even if it is not there yet. */
  async connect(ms = 3_000): Promise<boolean> {
    const ready = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.client.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    this.client.connect().catch(() => {});
    return ready;
  }

  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new StoreUnavailableError(`Shared store command failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.#call(() => this.client.get(key))) ?? undefined;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.#call(() => this.client.set(key, value, 'PX', Math.max(1, Math.round(ttlSeconds * 1000))));
  }

  async del(key: string): Promise<void> {
    await this.#call(() => this.client.del(key));
  }

  async rateLimit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const [count, ttl] = (await this.#call(() => this.client.eval(RATE_LIMIT, 1, key, String(windowSeconds * 1000)))) as [number, number];
    const allowed = count <= limit;
    return { allowed, count, retryAfter: allowed ? 0 : Math.max(1, Math.ceil(ttl / 1000)) };
  }

  async acquireLock(key: string, ttlMs: number): Promise<string | null> {
    const token = randomUUID();
    const ok = await this.#call(() => this.client.set(key, token, 'PX', ttlMs, 'NX'));
    return ok === 'OK' ? token : null;
  }

  async renewLock(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#call(() => this.client.eval(RENEW, 1, key, token, String(ttlMs)))) === 1;
  }

  async releaseLock(key: string, token: string): Promise<boolean> {
    return (await this.#call(() => this.client.eval(RELEASE, 1, key, token))) === 1;
  }

  async acquireSlot(key: string, max: number, ttlMs: number): Promise<string | null> {
    const token = randomUUID();
    const ok = await this.#call(() => this.client.eval(SLOT, 1, key, String(max), String(ttlMs), token));
    return ok === 1 ? token : null;
  }

  async releaseSlot(key: string, token: string): Promise<void> {
    await this.#call(() => this.client.zrem(key, token));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.#call(() => this.client.publish(this.#prefix + channel, message));
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    if (!this.#subscriber) {
      // Subscriptions wait for a connection (offline queue, no retry limit) instead of failing, so
      // a replica starts while Redis is down; ioredis re-subscribes after every reconnect.
      this.#subscriber = this.client.duplicate({
        enableOfflineQueue: true,
        maxRetriesPerRequest: null,
        keyPrefix: '',
        lazyConnect: false,
        commandTimeout: undefined,
      });
      this.#subscriber.on('error', () => {});
      this.#subscriber.on('message', (ch: string, message: string) => {
        for (const listener of this.#listeners.get(ch) ?? []) listener(message);
      });
    }
    const full = this.#prefix + channel;
    let listeners = this.#listeners.get(full);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(full, listeners);
      // Wait for the subscription like any command (3 s at most); if Redis is down it completes on reconnect.
      const subscribed = this.#subscriber.subscribe(full).then(
        () => true,
        () => false,
      );
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([subscribed, new Promise((r) => (timer = setTimeout(r, STORE_COMMAND_TIMEOUT_MS)))]);
      clearTimeout(timer);
    }
    listeners.add(onMessage);
    return async () => {
      listeners.delete(onMessage);
      if (listeners.size === 0) {
        this.#listeners.delete(full);
        await this.#subscriber?.unsubscribe(full).catch(() => {});
      }
    };
  }

  async appendEvent(log: string, channel: string, message: string, options: EventLogOptions): Promise<string> {
    return (await this.#call(() =>
      this.client.eval(APPEND_EVENT, 1, log, String(options.maxLength), message, String(options.ttlSeconds * 1000), this.#prefix + channel),
    )) as string;
  }

  async readEvents(log: string, afterId: string, limit: number): Promise<LoggedEvent[] | null> {
    const after = compareEventIds(afterId, '0-0') > 0 ? afterId : '0-0';
    const [before, entries] = (await this.#call(() => this.client.eval(READ_EVENTS, 1, log, after, String(limit)))) as [string, [string, string[]][]];
    if (before === 'gone') return after === '0-0' ? [] : null;
    if (compareEventIds(after, before) < 0) return null;
    return entries.map(([id, fields]) => ({ id, message: fields[1] ?? '' }));
  }

  async lastEventId(log: string): Promise<string> {
    const last = (await this.#call(() => this.client.xrevrange(log, '+', '-', 'COUNT', 1))) as [string, string[]][];
    return last[0]?.[0] ?? '0-0';
  }

  async touchMember(key: string, member: string, ttlMs: number): Promise<void> {
    await this.#call(() => this.client.eval(TOUCH_MEMBER, 1, key, member, String(ttlMs)));
  }

  async removeMember(key: string, member: string): Promise<void> {
    await this.#call(() => this.client.zrem(key, member));
  }

  async members(key: string): Promise<string[]> {
    return (await this.#call(() => this.client.eval(MEMBERS, 1, key))) as string[];
  }

  async ping(): Promise<void> {
    await this.#call(() => this.client.ping());
  }

  async close(): Promise<void> {
    this.#subscriber?.disconnect();
    this.client.disconnect();
  }
}
