import { vpc } from './network';

/**
 * The connection limit the database is configured with (max_connections in its parameter group).
 * docs/OPERATIONS.md adds up what may connect: replicas × (primary + read pool) + Lambda
 * concurrency × Lambda pool stays below it (tested in tests/infra.test.ts).
 */
export const DATABASE_MAX_CONNECTIONS = 800;

/**
 * PostgreSQL with an RDS Proxy in front; the link hands out the proxy's host, so the container
 * replicas and the Lambdas all connect through it.
 */
export const database = new sst.aws.Postgres('Database', {
  vpc,
  proxy: true,
  instance: 'm7g.large',
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
