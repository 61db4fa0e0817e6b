import { readFileSync } from 'node:fs';
import { loadFunctionConfig, PROXY_SECRET_HEADER } from '@yumina/config';
import { functionApp, proxyTrustOf } from '@yumina/http';
import { describe, expect, it } from 'vitest';
import { createHandler, SETTINGS } from './handler.ts';
import plugin from './plugin.ts';

/** The deployed handler as its Lambda configures it: TRUST_PROXY 1 and the Router's proof (infra/functions.ts). */
const SECRET = 'router-proof-'.padEnd(40, 'x');
const config = loadFunctionConfig('world-validate', SETTINGS, { TRUST_PROXY: '1', TRUST_PROXY_SECRET: SECRET }, {});
const handler = createHandler({ logger: false }, () => proxyTrustOf(config));
const THROUGH_ROUTER = { 'content-type': 'application/json', [PROXY_SECRET_HEADER]: SECRET };

const good = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

function apiGatewayEvent(body: unknown, headers: Record<string, string> = THROUGH_ROUTER) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/api/worlds/validate',
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'example.invalid',
      domainPrefix: 'example',
      http: { method: 'POST', path: '/api/worlds/validate', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      time: '23/Nov/2026:10:00:00 +0000',
      timeEpoch: 1_795_000_000_000,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

describe('function world-validate', () => {
  it('answers the same through app.inject and through an API Gateway v2 Lambda event', async () => {
    const app = await functionApp(plugin, {}, { logger: false });
    for (const body of [good, { name: '', version: '19.0.0' }]) {
      const injected = await app.inject({ method: 'POST', url: '/api/worlds/validate', payload: body });
      const lambda = (await handler(apiGatewayEvent(body), {})) as { statusCode: number; body: string };
      expect(lambda.statusCode).toBe(injected.statusCode);
      expect(JSON.parse(lambda.body)).toEqual(injected.json());
    }
    await app.close();
  });

  it('answers only requests carrying the Router’s proof (its Function URL is public): without it or with a wrong one, 403 before the validator runs', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, { ...THROUGH_ROUTER, [PROXY_SECRET_HEADER]: 'forged' }]) {
      const refused = (await handler(apiGatewayEvent(good, headers), {})) as { statusCode: number; body: string };
      expect(refused.statusCode).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'FORBIDDEN' } });
    }
    // The deployed function cannot start without the secret (it would answer everyone).
    expect(() => loadFunctionConfig('world-validate', SETTINGS, { TRUST_PROXY: '1' }, {})).toThrow(/TRUST_PROXY_SECRET is required by the world-validate function/);
  });

  it('422 keeps the validation-result shape; bad JSON is a 400 in the shared error shape', async () => {
    const app = await functionApp(plugin, {}, { logger: false });
    const bad = await app.inject({ method: 'POST', url: '/api/worlds/validate', payload: { version: '20.0.0' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ valid: false, issues: [{ path: 'name', message: expect.any(String) }] });
    const ok = await app.inject({ method: 'POST', url: '/api/worlds/validate', payload: good });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ valid: true, world: good, warnings: [] });
    const notJson = await app.inject({
      method: 'POST',
      url: '/api/worlds/validate',
      payload: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ error: { code: 'INVALID_JSON' } });
    const huge = await app.inject({
      method: 'POST',
      url: '/api/worlds/validate',
      payload: JSON.stringify({ name: 'x', version: '20.0.0', description: 'y'.repeat(5 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
    await app.close();
  });
});
