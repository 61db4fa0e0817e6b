import { randomBytes } from 'node:crypto';
import { createIdentityVerifier } from '@yumina/identity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

/**
 * POST /api/partners/<partner>/token as the container serves it: the real login session, the
 * shared cross-site guard, the rate limit in the real Redis and the real signing keys.
 */
describe('partner token endpoint in the container (real PostgreSQL and Redis)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer((_url) => ({ PARTNER_TOKEN_RATE_LIMIT_PER_MINUTE: '3', DEMO_PARTNER_PORT: '0' }));
  });
  afterAll(() => server?.stop());

  const signedIn = async () => {
    const b = new Browser(server.url);
    const res = await signUp(server, b, { email: `p-${randomBytes(5).toString('hex')}@example.com`, password: 'long enough pw', displayName: 'Rin' });
    expect(res.status).toBe(201);
    return { b, id: res.account.id };
  };
  const token = (b: Browser, headers: Record<string, string> = {}) => b.fetch('/api/partners/demo/token', { method: 'POST', headers });

  it('200 with a verifiable token; 401 without a session; 403 cross-site; 429 with Retry-After past the limit', async () => {
    const { b, id } = await signedIn();
    const ok = await token(b, { origin: server.url, 'sec-fetch-site': 'same-origin' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const issued = (await ok.json()) as { token: string; expiresAt: string };
    const config = (await (await fetch(`${server.url}/api/partners/demo/config`)).json()) as { audience: string; issuer: string };
    const verify = createIdentityVerifier({ jwksUrl: `${server.url}/api/auth/jwks`, issuer: config.issuer, audience: config.audience });
    const claims = await verify.verify(issued.token);
    expect(claims).toMatchObject({ sub: id, displayName: 'Rin', identities: {} });
    expect(claims.exp - claims.iat).toBe(90);
    expect(Date.parse(issued.expiresAt)).toBe(claims.exp * 1000);

    expect((await token(new Browser(server.url))).status).toBe(401);
    for (const headers of [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
      const refused = await token(b, headers);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('CROSS_SITE_REQUEST');
    }
    // The limit is 3 per minute per account; the refused cross-site calls did not count.
    expect((await token(b)).status).toBe(200);
    expect((await token(b)).status).toBe(200);
    const limited = await token(b);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    // Another account has its own allowance.
    expect((await token((await signedIn()).b)).status).toBe(200);
  });

  it('503 with Retry-After on a temporary signing failure, and 200 again once signing works', async () => {
    const { b } = await signedIn();
    const current = server.ctx.partners.keys.current;
    const privateKey = current.privateKey;
    // A key the signer cannot use for RS256 stands in for an unreachable key store / KMS.
    current.privateKey = (await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])) as CryptoKey;
    try {
      const down = await token(b);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      const body = (await down.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('IDENTITY_SIGNING_UNAVAILABLE');
      expect(body.error.message).not.toMatch(/HMAC|RS256|key/i);
    } finally {
      current.privateKey = privateKey;
    }
    expect((await token(b)).status).toBe(200);
  });
});
