import { describe, expect, it } from 'vitest';
import { functionApp } from '@yumina/http';
import { handler } from './handler.ts';
import plugin from './plugin.ts';

import { readFileSync } from 'node:fs';
const good = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

function apiGatewayEvent(body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) {
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
