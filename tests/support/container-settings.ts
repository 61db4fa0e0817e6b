import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverUrl, testPrefix } from './services.ts';

let signingKey: string | undefined;

/**
 * What container mode requires beyond a database (packages/config CONTAINER_REQUIRED, and where
 * mail goes): the shared Redis under a key prefix of the test's own, a public origin, keys of its
 * own and an outbox folder of its own. Loopback origins may be http (browsers treat them as secure
 * contexts).
 */
export function containerSettings(publicOrigin = 'https://platform.test', redisUrl?: string): Record<string, string> {
  signingKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    APP_MODE: 'container',
    // the run's Redis unless one is given (the chaos drill restarts one of its own)
    REDIS_URL: redisUrl ?? serverUrl('REDIS_URL'),
    REDIS_KEY_PREFIX: testPrefix(),
    PUBLIC_ORIGIN: publicOrigin,
    SECRETS_KEY: randomBytes(32).toString('base64url'),
    IDENTITY_SIGNING_KEY: signingKey,
    // Mail to a folder of the test's own (container mode needs mail named explicitly).
    MAIL_OUTBOX_DIR: mkdtempSync(join(tmpdir(), 'yumina-outbox-')),
  };
}
