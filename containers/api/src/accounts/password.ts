import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { DEFAULT_PASSWORD_HASH_COST } from '@yumina/config';

const R = 8;
const P = 1;
const KEYLEN = 64;

function derive(password: string, salt: Buffer, p: { N: number; r: number; p: number; keylen: number }): Promise<Buffer> {
  // scrypt needs 128 · N · r bytes: room for that, whatever cost the hash was made with.
  const options: ScryptOptions = { N: p.N, r: p.r, p: p.p, maxmem: Math.max(64 * 1024 * 1024, 256 * p.N * p.r) };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, p.keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * scrypt (Node's OpenSSL binding) with a per-password salt, at N = 2^cost; the parameters are
 * stored with the hash, so a hash keeps verifying after the configured cost changes.
 */
export async function hashPassword(password: string, cost = DEFAULT_PASSWORD_HASH_COST): Promise<string> {
  const N = 2 ** cost;
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P, keylen: KEYLEN });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p), keylen: expected.length });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

const dummies = new Map<number, Promise<string>>();

/**
 * A fixed hash at `cost` to verify against when the e-mail is unknown, so timing does not reveal
 * which e-mails exist (made once per cost).
 */
export function dummyHash(cost = DEFAULT_PASSWORD_HASH_COST): Promise<string> {
  let hash = dummies.get(cost);
  if (!hash) dummies.set(cost, (hash = hashPassword('not-a-real-password', cost)));
  return hash;
}
