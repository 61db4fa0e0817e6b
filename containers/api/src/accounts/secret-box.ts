import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** AES-256-GCM under the server key. Stored with the key's fingerprint, so a changed key is detected. */
export interface Sealed {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
  keyId: string;
}

export class SecretsKeyMismatchError extends Error {
  readonly code = 'SECRETS_KEY_MISMATCH';
  readonly statusCode = 409;
  constructor() {
    super('This stored API key was encrypted under a different server key (SECRETS_KEY changed without a re-encryption step). Enter the key again.');
    this.name = 'SecretsKeyMismatchError';
  }
}

export class SecretBox {
  readonly keyId: string;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The server secrets key must be 32 bytes');
    this.#key = key;
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 16);
  }

  seal(plaintext: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { ciphertext, iv, tag: cipher.getAuthTag(), keyId: this.keyId };
  }

  /**
   * A separate 32-byte key for one purpose (HKDF-SHA256 of the server key, `purpose` as info), so
   * that, for example, asset link signatures never share a key with the encryption of secrets.
   */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `yumina:${purpose}`, 32));
  }

  open(sealed: Sealed): string {
    if (sealed.keyId !== this.keyId) throw new SecretsKeyMismatchError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.iv);
      decipher.setAuthTag(sealed.tag);
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretsKeyMismatchError();
    }
  }
}

/** SECRETS_KEY when configured, else a key generated once into dataDir/secrets.key with mode 0600. */
export function loadSecretBox(configured: string | undefined, dataDir: string): SecretBox {
  if (configured) return new SecretBox(Buffer.from(configured.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  const file = join(dataDir, 'secrets.key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return new SecretBox(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
}
