import { vpc } from './network';

/**
 * PostgreSQL with an RDS Proxy in front: the Lambdas connect through the proxy (at most 2
 * connections per Lambda instance, see infra/functions.ts), the container replicas hold their
 * own pools (100 primary + 80 read per replica). docs/OPERATIONS.md adds up the totals.
 */
export const database = new sst.aws.Postgres('Database', {
  vpc,
  proxy: true,
  instance: 'm7g.large',
  storage: '50 GB',
  version: '16.4',
});
