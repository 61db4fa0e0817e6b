import type { AddressInfo } from 'node:net';
import {
  createIdentityVerifier,
  generateSigningKeyMaterial,
  issueIdentityToken,
  loadSigningKeys,
  parsePartner,
  type SigningKeySet,
} from '@yumina/identity';
import Fastify from 'fastify';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from './handler.ts';
import { JWKS_CACHE_CONTROL, jwksPlugin } from './plugin.ts';

let current: SigningKeySet;
let rotated: SigningKeySet; // next promoted to current, the old one kept as previous
beforeAll(async () => {
  const [a, b] = await Promise.all([generateSigningKeyMaterial(), generateSigningKeyMaterial()]);
  current = await loadSigningKeys({ current: a.key, next: b.key });
  rotated = await loadSigningKeys({ current: b.key, previous: [a.key] });
});

let app: ReturnType<typeof Fastify>;
afterEach(async () => {
  await app?.close();
});

describe('GET /api/auth/jwks', () => {
  it('publishes a standard JWK Set of public parts with cache headers and an ETag', async () => {
    app = Fastify();
    await app.register(jwksPlugin, { keys: current });
    const res = await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe(JWKS_CACHE_CONTROL);
    expect(res.headers['cache-control']).toMatch(/max-age=300/);
    const body = res.json() as { keys: Array<Record<string, string>> };
    expect(body.keys.map((k) => k.kid)).toEqual([current.current.kid, current.next!.kid]);
    for (const key of body.keys) expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);

    const again = await app.inject({ method: 'GET', url: '/api/auth/jwks', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('reads the key set at every request, so a rotation shows at once with a new ETag', async () => {
    let keys = current;
    app = Fastify();
    await app.register(jwksPlugin, { keys: () => keys });
    const before = await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    keys = rotated;
    const after = await app.inject({ method: 'GET', url: '/api/auth/jwks', headers: { 'if-none-match': String(before.headers.etag) } });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(after.json().keys.map((k: { kid: string }) => k.kid)).toEqual([rotated.current.kid, rotated.previous[0]!.kid]);
  });

  it('answers 503 without caching when the key set cannot be read', async () => {
    app = Fastify();
    await app.register(jwksPlugin, {
      keys: () => {
        throw new Error('key store down');
      },
    });
    const res = await app.inject({ method: 'GET', url: '/api/auth/jwks' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json().error.code).toBe('JWKS_UNAVAILABLE');
  });

  it('the partner verifier accepts tokens through this endpoint, including the previous key after rotation', async () => {
    let keys = current;
    app = Fastify();
    await app.register(jwksPlugin, { keys: () => keys });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const partner = parsePartner({ slug: 'demo', clientOrigin: 'http://localhost:3001', issuer: origin });
    const verifier = createIdentityVerifier({ jwksUrl: partner.jwksUrl, issuer: partner.issuer, audience: partner.audience });
    const account = { id: 'u1', email: 'a@b.example', emailVerified: false, username: null, displayName: 'A', picture: null };
    const before = await issueIdentityToken({ keys, account, sessionId: 's1', identities: null, partner });
    keys = rotated;
    const after = await issueIdentityToken({ keys, account, sessionId: 's1', identities: null, partner });
    await expect(verifier.verify(before.token)).resolves.toMatchObject({ sub: 'u1', identities: {} });
    await expect(verifier.verify(after.token)).resolves.toMatchObject({ sub: 'u1' }); // published as next before it signed
  });
});

describe('jwks Lambda handler', () => {
  it('answers an API Gateway v2 event', async () => {
    const handler = createHandler(() => ({ keys: current }));
    const res = await handler(
      {
        version: '2.0',
        routeKey: 'GET /api/auth/jwks',
        rawPath: '/api/auth/jwks',
        rawQueryString: '',
        headers: { host: 'api.yumina.example' },
        requestContext: { http: { method: 'GET', path: '/api/auth/jwks', protocol: 'HTTP/1.1', sourceIp: '203.0.113.9' }, stage: '$default' },
        isBase64Encoded: false,
      },
      {} as never,
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers?.['cache-control']).toBe(JWKS_CACHE_CONTROL);
    expect(JSON.parse(res.body).keys).toHaveLength(2);
  });
});
