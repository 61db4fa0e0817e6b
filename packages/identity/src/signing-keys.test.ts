import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SigningKeyError } from './errors.ts';
import { buildJwks, jwksEtag } from './jwks.ts';
import {
  generateSigningKeyMaterial,
  KEY_FILE_NAME,
  loadOrCreateSigningKeys,
  loadSigningKeys,
  rotatePersistedSigningKeys,
} from './signing-keys.ts';

function rsaPems(bits = 2048) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return {
    pkcs8: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    pkcs1: privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
    spki: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    jwk: JSON.stringify(privateKey.export({ format: 'jwk' })),
  };
}

describe('loadSigningKeys (keys from configuration)', () => {
  it('reads PKCS#8, PKCS#1 and JWK private keys, and public-only next/previous keys', async () => {
    const a = rsaPems();
    const b = rsaPems();
    const c = rsaPems();
    const set = await loadSigningKeys({ current: a.pkcs8, next: b.spki, previous: [{ key: c.jwk, kid: 'old-1' }] });
    expect(set.current.privateKey).not.toBeNull();
    expect(set.current.kid).toMatch(/^[A-Za-z0-9_-]{43}$/); // RFC 7638 thumbprint by default
    expect(set.next?.privateKey).toBeNull();
    expect(set.previous[0]!.kid).toBe('old-1');
    const same = await loadSigningKeys({ current: a.pkcs1 });
    expect(same.current.kid).toBe(set.current.kid); // same key, same thumbprint, whatever the encoding
  });

  it('refuses a public-only current key, small RSA keys, EC keys, junk and duplicate kids', async () => {
    const a = rsaPems();
    await expect(loadSigningKeys({ current: a.spki })).rejects.toThrow(/private part is required/);
    await expect(loadSigningKeys({ current: rsaPems(1024).pkcs8 })).rejects.toThrow(/at least 2048/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    await expect(loadSigningKeys({ current: ec })).rejects.toThrow(/RSA/);
    await expect(loadSigningKeys({ current: 'not a key' })).rejects.toBeInstanceOf(SigningKeyError);
    await expect(loadSigningKeys({ current: { key: a.pkcs8, kid: 'k' }, next: { key: rsaPems().spki, kid: 'k' } })).rejects.toThrow(
      /kid k appears twice/,
    );
  });
});

describe('buildJwks', () => {
  it('publishes current, next and previous keys with public members only', async () => {
    const set = await loadSigningKeys({
      current: { key: rsaPems().jwk, kid: 'cur' },
      next: { key: rsaPems().jwk, kid: 'nxt' },
      previous: [{ key: rsaPems().spki, kid: 'prv' }],
    });
    const jwks = buildJwks(set);
    expect(jwks.keys.map((k) => k.kid)).toEqual(['cur', 'nxt', 'prv']);
    for (const key of jwks.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    }
    expect(JSON.stringify(jwks)).not.toMatch(/"(d|p|q|dp|dq|qi)"/);
    const etag = jwksEtag(jwks);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(jwksEtag(buildJwks({ ...set, next: null }))).not.toBe(etag);
  });
});

describe('persisted keys (embedded default)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'identity-keys-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates once, persists with mode 0600, and loads the same key afterwards', async () => {
    const keyDir = join(dir, 'nested', 'data');
    const first = await loadOrCreateSigningKeys(keyDir);
    const mode = (await stat(join(keyDir, KEY_FILE_NAME))).mode & 0o777;
    expect(mode).toBe(0o600);
    const second = await loadOrCreateSigningKeys(keyDir);
    expect(second.current.kid).toBe(first.current.kid);
    expect(second.current.publicJwk.n).toBe(first.current.publicJwk.n);
  });

  it('concurrent first loads end up with one key', async () => {
    const [a, b] = await Promise.all([loadOrCreateSigningKeys(dir), loadOrCreateSigningKeys(dir)]);
    const c = await loadOrCreateSigningKeys(dir);
    expect(new Set([a.current.kid, b.current.kid, c.current.kid]).size).toBe(1);
  });

  it('rotates: stage publishes next, promote signs with it and keeps the old key, retire drops it later', async () => {
    const original = await loadOrCreateSigningKeys(dir);
    const t0 = new Date('2030-01-01T00:00:00Z');
    const staged = await rotatePersistedSigningKeys(dir, 'stage', { now: t0 });
    expect(staged.current.kid).toBe(original.current.kid);
    expect(buildJwks(staged).keys).toHaveLength(2);
    await expect(rotatePersistedSigningKeys(dir, 'stage')).rejects.toThrow(/already staged/);

    const promoted = await rotatePersistedSigningKeys(dir, 'promote', { now: t0 });
    expect(promoted.current.kid).toBe(staged.next!.kid);
    expect(promoted.previous.map((k) => k.kid)).toEqual([original.current.kid]);
    expect((await loadOrCreateSigningKeys(dir)).current.kid).toBe(staged.next!.kid);

    const early = await rotatePersistedSigningKeys(dir, 'retire', { now: new Date(t0.getTime() + 60_000) });
    expect(early.previous).toHaveLength(1); // tokens signed by it may still be valid
    const late = await rotatePersistedSigningKeys(dir, 'retire', { now: new Date(t0.getTime() + 601_000) });
    expect(late.previous).toHaveLength(0);
    expect((await stat(join(dir, KEY_FILE_NAME))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(dir, KEY_FILE_NAME), 'utf8')).previous).toEqual([]);
  });

  it('generated material loads as a configured key', async () => {
    const material = await generateSigningKeyMaterial();
    const set = await loadSigningKeys({ current: material.key });
    expect(set.current.kid).toBe(material.kid);
  });
});
