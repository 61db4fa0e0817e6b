import { FallbackStore, type StoreLogger } from './fallback.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis.ts';
import type { Store } from './types.ts';

/** Redis (with the in-memory fallback) when a URL is configured, else the in-memory store. */
export async function openStore(redisUrl: string | undefined, log: StoreLogger, prefix = ''): Promise<Store> {
  if (!redisUrl) return new MemoryStore();
  const redis = new RedisStore({ url: redisUrl, prefix });
  const connected = await redis.connect();
  if (!connected) log.warn({ type: 'store.fallback' }, 'Shared store not reachable at start; retrying in the background');
  return new FallbackStore(redis, log);
}
