import { vpc } from './network';

/** The shared store (rate limits, locks and leases, cache, notifications). */
export const store = new sst.aws.Redis('Store', { vpc, engine: 'valkey' });
