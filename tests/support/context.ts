import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FolderObjectStore } from '@yumina/assets';
import { loadConfig } from '@yumina/config';
import { loadOrCreateSigningKeys } from '@yumina/identity';
import { openDatabase, type QueryObserver } from '@yumina/db';
import { MemoryStore, type Store } from '@yumina/store';
import { createPinoSink, createTelemetry } from '@yumina/telemetry';
import { MailQueue, outboxTransport } from '@yumina/mail';
import pino from 'pino';
import { SecretBox } from '../../containers/api/src/accounts/secret-box.ts';
import type { AppContext } from '../../containers/api/src/context.ts';
import { replicaIdentity } from '../../containers/api/src/logger.ts';
import { containerSettings } from './container-settings.ts';

/**
 * An app context on any database URL (even one that never answers) without running migrations
 * or listening: for tests of behaviour under broken dependencies.
 */
export async function contextFor(env: Record<string, string>, options: { store?: Store; observer?: QueryObserver } = {}): Promise<AppContext> {
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-ctx-'));
  const config = loadConfig({ ...containerSettings(), LOG_LEVEL: 'silent', DATA_DIR: dataDir, PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: '100000', ...env });
  const identity = replicaIdentity(config);
  const log = pino({ level: 'silent' });
  const db = await openDatabase(config, options.observer);
  return {
    telemetry: createTelemetry({ identity, sink: createPinoSink(log) }),
    config,
    db,
    store: options.store ?? new MemoryStore(),
    log,
    identity,
    secrets: new SecretBox(Buffer.alloc(32, 7)),
    mail: new MailQueue({ db: db.primary, transport: outboxTransport(join(dataDir, 'outbox')), from: 'Yumina <no-reply@platform.test>', key: Buffer.alloc(32, 8), log }),
    objects: new FolderObjectStore(join(dataDir, 'objects')),
    partners: { registry: new Map(), keys: await loadOrCreateSigningKeys(dataDir) },
    startedAt: Date.now(),
  };
}
