import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { generateSigningKeyMaterial, loadSigningKeys, parsePartners, type SigningKeySet } from '@yumina/identity';
import Fastify, { type FastifyRequest } from 'fastify';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from './handler.ts';
import { type PartnerTokenPluginOptions, partnerTokenPlugin, type TokenSubject } from './plugin.ts';

const partners = parsePartners([
  { slug: 'demo', clientOrigin: 'https://client.game.example', issuer: 'https://yumina.example' },
  { slug: 'off', enabled: false, clientOrigin: 'https://client.off.example', issuer: 'https://yumina.example' },
]);

const alice: TokenSubject = {
  account: {
    id: 'acc-7',
    email: 'alice@example.com',
    emailVerified: true,
    username: 'alice',
    displayName: 'Alice',
    picture: 'https://cdn.example/a.png',
  },
  sessionId: 'login-1',
  identities: [{ provider: 'discord', subject: 'd-9' }],
};

let keys: SigningKeySet;
beforeAll(async () => {
  keys = await loadSigningKeys({ current: await generateSigningKeyMaterial() });
});

/** The hooks the container supplies, driven here by test headers. */
function hooks(overrides: Partial<PartnerTokenPluginOptions> = {}): PartnerTokenPluginOptions & { limited: string[] } {
  const limited: string[] = [];
  return {
    partners,
    keys,
    authenticate: (request: FastifyRequest) => (request.headers['x-session'] === 'alice' ? alice : null),
    rateLimit: (accountId: string) => {
      limited.push(accountId);
      return { allowed: true, retryAfterSeconds: 0 };
    },
    isCrossSite: (request: FastifyRequest) => request.headers['sec-fetch-site'] === 'cross-site',
    now: () => Date.parse('2030-01-01T00:00:00.000Z'),
    limited,
    ...overrides,
  };
}

let app: ReturnType<typeof Fastify>;
afterEach(async () => {
  await app?.close();
});

async function post(options: PartnerTokenPluginOptions, headers: Record<string, string> = {}, partner = 'demo') {
  app = Fastify();
  await app.register(partnerTokenPlugin, options);
  return app.inject({ method: 'POST', url: `/api/partners/${partner}/token`, headers });
}

function decode(token: string) {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const valid = verifySignature(
    'RSA-SHA256',
    Buffer.from(`${header}.${payload}`),
    createPublicKey({ key: { ...keys.current.publicJwk }, format: 'jwk' }),
    Buffer.from(signature, 'base64url'),
  );
  return {
    valid,
    header: JSON.parse(Buffer.from(header, 'base64url').toString()),
    claims: JSON.parse(Buffer.from(payload, 'base64url').toString()),
  };
}

describe('POST /api/partners/:partner/token', () => {
  it('issues {token, expiresAt} for a signed-in account, never cached', async () => {
    const h = hooks();
    const res = await post(h, { 'x-session': 'alice', 'sec-fetch-site': 'same-origin' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'token']);
    expect(body.expiresAt).toBe('2030-01-01T00:01:30.000Z');
    const { valid, header, claims } = decode(body.token);
    expect(valid).toBe(true);
    expect(header).toEqual({ alg: 'RS256', kid: keys.current.kid, typ: 'JWT' });
    expect(claims).toMatchObject({
      iss: 'https://yumina.example',
      aud: 'demo',
      sub: 'acc-7',
      sid: 'login-1',
      exp: claims.iat + 90,
      identities: { discord: 'd-9' },
    });
    expect(h.limited).toEqual(['acc-7']);
  });

  it('401 without a platform login session', async () => {
    const res = await post(hooks());
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: { code: 'UNAUTHENTICATED', message: 'Sign in to continue.' } });
  });

  it('403 for a cross-site browser origin, even with a session, before anything else runs', async () => {
    const h = hooks();
    const res = await post(h, { 'x-session': 'alice', 'sec-fetch-site': 'cross-site' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('CROSS_SITE_REQUEST');
    expect(h.limited).toEqual([]);
  });

  it('429 with Retry-After when rate limited', async () => {
    const res = await post(hooks({ rateLimit: () => ({ allowed: false, retryAfterSeconds: 12.2 }) }), { 'x-session': 'alice' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('13');
    expect(res.json().error.code).toBe('RATE_LIMITED');
  });

  it('503 on a temporary signing failure (key store unreadable, or the signer failing)', async () => {
    const storeDown = await post(
      hooks({
        keys: () => {
          throw new Error('secret store timeout');
        },
      }),
      { 'x-session': 'alice' },
    );
    expect(storeDown.statusCode).toBe(503);
    expect(storeDown.json().error.code).toBe('IDENTITY_SIGNING_UNAVAILABLE');
    expect(storeDown.headers['retry-after']).toBe('5');
    await app.close();

    const brokenSigner: SigningKeySet = { ...keys, current: { ...keys.current, privateKey: {} as CryptoKey } };
    const signerDown = await post(hooks({ keys: brokenSigner }), { 'x-session': 'alice' });
    expect(signerDown.statusCode).toBe(503);
    expect(signerDown.body).not.toContain('CryptoKey'); // no internals in the answer
  });

  it('404 for an unknown or disabled partner', async () => {
    expect((await post(hooks(), { 'x-session': 'alice' }, 'nope')).statusCode).toBe(404);
    await app.close();
    const off = await post(hooks(), { 'x-session': 'alice' }, 'off');
    expect(off.statusCode).toBe(404);
    expect(off.json().error.code).toBe('PARTNER_NOT_FOUND');
  });
});

describe('partner-token Lambda handler', () => {
  const event = (headers: Record<string, string>) => ({
    version: '2.0',
    routeKey: 'POST /api/partners/{partner}/token',
    rawPath: '/api/partners/demo/token',
    rawQueryString: '',
    cookies: ['session=abc'],
    headers: { host: 'yumina.example', origin: 'https://yumina.example', ...headers },
    requestContext: {
      http: { method: 'POST', path: '/api/partners/demo/token', protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
      requestId: 'req-1',
      stage: '$default',
      timeEpoch: Date.now(),
    },
    pathParameters: { partner: 'demo' },
    isBase64Encoded: false,
  });

  it('answers API Gateway v2 events: 200 with a token, 401 without a session', async () => {
    const handler = createHandler(() => hooks());
    const ok = await handler(event({ 'x-session': 'alice' }), {} as never);
    expect(ok.statusCode).toBe(200);
    expect(decode(JSON.parse(ok.body).token).valid).toBe(true);
    const anonymous = await handler(event({}), {} as never);
    expect(anonymous.statusCode).toBe(401);
    expect(JSON.parse(anonymous.body)).toEqual({ error: { code: 'UNAUTHENTICATED', message: 'Sign in to continue.' } });
  });

  it('a failing option loader is retried on the next event', async () => {
    let attempts = 0;
    const handler = createHandler(() => {
      attempts++;
      if (attempts === 1) throw new Error('config not ready');
      return hooks();
    });
    await expect(handler(event({ 'x-session': 'alice' }), {} as never)).rejects.toThrow('config not ready');
    expect((await handler(event({ 'x-session': 'alice' }), {} as never)).statusCode).toBe(200);
  });
});
