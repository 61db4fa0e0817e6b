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
 * Backups (issue 51, point 4; the restore runbook is in docs/OPERATIONS.md, "Backups and
 * restore"): RDS automated backups, a daily snapshot in BACKUP_WINDOW plus the write-ahead log
 * every five minutes, so any second of the last `DATABASE_BACKUP_RETENTION_DAYS` days (a deploy
 * setting, 14 by default, 1 to 35 as RDS allows) can be restored (point-in-time recovery). The
 * automated backups outlive the instance (deleteAutomatedBackups: false); in production a deletion
 * leaves a final snapshot, and deletion protection is on.
 */
export const BACKUP_RETENTION_DAYS = backupRetentionDays(process.env.DATABASE_BACKUP_RETENTION_DAYS);
/** The daily snapshot's window (UTC), the quiet hours; maintenance is kept out of it by RDS. */
export const BACKUP_WINDOW = '03:00-03:30';

export function backupRetentionDays(value: string | undefined): number {
  if (value === undefined || value === '') return 14;
  const n = Number(value);
  // 0 would turn automated backups (and point-in-time recovery) off
  if (!Number.isInteger(n) || n < 1 || n > 35) throw new Error(`DATABASE_BACKUP_RETENTION_DAYS must be a whole number of days from 1 to 35 (got ${JSON.stringify(value)}).`);
  return n;
}

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
    instance: (args) => {
      args.backupRetentionPeriod = BACKUP_RETENTION_DAYS;
      args.backupWindow = BACKUP_WINDOW;
      args.deleteAutomatedBackups = false;
      args.copyTagsToSnapshot = true;
      // production keeps a final snapshot and refuses deletion; a developer's stage is removed whole (sst.config.ts)
      const production = $app.stage === 'production';
      args.skipFinalSnapshot = !production;
      if (production) args.finalSnapshotIdentifier = `${$app.name}-${$app.stage}-database-final`;
      args.deletionProtection = production;
    },
    parameterGroup: (args) => {
      args.parameters = $output(args.parameters ?? []).apply((parameters) => [
        ...parameters,
        { name: 'max_connections', value: String(DATABASE_MAX_CONNECTIONS), applyMethod: 'pending-reboot' },
      ]);
    },
  },
});
