import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject, randomUUID } from 'node:crypto';
import { chmod, link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import { SigningKeyError } from './errors.ts';

/**
 * RS256 signing keys and their rotation. Node-only.
 *
 * A key set has one `current` key (signs every token), an optional `next` key (published in the
 * JWKS before it signs, so verifiers already hold it when it is promoted) and zero or more
 * `previous` keys (no longer signing, still published while tokens they signed can be valid).
 * Keys come from configuration (PEM or JWK strings passed in) or, for the embedded default, are
 * generated once and persisted to a directory the caller passes (file mode 0600).
 */

export const SIGNING_ALG = 'RS256';
export const MIN_MODULUS_BITS = 2048;
export const KEY_FILE_NAME = 'identity-signing-keys.json';

export interface PublicSigningJwk {
  kty: 'RSA';
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

export interface SigningKey {
  kid: string;
  /** Present on keys that can sign (always on `current`; on `next` when given with its private part). */
  privateKey: CryptoKey | null;
  publicJwk: PublicSigningJwk;
}

export interface ActiveSigningKey extends SigningKey {
  privateKey: CryptoKey;
}

export interface SigningKeySet {
  current: ActiveSigningKey;
  next: SigningKey | null;
  previous: readonly SigningKey[];
}

/** Key material as configuration holds it: a PEM (PKCS#8, PKCS#1 or SPKI) or a JWK as a JSON string. */
export type KeyMaterial = string | { key: string; kid?: string };

export interface SigningKeyConfig {
  /** Must include the private part. */
  current: KeyMaterial;
  /** Public part suffices; include the private part to promote it later without another secret. */
  next?: KeyMaterial | null;
  /** Public parts suffice. */
  previous?: readonly KeyMaterial[];
}

interface ParsedMaterial {
  kid: string | undefined;
  privateKey: KeyObject | null;
  publicKey: KeyObject;
}

function parseMaterial(material: KeyMaterial, slot: string): ParsedMaterial {
  const text = (typeof material === 'string' ? material : material.key).trim();
  const explicitKid = typeof material === 'string' ? undefined : material.kid;
  let privateKey: KeyObject | null = null;
  let publicKey: KeyObject;
  try {
    if (text.startsWith('-----BEGIN')) {
      if (/-----BEGIN (RSA )?PRIVATE KEY-----/.test(text)) {
        privateKey = createPrivateKey({ key: text, format: 'pem' });
        publicKey = createPublicKey(privateKey);
      } else {
        publicKey = createPublicKey({ key: text, format: 'pem' });
      }
    } else {
      const jwk = JSON.parse(text) as JsonWebKey & { kid?: string; d?: string };
      if (jwk.d) {
        privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
        publicKey = createPublicKey(privateKey);
      } else {
        publicKey = createPublicKey({ key: jwk, format: 'jwk' });
      }
      if (!explicitKid && typeof jwk.kid === 'string' && jwk.kid) {
        return check({ kid: jwk.kid, privateKey, publicKey }, slot);
      }
    }
  } catch (cause) {
    throw new SigningKeyError(`signing key ${slot}: not a readable PEM or JWK`, { cause });
  }
  return check({ kid: explicitKid, privateKey, publicKey }, slot);
}

function check(parsed: ParsedMaterial, slot: string): ParsedMaterial {
  const details = parsed.publicKey.asymmetricKeyDetails;
  if (parsed.publicKey.asymmetricKeyType !== 'rsa') {
    throw new SigningKeyError(`signing key ${slot}: must be an RSA key (RS256)`);
  }
  if ((details?.modulusLength ?? 0) < MIN_MODULUS_BITS) {
    throw new SigningKeyError(`signing key ${slot}: RSA modulus must be at least ${MIN_MODULUS_BITS} bits`);
  }
  if (parsed.kid !== undefined && !/^[A-Za-z0-9._~-]{1,128}$/.test(parsed.kid)) {
    throw new SigningKeyError(`signing key ${slot}: kid must be 1-128 URL-safe characters`);
  }
  return parsed;
}

async function toSigningKey(parsed: ParsedMaterial, slot: string): Promise<SigningKey> {
  const jwk = parsed.publicKey.export({ format: 'jwk' }) as { n: string; e: string };
  const kid = parsed.kid ?? (await calculateJwkThumbprint({ kty: 'RSA', n: jwk.n, e: jwk.e }));
  let privateKey: CryptoKey | null = null;
  if (parsed.privateKey) {
    try {
      const privateJwk = parsed.privateKey.export({ format: 'jwk' });
      privateKey = (await importJWK({ ...privateJwk, alg: SIGNING_ALG }, SIGNING_ALG, { extractable: false })) as CryptoKey;
    } catch (cause) {
      throw new SigningKeyError(`signing key ${slot}: private part could not be imported`, { cause });
    }
  }
  return { kid, privateKey, publicJwk: { kty: 'RSA', n: jwk.n, e: jwk.e, kid, alg: SIGNING_ALG, use: 'sig' } };
}

/** Builds the key set from configuration. Throws SigningKeyError on unreadable keys or duplicate kids. */
export async function loadSigningKeys(config: SigningKeyConfig): Promise<SigningKeySet> {
  const current = await toSigningKey(parseMaterial(config.current, 'current'), 'current');
  if (!current.privateKey) throw new SigningKeyError('signing key current: the private part is required');
  const next = config.next ? await toSigningKey(parseMaterial(config.next, 'next'), 'next') : null;
  const previous: SigningKey[] = [];
  for (const [i, material] of (config.previous ?? []).entries()) {
    previous.push(await toSigningKey(parseMaterial(material, `previous[${i}]`), `previous[${i}]`));
  }
  const set: SigningKeySet = { current: current as ActiveSigningKey, next, previous };
  assertDistinctKids(set);
  return set;
}

function assertDistinctKids(set: SigningKeySet): void {
  const kids = [set.current, ...(set.next ? [set.next] : []), ...set.previous].map((k) => k.kid);
  const duplicate = kids.find((kid, i) => kids.indexOf(kid) !== i);
  if (duplicate) throw new SigningKeyError(`signing keys: kid ${duplicate} appears twice`);
}

/** A fresh 2048-bit RS256 key pair as a private JWK JSON string with its kid (RFC 7638 thumbprint). */
export async function generateSigningKeyMaterial(): Promise<{ kid: string; key: string }> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: MIN_MODULUS_BITS, extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint({ kty: 'RSA', n: publicJwk.n!, e: publicJwk.e! });
  return { kid, key: JSON.stringify({ ...privateJwk, kid }) };
}

/* ---------- the embedded default: a key file under a directory the caller passes ---------- */

interface StoredKey {
  kid: string;
  /** Private JWK as JSON (previous keys may keep only their public part). */
  key: string;
  createdAt: string;
  retiredAt?: string;
}

interface KeyFile {
  version: 1;
  current: StoredKey;
  next: StoredKey | null;
  previous: StoredKey[];
}

async function readKeyFile(path: string): Promise<KeyFile | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SigningKeyError(`signing keys: cannot read ${path}`, { cause: error });
  }
  try {
    const parsed = JSON.parse(text) as KeyFile;
    if (parsed.version !== 1 || !parsed.current?.key) throw new Error('unexpected shape');
    return { version: 1, current: parsed.current, next: parsed.next ?? null, previous: parsed.previous ?? [] };
  } catch (cause) {
    throw new SigningKeyError(`signing keys: ${path} is not a key file`, { cause });
  }
}

async function writeKeyFile(dir: string, file: KeyFile): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, KEY_FILE_NAME);
  const temporary = `${target}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(temporary, 0o600);
  await rename(temporary, target); // atomic: a reader sees the old or the new file, never half of one
}

function fileToConfig(file: KeyFile): SigningKeyConfig {
  return {
    current: { key: file.current.key, kid: file.current.kid },
    next: file.next ? { key: file.next.key, kid: file.next.kid } : null,
    previous: file.previous.map((k) => ({ key: k.key, kid: k.kid })),
  };
}

/**
 * Loads the key set persisted in `dir`, generating and persisting one key on first use (mode
 * 0600). Concurrent first calls in one process share the generation.
 */
export async function loadOrCreateSigningKeys(dir: string, now: Date = new Date()): Promise<SigningKeySet> {
  const path = join(dir, KEY_FILE_NAME);
  let file = await readKeyFile(path);
  if (!file) {
    const fresh = await generateSigningKeyMaterial();
    const candidate: KeyFile = {
      version: 1,
      current: { ...fresh, createdAt: now.toISOString() },
      next: null,
      previous: [],
    };
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(temporary, `${JSON.stringify(candidate, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      await chmod(temporary, 0o600); // exactly 0600 whatever the umask
      // link() publishes the complete file or fails with EEXIST if another process won the race.
      await link(temporary, path);
      file = candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new SigningKeyError(`signing keys: cannot write ${path}`, { cause: error });
      }
      file = await readKeyFile(path);
      if (!file) throw new SigningKeyError(`signing keys: ${path} vanished while loading`);
    } finally {
      await unlink(temporary).catch(() => {});
    }
  }
  return loadSigningKeys(fileToConfig(file));
}

export type RotationStep = 'stage' | 'promote' | 'retire';

/**
 * One step of the rotation procedure on a persisted key file (see docs/PARTNERS.md):
 * - `stage`: generate a `next` key (published, not signing).
 * - `promote`: `next` becomes `current`; the old current becomes a `previous` key.
 * - `retire`: drop previous keys retired at least `retireAfterSeconds` ago (default 600 s: the
 *   90 s token lifetime plus the JWKS cache lifetime, with margin).
 * Replicas pick the change up when they next load the key set (restart or reload).
 */
export async function rotatePersistedSigningKeys(
  dir: string,
  step: RotationStep,
  options: { now?: Date; retireAfterSeconds?: number } = {},
): Promise<SigningKeySet> {
  const now = options.now ?? new Date();
  const path = join(dir, KEY_FILE_NAME);
  const file = await readKeyFile(path);
  if (!file) throw new SigningKeyError(`signing keys: ${path} does not exist`);
  if (step === 'stage') {
    if (file.next) throw new SigningKeyError('signing keys: a next key is already staged');
    file.next = { ...(await generateSigningKeyMaterial()), createdAt: now.toISOString() };
  } else if (step === 'promote') {
    if (!file.next) throw new SigningKeyError('signing keys: no next key to promote; stage one first');
    file.previous = [{ ...file.current, retiredAt: now.toISOString() }, ...file.previous];
    file.current = file.next;
    file.next = null;
  } else {
    const cutoff = now.getTime() - (options.retireAfterSeconds ?? 600) * 1000;
    file.previous = file.previous.filter((k) => !k.retiredAt || Date.parse(k.retiredAt) > cutoff);
  }
  const set = await loadSigningKeys(fileToConfig(file)); // validate before writing
  await writeKeyFile(dir, file);
  return set;
}
