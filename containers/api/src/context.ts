import type { ObjectStore } from '@yumina/assets';
import type { Config } from '@yumina/config';
import type { PartnerRegistry, SigningKeySet } from '@yumina/identity';
import type { Database } from '@yumina/db';
import type { MailQueue } from '@yumina/mail';
import type { Store } from '@yumina/store';
import type { Telemetry } from '@yumina/telemetry';
import type pino from 'pino';
import type { ExportWorker } from './accounts/data-export.ts';
import type { SecretBox } from './accounts/secret-box.ts';
import type { ReplicaIdentity } from './logger.ts';

/** What every container route receives: one config, one database, one store, one logger. */
export interface AppContext {
  config: Config;
  db: Database;
  store: Store;
  log: pino.Logger;
  identity: ReplicaIdentity;
  /** Runtime samples, query and request timing, captured errors; Prometheus text for /metrics. */
  telemetry: Telemetry;
  /** Encrypts private AI keys at rest. */
  secrets: SecretBox;
  /** Every mail the platform sends goes through this queue (SES, SMTP or the local outbox). */
  mail: MailQueue;
  /** Builds "Download my data" archives in the background; set by the server (absent in bare test contexts). */
  exports?: ExportWorker;
  /** Game builds (and later world assets): S3 in production, a folder locally. */
  objects: ObjectStore;
  /** Partner games (PARTNERS, or the demo partner) and the identity-token signing keys. */
  partners: { registry: PartnerRegistry; keys: SigningKeySet };
  startedAt: number;
}
