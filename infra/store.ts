import { vpc } from './network';

/**
 * The shared store (rate limits, locks and leases, cache, notifications). One node without
 * cluster mode: packages/store speaks to a single endpoint. TLS in transit is on; the link
 * becomes a rediss:// REDIS_URL in packages/config.
 */
export const store = new sst.aws.Redis('Store', { vpc, engine: 'valkey', cluster: false });
