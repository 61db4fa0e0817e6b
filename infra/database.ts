import { vpc } from './network';

/**
 * The connection limit the database is configured with (max_connections in its parameter group).
 * docs/OPERATIONS.md adds up what may connect: replicas × (primary + read pool) + Lambda
 * concurrency × Lambda pool stays below it (tested in tests/infra.test.ts).
 */
export const DATABASE_MAX_CONNECTIONS = 1600;
/** Per Lambda instance of a function that opens the database; with reserved concurrency this bounds what the functions may open. */
export const LAMBDA_POOL_MAX = 2;
export const LAMBDA_RESERVED_CONCURRENCY = 50;
/** The functions that open the database (partner-token, world-updates). */
export const LAMBDAS_WITH_DATABASE = 2;

/**
 * Every connection that may be open at once with `replicas` container replicas, each with pools of
 * `perReplica`: it must stay below DATABASE_MAX_CONNECTIONS (docs/OPERATIONS.md).
 */
export function connectionBudget(replicas: number, perReplica: number): number {
  return replicas * perReplica + LAMBDAS_WITH_DATABASE * LAMBDA_RESERVED_CONCURRENCY * LAMBDA_POOL_MAX;
}

/** The instance: 16 GiB, whose memory-based connection ceiling (RDS: memory / 9,531,392 bytes) is 1,802, above the limit set. */
export const DATABASE_INSTANCE = { class: 'm7g.xlarge', memoryGiB: 16 } as const;

/**
 * PostgreSQL with an RDS Proxy in front; the link hands out the proxy's host, so the container
 * replicas and the Lambdas all connect through it.
 */
export const database = new sst.aws.Postgres('Database', {
  vpc,
  proxy: true,
  instance: DATABASE_INSTANCE.class,
  storage: '50 GB',
  version: '16.4',
  transform: {
    parameterGroup: (args) => {
      args.parameters = $output(args.parameters ?? []).apply((parameters) => [
        ...parameters,
        { name: 'max_connections', value: String(DATABASE_MAX_CONNECTIONS), applyMethod: 'pending-reboot' },
      ]);
    },
  },
});
