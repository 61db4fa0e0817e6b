import { serverUrl } from './services.js';

/**
 * The run's Redis: REDIS_URL when given, else the one the global setup started (./services.ts).
 * Tests share it and isolate themselves with a random key prefix.
 */
export const sharedRedisUrl = serverUrl('REDIS_URL');
export { testPrefix } from './services.js';

export { freePort } from './ports.js';
export { OwnRedis } from './redis-server.js';
