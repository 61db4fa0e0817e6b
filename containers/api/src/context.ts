import type { Config } from '@yumina/config';
import type { Database } from '@yumina/db';
import type { Store } from '@yumina/store';
import type pino from 'pino';
import type { ReplicaIdentity } from './logger.ts';

/** What every container route receives: one config, one database, one store, one logger. */
export interface AppContext {
  config: Config;
  db: Database;
  store: Store;
  log: pino.Logger;
  identity: ReplicaIdentity;
  startedAt: number;
}
