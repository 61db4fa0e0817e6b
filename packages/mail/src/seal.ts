import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * A queued message holds a link with a token until it is sent: it is stored sealed (AES-256-GCM
 * under a key derived from SECRETS_KEY), so a read of the database yields no usable link.
 * Layout: 12-byte IV, 16-byte tag, ciphertext.
 */
export class MailSeal {
  readonly #key: Buffer;
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The mail queue key must be 32 bytes');
    this.#key = key;
  }

  seal(value: unknown): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** Throws when the bytes were not sealed with this key (SECRETS_KEY changed) or were altered. */
  open<T>(sealed: Uint8Array): T {
    const buf = Buffer.from(sealed);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, buf.subarray(0, 12));
    decipher.setAuthTag(buf.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString('utf8')) as T;
  }
}
