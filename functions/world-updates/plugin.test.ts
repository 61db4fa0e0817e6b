import { functionApp } from '@yumina/http';
import { MemoryStore } from '@yumina/store';
import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../tests/support/server.ts';
import { createHandler } from './handler.ts';
import plugin, { type WorldUpdatesOptions } from './plugin.ts';

function lambdaEvent(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'example.invalid',
      domainPrefix: 'example',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      time: '23/Nov/2026:10:00:00 +0000',
      timeEpoch: 1_795_000_000_000,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

/** The plugin on its own, as a Lambda would run it: the session lookup is the caller's hook (here a test header). */
describe('function world-updates', () => {
  let server: TestServer;
  let options: WorldUpdatesOptions;
  let worldId: string;
  let ownerId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.ctx.db.primary;
    ownerId = 'acc_functiontestowner01';
    await db.query(`insert into accounts (id, email, display_name) values ($1, 'fn@example.com', 'Fn')`, [ownerId]);
    worldId = 'wld_function_test';
    await db.query(`insert into worlds (id, owner_id, name, definition, status) values ($1, $2, 'Fn world', '{}', 'published')`, [worldId, ownerId]);
    options = {
      db: server.ctx.db,
      store: new MemoryStore(),
      authenticate: async (request: FastifyRequest) => {
        const id = request.headers['x-test-account'];
        return typeof id === 'string' ? { accountId: id, isAdmin: false } : null;
      },
    };
  });
  afterAll(() => server?.stop());

  it('answers the same through app.inject and through an API Gateway v2 Lambda event', async () => {
    const app = await functionApp(plugin, options, { logger: false });
    const handler = createHandler(() => options);
    const me = { 'x-test-account': ownerId };
    const created = await app.inject({ method: 'POST', url: `/api/worlds/${worldId}/updates`, payload: { title: 'From inject', isMajor: false, notifyPlayers: false }, headers: me });
    expect(created.statusCode).toBe(201);
    const viaLambda = (await handler(lambdaEvent('POST', `/api/worlds/${worldId}/updates`, { title: 'From Lambda', isMajor: true, notifyPlayers: false }, me), {})) as {
      statusCode: number;
      body: string;
    };
    expect(viaLambda.statusCode).toBe(201);
    expect(JSON.parse(viaLambda.body)).toMatchObject({ update: { title: 'From Lambda', isMajor: true, worldId }, notified: 0 });

    for (const [method, path, body, headers] of [
      ['GET', `/api/worlds/${worldId}/updates`, undefined, {}],
      ['GET', `/api/worlds/${worldId}/updates`, undefined, me],
      ['POST', `/api/worlds/${worldId}/updates`, { title: 'x', isMajor: false }, {}],
      ['PATCH', `/api/worlds/${worldId}/updates/upd_none`, { title: 'x', isMajor: true }, me],
    ] as const) {
      const injected = await app.inject({ method, url: path, payload: body, headers });
      const lambda = (await handler(lambdaEvent(method, path, body, headers), {})) as { statusCode: number; body: string };
      expect(lambda.statusCode, `${method} ${path}`).toBe(injected.statusCode);
      expect(JSON.parse(lambda.body)).toEqual(injected.json());
    }
    const reader = await app.inject({ method: 'GET', url: `/api/worlds/${worldId}/updates` });
    expect(reader.json()).toMatchObject({ canEdit: false, canCreate: false, canNotify: false });
    expect((reader.json() as { updates: { title: string }[] }).updates.map((u) => u.title).sort()).toEqual(['From Lambda', 'From inject']);
    await app.close();
  });
});
