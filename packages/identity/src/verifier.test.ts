import { createHmac, createPublicKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityTokenRejectedError } from './errors.ts';
import { issueIdentityToken } from './identity-token.ts';
import { buildJwks, type JsonWebKeySet } from './jwks.ts';
import { parsePartner } from './partner-config.ts';
import { type ActiveSigningKey, generateSigningKeyMaterial, loadSigningKeys, type SigningKeySet } from './signing-keys.ts';
import { createIdentityVerifier } from './verifier.ts';

/** A loopback JWKS endpoint whose key set the test swaps, counting fetches. */
let server: Server;
let served: JsonWebKeySet = { keys: [] };
let fetches = 0;
let jwksUrl: string;

const issuer = 'https://yumina.example';
const partner = parsePartner({ slug: 'demo', clientOrigin: 'https://client.game.example', issuer });
const account = {
  id: 'u-42',
  email: 'p@example.com',
  emailVerified: true,
  username: 'p',
  displayName: 'P',
  picture: null,
};

let keyA: SigningKeySet; // the key before rotation
let keyB: SigningKeySet; // the key after rotation
let stranger: SigningKeySet; // never published

beforeAll(async () => {
  const load = async (kid: string) => loadSigningKeys({ current: { key: (await generateSigningKeyMaterial()).key, kid } });
  [keyA, keyB, stranger] = await Promise.all([load('key-a'), load('key-b'), load('ghost')]);
  server = createServer((req, res) => {
    fetches++;
    if (req.url !== '/api/auth/jwks') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/auth/jwks`;
  served = buildJwks(keyA);
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const verifier = (overrides: { refetchCooldownMs?: number; url?: string } = {}) =>
  createIdentityVerifier({ jwksUrl: overrides.url ?? jwksUrl, issuer, audience: 'demo', refetchCooldownMs: overrides.refetchCooldownMs });

const issue = (keys: SigningKeySet, now: number = Date.now()) =>
  issueIdentityToken({ keys, account, sessionId: 'sess-1', identities: { google: 'g-1' }, partner, now }).then((t) => t.token);

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function claims(overrides: Record<string, unknown> = {}) {
  const iat = Math.floor(Date.now() / 1000);
  return {
    iss: issuer,
    aud: 'demo',
    sub: 'u-42',
    sid: 'sess-1',
    iat,
    exp: iat + 90,
    jti: 'j-1',
    email: 'p@example.com',
    email_verified: true,
    username: 'p',
    display_name: 'P',
    picture: null,
    identities: {},
    ...overrides,
  };
}

function signWith(key: ActiveSigningKey, payload: Record<string, unknown>) {
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

async function rejection(promise: Promise<unknown>): Promise<IdentityTokenRejectedError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(IdentityTokenRejectedError);
    return error as IdentityTokenRejectedError;
  }
  throw new Error('the token was accepted');
}

describe('identity verifier (item 6a)', () => {
  it('accepts a valid token and returns the identity', async () => {
    served = buildJwks(keyA);
    const identity = await verifier().verify(await issue(keyA));
    expect(identity).toMatchObject({
      iss: issuer,
      aud: 'demo',
      sub: 'u-42',
      sid: 'sess-1',
      emailVerified: true,
      displayName: 'P',
      identities: { google: 'g-1' },
    });
  });

  it('fetches the key set once and caches it', async () => {
    served = buildJwks(keyA);
    const v = verifier();
    const before = fetches;
    for (let i = 0; i < 5; i++) await v.verify(await issue(keyA));
    expect(fetches - before).toBe(1);
  });

  it('refuses alg none', async () => {
    const token = `${b64({ alg: 'none', kid: 'key-a', typ: 'JWT' })}.${b64(claims())}.`;
    expect((await rejection(verifier().verify(token))).reason).toMatch(/algorithm|malformed/);
  });

  it('refuses HS256 signed with the RSA public key as the HMAC secret', async () => {
    const spki = createPublicKey({ key: { ...keyA.current.publicJwk }, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const body = `${b64({ alg: 'HS256', kid: 'key-a', typ: 'JWT' })}.${b64(claims())}`;
    for (const secret of [spki, JSON.stringify(keyA.current.publicJwk), Buffer.from(keyA.current.publicJwk.n, 'base64url')]) {
      const token = `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
      expect((await rejection(verifier().verify(token))).reason).toBe('algorithm');
    }
  });

  it('refuses an unknown kid', async () => {
    expect((await rejection(verifier().verify(await issue(stranger)))).reason).toBe('unknown_key');
  });

  it('refuses a known kid with a signature by another key', async () => {
    const forged = await signWith({ ...stranger.current, kid: 'key-a' }, claims());
    expect((await rejection(verifier().verify(forged))).reason).toBe('signature');
  });

  it('refuses an expired token', async () => {
    const token = await issue(keyA, Date.now() - 120_000); // exp was 30 s ago, beyond the 5 s tolerance
    expect((await rejection(verifier().verify(token))).reason).toBe('expired');
  });

  it('refuses the wrong audience and the wrong issuer', async () => {
    expect((await rejection(verifier().verify(await signWith(keyA.current, claims({ aud: 'other-game' }))))).reason).toBe('audience');
    expect((await rejection(verifier().verify(await signWith(keyA.current, claims({ iss: 'https://evil.example' }))))).reason).toBe(
      'issuer',
    );
    const wrongIssuerVerifier = createIdentityVerifier({ jwksUrl, issuer: 'https://other.example', audience: 'demo' });
    expect((await rejection(wrongIssuerVerifier.verify(await issue(keyA)))).reason).toBe('issuer');
  });

  it('refuses a tampered payload', async () => {
    const [header, , signature] = (await issue(keyA)).split('.');
    const tampered = `${header}.${b64(claims({ sub: 'u-1' }))}.${signature}`;
    expect((await rejection(verifier().verify(tampered))).reason).toBe('signature');
  });

  it('requires exp, sid and jti and checks claim types', async () => {
    const { exp: _exp, ...noExp } = claims();
    expect((await rejection(verifier().verify(await signWith(keyA.current, noExp)))).reason).toBe('claims');
    const { sid: _sid, ...noSid } = claims();
    expect((await rejection(verifier().verify(await signWith(keyA.current, noSid)))).reason).toBe('claims');
    const { jti: _jti, ...noJti } = claims();
    expect((await rejection(verifier().verify(await signWith(keyA.current, noJti)))).reason).toBe('claims');
    expect((await rejection(verifier().verify(await signWith(keyA.current, claims({ sub: 42 }))))).reason).toBe('claims');
    expect(
      (await rejection(verifier().verify(await signWith(keyA.current, claims({ identities: { github: 'x' } }))))).reason,
    ).toBe('claims');
  });

  it('refuses garbage without throwing anything else', async () => {
    for (const token of ['', 'abc', 'a.b.c', `${'x'.repeat(20_000)}`]) {
      await rejection(verifier().verify(token));
    }
  });

  it('fails closed when the key set cannot be fetched', async () => {
    const down = createServer();
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const port = (down.address() as AddressInfo).port;
    await new Promise((resolve) => down.close(resolve));
    const v = verifier({ url: `http://127.0.0.1:${port}/api/auth/jwks` });
    expect((await rejection(v.verify(await issue(keyA)))).reason).toBe('key_set_unavailable');
  });

  it('rotation: the next key is picked up, and a token signed by the previous key still verifies', async () => {
    served = buildJwks(keyA);
    const v = verifier({ refetchCooldownMs: 0 });
    const oldToken = await issue(keyA);
    await v.verify(oldToken); // caches {A}

    // Stage B, then promote it: A becomes a previous key, still published.
    served = buildJwks({ current: keyB.current, next: null, previous: [keyA.current] });
    await expect(v.verify(await issue(keyB))).resolves.toMatchObject({ sub: 'u-42' }); // unknown kid → one refetch
    await expect(v.verify(oldToken)).resolves.toMatchObject({ sub: 'u-42' });
    await expect(verifier().verify(oldToken)).resolves.toMatchObject({ sid: 'sess-1' }); // a fresh verifier too

    // After the previous key is retired, its tokens are refused.
    served = buildJwks(keyB);
    expect((await rejection(verifier().verify(oldToken))).reason).toBe('unknown_key');
  });
});
