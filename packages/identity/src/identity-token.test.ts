import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { SigningUnavailableError } from './errors.ts';
import { buildIdentityClaims, type IdentityAccount } from './identity-claims.ts';
import { issueIdentityToken } from './identity-token.ts';
import { parsePartner } from './partner-config.ts';
import { generateSigningKeyMaterial, loadSigningKeys, type SigningKeySet } from './signing-keys.ts';

const partner = parsePartner({ slug: 'demo', clientOrigin: 'https://client.game.example', issuer: 'https://yumina.example' });
const account: IdentityAccount = {
  id: '00000000000000042',
  email: 'player@example.com',
  emailVerified: true,
  username: 'player42',
  displayName: 'Player Forty-Two',
  picture: 'https://cdn.example/p.png',
};

let keys: SigningKeySet;
beforeAll(async () => {
  keys = await loadSigningKeys({ current: await generateSigningKeyMaterial() });
});

describe('issueIdentityToken (§2.5)', () => {
  it('signs exactly the claims of §2.5 with RS256 and the kid in the header', async () => {
    const now = new Date('2030-05-01T12:00:00.750Z');
    const { token, expiresAt } = await issueIdentityToken({
      keys,
      account,
      sessionId: 'sess-1',
      identities: [
        { provider: 'google', subject: 'g-123' },
        { provider: 'discord', subject: 'd-456' },
        { provider: 'github', subject: 'ignored' },
      ],
      partner,
      now,
    });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', kid: keys.current.kid, typ: 'JWT' });
    const claims = decodeJwt(token);
    const iat = Math.floor(now.getTime() / 1000);
    expect(Object.keys(claims).sort()).toEqual(
      ['iss', 'aud', 'sub', 'sid', 'iat', 'exp', 'jti', 'email', 'email_verified', 'username', 'display_name', 'picture', 'identities'].sort(),
    );
    expect(claims).toMatchObject({
      iss: 'https://yumina.example',
      aud: 'demo',
      sub: '00000000000000042', // a string, leading zeros intact
      sid: 'sess-1',
      iat,
      exp: iat + 90,
      email: 'player@example.com',
      email_verified: true,
      username: 'player42',
      display_name: 'Player Forty-Two',
      picture: 'https://cdn.example/p.png',
      identities: { google: 'g-123', discord: 'd-456' },
    });
    expect(typeof claims.jti).toBe('string');
    expect(expiresAt).toBe(new Date((iat + 90) * 1000).toISOString());
    const publicKey = await importJWK(keys.current.publicJwk, 'RS256');
    await expect(jwtVerify(token, publicKey, { currentDate: now })).resolves.toBeTruthy();
  });

  it('jti is random per token', async () => {
    const input = { keys, account, sessionId: 's', identities: null, partner };
    const a = decodeJwt((await issueIdentityToken(input)).token).jti;
    const b = decodeJwt((await issueIdentityToken(input)).token).jti;
    expect(a).not.toBe(b);
  });

  it('password-only account: identities is {}; null username, non-https picture and empty display name are handled', () => {
    const claims = buildIdentityClaims({
      account: { ...account, username: null, displayName: '  ', picture: 'http://insecure.example/p.png' },
      sessionId: 's',
      identities: {},
      issuer: 'https://yumina.example',
      audience: 'demo',
      ttlSeconds: 90,
      now: 0,
    });
    expect(claims.identities).toEqual({});
    expect(claims.username).toBeNull();
    expect(claims.picture).toBeNull();
    expect(claims.display_name).toBe('player'); // never empty
    expect(buildIdentityClaims({ ...claimsInputWith({ twitter: 't-1', google: null }) }).identities).toEqual({ twitter: 't-1' });
  });

  it('a failing signing backend becomes SigningUnavailableError (503)', async () => {
    const broken: SigningKeySet = {
      ...keys,
      current: { ...keys.current, privateKey: keys.current.publicJwk as unknown as CryptoKey },
    };
    const attempt = issueIdentityToken({ keys: broken, account, sessionId: 's', identities: null, partner });
    await expect(attempt).rejects.toBeInstanceOf(SigningUnavailableError);
    await expect(attempt).rejects.toMatchObject({ code: 'IDENTITY_SIGNING_UNAVAILABLE' });
  });
});

function claimsInputWith(identities: Record<string, string | null>) {
  return { account, sessionId: 's', identities, issuer: 'https://i.example', audience: 'a', ttlSeconds: 90, now: 0 };
}
