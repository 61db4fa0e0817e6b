import { join } from 'node:path';
import type { Config } from '@yumina/config';
import { EMBEDDED_POOL_MAX, type EmbeddedPostgres, startEmbeddedPostgres } from './embedded.ts';
import { DbPool, type PoolPressure, type QueryObserver } from './pool.ts';

export interface Database {
  /** Accounts, private state, writes and read-before-write checks. */
  primary: DbPool;
  /** Public browsing only. The primary when no read endpoint is configured. */
  read: DbPool;
  /** 'postgres' for DATABASE_URL, 'embedded' for PGlite under the data folder. */
  kind: 'postgres' | 'embedded';
  /** The primary's connection string (the embedded server's loopback URL on the embedded default). */
  url: string;
  pressure(): PoolPressure[];
  close(): Promise<void>;
}

export async function openDatabase(config: Config, observer?: QueryObserver): Promise<Database> {
  const db = config.database;
  let embedded: EmbeddedPostgres | undefined;
  let url = db.url;
  if (!url) {
    embedded = await startEmbeddedPostgres(join(config.dataDir, 'pglite'));
    url = embedded.url;
  }
  const primary = new DbPool({
    name: 'primary',
    connectionString: url,
    max: embedded ? Math.min(db.poolMax, EMBEDDED_POOL_MAX) : db.poolMax,
    queryTimeoutMs: db.queryTimeoutMs,
    connectTimeoutMs: db.connectTimeoutMs,
    observer,
    // PGlite is one backend behind every connection of the socket layer: a statement prepared on
    // one connection would be seen (or collide) on the others, so names are dropped there.
    preparedStatements: !embedded,
  });
  const read =
    db.readUrl && !embedded
      ? new DbPool({
          name: 'read',
          connectionString: db.readUrl,
          max: db.readPoolMax,
          queryTimeoutMs: db.queryTimeoutMs,
          connectTimeoutMs: db.connectTimeoutMs,
          observer,
        })
      : primary;
  return {
    primary,
    read,
    kind: embedded ? 'embedded' : 'postgres',
    url,
    pressure: () => (read === primary ? [primary.pressure()] : [primary.pressure(), read.pressure()]),
    async close() {
      await Promise.allSettled([primary.end(), read === primary ? undefined : read.end()]);
      await embedded?.stop();
    },
  };
}
