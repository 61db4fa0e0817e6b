import { parsePartners } from '@yumina/identity';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler } from './handler.ts';
import { partnerConfigPlugin } from './plugin.ts';

const partners = parsePartners([
  { slug: 'demo', clientOrigin: 'http://127.0.0.1:3001', issuer: 'http://localhost:3000' },
  { slug: 'soon', enabled: false, clientOrigin: 'https://client.soon.example', issuer: 'https://yumina.example', devOrigin: 'http://localhost:5173' },
]);

let app: ReturnType<typeof Fastify>;
afterEach(async () => {
  await app?.close();
});

async function build() {
  app = Fastify();
  await app.register(partnerConfigPlugin, { partners });
  return app;
}

describe('GET /api/partners/:partner/config', () => {
  it('answers exactly the public fields of §2.4', async () => {
    const res = await (await build()).inject({ method: 'GET', url: '/api/partners/demo/config' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.json()).toEqual({
      enabled: true,
      clientOrigin: 'http://127.0.0.1:3001',
      apiOrigin: 'http://localhost:3000',
      audience: 'demo',
      issuer: 'http://localhost:3000',
      jwksUrl: 'http://localhost:3000/api/auth/jwks',
      tokenTtlSeconds: 90,
    });
  });

  it('a disabled partner is reported as enabled: false, without private fields', async () => {
    const res = await (await build()).inject({ method: 'GET', url: '/api/partners/soon/config' });
    expect(res.statusCode).toBe(200);
    expect(res.json().enabled).toBe(false);
    expect(res.body).not.toContain('5173');
    expect(res.body).not.toContain('slug');
  });

  it('unknown partner: 404 with the error shape', async () => {
    for (const url of ['/api/partners/nope/config', '/api/partners/__proto__/config', '/api/partners/DEMO/config']) {
      const res = await (await build()).inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: { code: 'PARTNER_NOT_FOUND', message: 'No such partner.' } });
      await app.close();
    }
  });
});

describe('partner-config Lambda handler', () => {
  it('answers an API Gateway v2 event', async () => {
    const handler = createHandler(() => ({ partners }));
    const event = {
      version: '2.0',
      routeKey: 'GET /api/partners/{partner}/config',
      rawPath: '/api/partners/demo/config',
      rawQueryString: '',
      headers: { host: 'api.yumina.example', accept: 'application/json' },
      requestContext: {
        http: { method: 'GET', path: '/api/partners/demo/config', protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
        requestId: 'req-1',
        stage: '$default',
        timeEpoch: Date.now(),
      },
      pathParameters: { partner: 'demo' },
      isBase64Encoded: false,
    };
    const res = await handler(event, {} as never);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ enabled: true, audience: 'demo', tokenTtlSeconds: 90 });
    const missing = await handler({ ...event, rawPath: '/api/partners/none/config', requestContext: { ...event.requestContext, http: { ...event.requestContext.http, path: '/api/partners/none/config' } } }, {} as never);
    expect(missing.statusCode).toBe(404);
  });
});
