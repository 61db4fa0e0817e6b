import { generateSigningKeyMaterial } from '@yumina/identity';
import { type Config, loadFunctionConfig, PROXY_SECRET_HEADER } from '@yumina/config';
import { proxyTrustOf } from '@yumina/http';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as jwks from '../functions/jwks/handler.ts';
import * as partnerConfig from '../functions/partner-config/handler.ts';
import * as partnerToken from '../functions/partner-token/handler.ts';
import * as worldUpdates from '../functions/world-updates/handler.ts';
import { sharedRedisUrl, testPrefix } from './support/redis.ts';
import { Browser, startTestServer, type TestServer } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * The deployed options of the functions (handler.ts `deployedOptions`, what the deployed
 * `handler` builds once per cold start) on the real PostgreSQL and Redis, driven with Function URL
 * events: the login session of a cookie made by the container is verified by the functions through
 * the same package code. Each is configured as its Lambda is (infra/functions.ts): TRUST_PROXY 1 (the
 * Router, CloudFront) and the Router's proof, which every event below carries unless it says not.
 * The compiled bundles are driven the same way by tests/browser/topology.test.ts.
 */
const ORIGIN = 'https://platform.test';
const PROOF = 'the-routers-proof-'.padEnd(48, '0');
const PARTNERS = JSON.stringify([{ slug: 'starfall', clientOrigin: 'https://play.starfall.example', issuer: ORIGIN, audience: 'starfall' }]);

interface Result {
  statusCode: number;
  headers?: Record<string, string>;
  cookies?: string[];
  body: string;
}
type Handler = (event: unknown, context: unknown) => Promise<Result>;

function urlEvent(method: string, path: string, options: { cookies?: string[]; headers?: Record<string, string | undefined>; body?: unknown; sourceIp?: string } = {}) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    ...(options.cookies ? { cookies: options.cookies } : {}),
    headers: {
      host: 'fn.lambda-url.local',
      [PROXY_SECRET_HEADER]: PROOF,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    } as Record<string, string | undefined>,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'fn',
      domainName: 'fn.lambda-url.local',
      domainPrefix: 'fn',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: options.sourceIp ?? '127.0.0.1', userAgent: 'test' },
      requestId: `req-${Math.random()}`,
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    isBase64Encoded: false,
  };
}

describe('the deployed function handlers on the real PostgreSQL and Redis', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let player: Browser;
  let cookie: string;
  let accountId: string;
  const handlers = {} as Record<'jwks' | 'partnerConfig' | 'partnerToken' | 'worldUpdates', Handler>;

  beforeAll(async () => {
    server = await startTestServer();
    env = {
      DATABASE_URL: server.database.url,
      DATABASE_POOL_MAX: '2',
      REDIS_URL: sharedRedisUrl,
      REDIS_KEY_PREFIX: testPrefix(),
      PUBLIC_ORIGIN: ORIGIN,
      IDENTITY_SIGNING_KEY: (await generateSigningKeyMaterial()).key,
      PARTNERS,
      PARTNER_TOKEN_RATE_LIMIT_PER_MINUTE: '2',
      TRUST_PROXY: '1',
      TRUST_PROXY_SECRET: PROOF,
    };
    const config = (name: string, settings: readonly Parameters<typeof loadFunctionConfig>[1][number][]): Config => loadFunctionConfig(name, settings, env, {});
    const configs = {
      jwks: config('jwks', jwks.SETTINGS),
      partnerConfig: config('partner-config', partnerConfig.SETTINGS),
      partnerToken: config('partner-token', partnerToken.SETTINGS),
      worldUpdates: config('world-updates', worldUpdates.SETTINGS),
    };
    handlers.jwks = jwks.createHandler(() => jwks.deployedOptions(configs.jwks), undefined, () => proxyTrustOf(configs.jwks)) as Handler;
    handlers.partnerConfig = partnerConfig.createHandler(() => partnerConfig.deployedOptions(configs.partnerConfig), undefined, () => proxyTrustOf(configs.partnerConfig)) as Handler;
    handlers.partnerToken = partnerToken.createHandler(() => partnerToken.deployedOptions(configs.partnerToken), undefined, () => proxyTrustOf(configs.partnerToken)) as Handler;
    handlers.worldUpdates = worldUpdates.createHandler(() => worldUpdates.deployedOptions(configs.worldUpdates), undefined, () => proxyTrustOf(configs.worldUpdates)) as Handler;
    player = new Browser(server.url);
    const signup = await signUp(server, player, { email: `fn-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Io' });
    expect(signup.status).toBe(201);
    accountId = (signup as { account: { id: string } }).account.id;
    cookie = player.cookieHeader;
  });
  afterAll(() => server?.stop());

  it('partner-token signs a token for the login session of the cookie, which verifies against the jwks function’s key set; 401, 403 and 429 as in the container', async () => {
    const config = await handlers.partnerConfig(urlEvent('GET', '/api/partners/starfall/config'), {});
    expect(config.statusCode).toBe(200);
    const { issuer, audience } = JSON.parse(config.body) as { issuer: string; audience: string };
    expect((await handlers.partnerConfig(urlEvent('GET', '/api/partners/demo/config'), {})).statusCode).toBe(404); // never the demo partner

    const issued = await handlers.partnerToken(urlEvent('POST', '/api/partners/starfall/token', { cookies: [cookie], headers: { origin: ORIGIN } }), {});
    expect(issued.statusCode, issued.body).toBe(200);
    const { token } = JSON.parse(issued.body) as { token: string };
    const keySet = await handlers.jwks(urlEvent('GET', '/api/auth/jwks'), {});
    expect(keySet.statusCode).toBe(200);
    const { payload } = await jwtVerify(token, createLocalJWKSet(JSON.parse(keySet.body)), { issuer, audience });
    expect(payload.sub).toBe(accountId);
    expect(typeof payload.sid).toBe('string');

    expect((await handlers.partnerToken(urlEvent('POST', '/api/partners/starfall/token'), {})).statusCode).toBe(401);
    expect((await handlers.partnerToken(urlEvent('POST', '/api/partners/starfall/token', { cookies: ['yumina_session=forged'] }), {})).statusCode).toBe(401);
    const crossSite = await handlers.partnerToken(urlEvent('POST', '/api/partners/starfall/token', { cookies: [cookie], headers: { origin: 'https://evil.example' } }), {});
    expect(crossSite.statusCode).toBe(403);
    // The limit (2 per minute here) counts in Redis: the second token of the minute passes, the third is refused.
    expect((await handlers.partnerToken(urlEvent('POST', '/api/partners/starfall/token', { cookies: [cookie] }), {})).statusCode).toBe(200);
    const limited = await handlers.partnerToken(urlEvent('POST', '/api/partners/starfall/token', { cookies: [cookie] }), {});
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('world-updates reads and writes records with the login session, renews a session due for it and refuses a cross-site write', async () => {
    const world = JSON.parse(await (await import('node:fs/promises')).readFile(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
    const created = await player.fetch('/api/worlds', { method: 'POST', json: { world } });
    const worldId = ((await created.json()) as { id: string }).id;
    const path = `/api/worlds/${worldId}/updates`;

    const guest = await handlers.worldUpdates(urlEvent('GET', path), {});
    expect(guest.statusCode).toBe(404); // unpublished: only its author sees it
    const mine = await handlers.worldUpdates(urlEvent('GET', path, { cookies: [cookie] }), {});
    expect(mine.statusCode, mine.body).toBe(200);
    expect(JSON.parse(mine.body)).toMatchObject({ worldId, canEdit: true, updates: [] });

    const write = await handlers.worldUpdates(urlEvent('POST', path, { cookies: [cookie], headers: { origin: ORIGIN }, body: { title: 'Chapter two', isMajor: false, notifyPlayers: false } }), {});
    expect(write.statusCode, write.body).toBe(201);
    const crossSite = await handlers.worldUpdates(urlEvent('POST', path, { cookies: [cookie], headers: { origin: 'https://evil.example' }, body: { title: 'x', isMajor: false, notifyPlayers: false } }), {});
    expect(crossSite.statusCode).toBe(403);
    expect(JSON.parse(crossSite.body).error.code).toBe('CROSS_SITE_REQUEST');
    const anonymous = await handlers.worldUpdates(urlEvent('POST', path, { body: { title: 'x', isMajor: false, notifyPlayers: false } }), {});
    expect(anonymous.statusCode).toBe(401);
    // The container reads what the function wrote (one database).
    const history = (await (await player.fetch(path)).json()) as { updates: { title: string }[] };
    expect(history.updates.map((u) => u.title)).toEqual(['Chapter two']);

    // Sliding expiry: a session last renewed two days ago gets its cookie back, Secure on the https origin.
    await server.ctx.db.primary.query(`update login_sessions set last_seen_at = now() - interval '2 days' where account_id = $1`, [accountId]);
    const renewed = await handlers.worldUpdates(urlEvent('GET', path, { cookies: [cookie] }), {});
    expect(renewed.statusCode).toBe(200);
    expect(renewed.cookies?.[0]).toMatch(new RegExp(`^${cookie.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; .*Expires=.*HttpOnly.*Secure.*SameSite=Lax`, 'i'));
  });

  it('answers only events with the Router’s proof, and takes the client address a login records as the container does: from X-Forwarded-For, one hop back, only with the proof', async () => {
    const addressOf = async () =>
      (await server.ctx.db.primary.query<{ client_address: string }>('select client_address from login_sessions where account_id = $1 and ended_at is null', [accountId])).rows.map((r) => r.client_address);
    const world = JSON.parse(await (await import('node:fs/promises')).readFile(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
    const worldId = ((await (await player.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
    const before = await addressOf();
    expect(before).toEqual(['127.0.0.1']); // the container's last request, from loopback
    const forwarded = { origin: ORIGIN, 'x-forwarded-for': '198.51.100.1, 203.0.113.7' };
    // A caller that found the Function URL: no proof, or a wrong one. Refused, and the login is not touched.
    for (const proof of [undefined, 'forged']) {
      const direct = await handlers.partnerToken(urlEvent('POST', '/api/partners/starfall/token', { cookies: [cookie], headers: { ...forwarded, [PROXY_SECRET_HEADER]: proof } }), {});
      expect(direct.statusCode).toBe(403);
      expect(JSON.parse(direct.body)).toMatchObject({ error: { code: 'FORBIDDEN' } });
      expect((await handlers.jwks(urlEvent('GET', '/api/auth/jwks', { headers: { [PROXY_SECRET_HEADER]: proof } }), {})).statusCode).toBe(403);
    }
    expect(await addressOf()).toEqual(before);
    // Through the Router (its proof; CloudFront, the direct peer, appended the viewer): the viewer's
    // address is the one the Router's hop names, never the entry the viewer wrote itself.
    const viaRouter = await handlers.worldUpdates(urlEvent('GET', `/api/worlds/${worldId}/updates`, { cookies: [cookie], headers: forwarded, sourceIp: '10.9.8.7' }), {});
    expect(viaRouter.statusCode, viaRouter.body).toBe(200);
    expect(await addressOf()).toEqual(['203.0.113.7']);
  });
});
