import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerSettings } from '../support/container-settings.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Item 5 of issue 18: the client's address is the one the operator trusts (TRUST_PROXY). Attacks
 * over HTTP against a real server on real PostgreSQL and Redis: rotating X-Forwarded-For, e-mail
 * case variants, and a forged X-Forwarded-Host/-Proto to pass the cross-site guard.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

const expectErrorShape = (body: unknown) => {
  expect(body).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
  expect(JSON.stringify(body)).not.toMatch(/ECONN|redis|postgres|sqlstate|\bat .*\.ts:\d+/i);
};

async function login(server: TestServer, email: string, forwardedFor: string, password = 'wrong password', headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor, ...headers },
    body: JSON.stringify({ email, password }),
  });
}

/** Logins of 15 different e-mails, each with its own forwarded chain: the statuses. */
async function loginRound(server: TestServer, chain: (i: number) => string, headers: (i: number) => Record<string, string> = () => ({})): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 15; i++) {
    const res = await login(server, `round-${Math.random()}@example.com`, chain(i), 'wrong password', headers(i));
    statuses.push(res.status);
    if (res.status === 429) expectErrorShape(await res.json());
    else await res.arrayBuffer();
  }
  return statuses;
}
const limitedFromTheEleventh = (statuses: number[]) => {
  expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
  expect(statuses.slice(10)).toEqual([429, 429, 429, 429, 429]);
};

describe('client address (TRUST_PROXY unset: local mode trusts no hop)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({});
    const b = new Browser(server.url);
    expect((await signUp(server, b, { email: 'victim@example.com', password: 'the right password' })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('15 wrong passwords with 15 different X-Forwarded-For values → 429 with Retry-After from the 11th at the latest', async () => {
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 15; i++) {
      const res = await login(server, 'victim@example.com', `203.0.113.${i + 1}`);
      statuses.push(res.status);
      if (res.status === 429 && !limited) {
        limited = res;
        expectErrorShape(await res.json());
      } else await res.arrayBuffer();
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    // The right password from the same (real) address is refused as well while the limit holds.
    const right = await login(server, 'victim@example.com', '198.51.100.77', 'the right password');
    expect(right.status).toBe(429);
    expect(right.headers.getSetCookie()).toEqual([]);
  });

  it('a cross-site POST with a forged X-Forwarded-Host/-Proto from an untrusted hop is refused and changes nothing', async () => {
    const b = new Browser(server.url);
    await signUp(server, b, { email: 'guarded@example.com', password: 'long enough pw' });
    const res = await b.fetch('/api/account', {
      method: 'DELETE',
      headers: { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as ErrorBody;
    expectErrorShape(body);
    expect(body.error.code).toBe('CROSS_SITE_REQUEST');
    const still = await server.ctx.db.primary.query<{ n: number }>(`select count(*)::int as n from accounts where email = 'guarded@example.com'`);
    expect(still.rows[0]!.n).toBe(1);
  });
});

describe('client address (TRUST_PROXY=loopback: X-Forwarded-For names the client)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      TRUST_PROXY: '127.0.0.1/8,::1',
      SIGNUP_RATE_LIMIT_PER_HOUR: '3',
      AI_CHECK_RATE_LIMIT_PER_MINUTE: '4',
    });
    const b = new Browser(server.url);
    expect((await signUp(server, b, { email: 'Target@Example.com', password: 'the right password', headers: { 'x-forwarded-for': '192.0.2.200' } })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('15 wrong passwords from 15 addresses with e-mail case/width variants → 429 from the 11th at the latest (keyed on the normalized e-mail)', async () => {
    const variants = ['target@example.com', 'TARGET@EXAMPLE.COM', ' Target@Example.Com ', 'tArGeT@eXaMpLe.CoM', 'ｔａｒｇｅｔ@example.com'];
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) {
      const res = await login(server, variants[i % variants.length]!, `203.0.113.${i + 1}`);
      statuses.push(res.status);
      const body = await res.json();
      if (res.status === 429) {
        expectErrorShape(body);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
  });

  it('signup is limited per derived address: the 4th from one address is refused and writes no account; another address still signs up', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${server.url}/api/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.9' },
        body: JSON.stringify({ email: `mass${i}@example.com`, password: 'long enough pw' }),
      });
      statuses.push(res.status);
      if (res.status === 429) expectErrorShape(await res.json());
    }
    // Verify-first sign-up: each allowed one waits for its link (issue 35, point 5); the fourth is refused and mails nothing.
    expect(statuses).toEqual([202, 202, 202, 429]);
    const n = await server.ctx.db.primary.query<{ n: number }>(`select count(*)::int as n from pending_signups where email like 'mass%'`);
    expect(n.rows[0]!.n).toBe(3);
    const other = await fetch(`${server.url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.10' },
      body: JSON.stringify({ email: 'other-address@example.com', password: 'long enough pw' }),
    });
    expect(other.status).toBe(202);
  });

  it('even through a trusted hop, X-Forwarded-Host/-Proto never make a cross-site request look same-site', async () => {
    const b = new Browser(server.url);
    await signUp(server, b, { email: 'trusted-hop@example.com', password: 'long enough pw', headers: { 'x-forwarded-for': '192.0.2.77' } });
    const res = await b.fetch('/api/account', {
      method: 'DELETE',
      headers: { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', 'x-forwarded-for': '192.0.2.77' },
    });
    expect(res.status).toBe(403);
    expectErrorShape(await res.json());
    const still = await server.ctx.db.primary.query<{ n: number }>(`select count(*)::int as n from accounts where email = 'trusted-hop@example.com'`);
    expect(still.rows[0]!.n).toBe(1);
  });

  it('AI connection tests and model listings are limited per account, whatever the address', async () => {
    const b = new Browser(server.url);
    await signUp(server, b, { email: 'checker@example.com', password: 'long enough pw', headers: { 'x-forwarded-for': '192.0.2.50' } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const path = i % 2 ? '/api/models' : '/api/settings/ai/test';
      const res = await b.fetch(path, { method: i % 2 ? 'GET' : 'POST', headers: { 'x-forwarded-for': `192.0.2.${60 + i}` } });
      statuses.push(res.status);
      if (res.status === 429) expectErrorShape(await res.json());
      else await res.arrayBuffer();
    }
    expect(statuses.slice(0, 4).every((s) => s !== 429)).toBe(true);
    expect(statuses.slice(4)).toEqual([429, 429]);
  });
});

describe('client address (TRUST_PROXY=1: the one proxy in front appends the client)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY: '1' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('entries a client writes before the proxy\'s own cannot rotate the address: 429 from the 11th at the latest', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) {
      // What the proxy forwards: the client's own X-Forwarded-For, then the address it saw.
      const res = await login(server, `user${i}@example.com`, `10.9.8.${i}, 203.0.113.${i}, 198.51.100.7`);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    // Another client behind the same proxy is unaffected.
    const other = await login(server, 'someone@example.com', '198.51.100.8');
    expect(other.status).toBe(401);
  });
});

describe('guest preview allowance (TRUST_PROXY unset)', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let worldId: string;
  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: provider.url, OFFICIAL_AI_API_KEY: 'official-key', GUEST_PREVIEW_TURNS_PER_HOUR: '2' });
    const author = new Browser(server.url);
    await signUp(server, author, { email: 'preview-author@example.com', password: 'long enough pw' });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/willow-street.json', import.meta.url), 'utf8')) as unknown;
    worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
    expect((await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  it('rotating X-Forwarded-For does not renew the allowance: the 3rd turn is a 429 and the provider is not called', async () => {
    provider.reset();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${server.url}/api/worlds/${worldId}/preview/turn`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${i + 1}` },
        body: JSON.stringify({ message: 'Hello', history: [], state: null }),
      });
      statuses.push(res.status);
      const body = await res.json();
      if (res.status === 429) {
        expectErrorShape(body);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect(provider.completions.length).toBe(2);
  });
});

/**
 * Item 5 of issue 28: container mode trusted a direct client's X-Forwarded-For (the default
 * TRUST_PROXY=1), and in AWS a client reaching the load balancer without the CDN did the same.
 * The trust setting names exactly the hops in front (TRUST_PROXY), and TRUST_PROXY_SECRET proves a
 * request came through them: without the proof it is treated as coming from its direct peer.
 */
describe('client address in container mode (TRUST_PROXY unset: a direct client is its own address)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ...containerSettings(), SAMPLE_WORLDS: '0' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('15 wrong passwords with 15 different X-Forwarded-For values straight to the container → 429 from the 11th', async () => {
    expect(server.ctx.config.mode).toBe('container');
    limitedFromTheEleventh(await loginRound(server, (i) => `203.0.113.${i + 1}`));
  });
});

describe('client address behind the CDN and the load balancer (TRUST_PROXY=2, TRUST_PROXY_SECRET)', () => {
  const secret = 'c'.repeat(24) + Math.random().toString(36).slice(2, 12).padEnd(10, '0');
  const proof = { 'x-yumina-proxy-secret': secret };
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ...containerSettings(), TRUST_PROXY: '2', TRUST_PROXY_SECRET: secret });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('with the proof: the viewer CloudFront saw is the client, whatever it wrote before; another viewer is unaffected', async () => {
    // What reaches the container: the client's own entries, the viewer (added by CloudFront), the
    // edge (added by the load balancer); the edge differs from request to request.
    limitedFromTheEleventh(await loginRound(server, (i) => `10.9.8.${i}, 198.51.100.${i}, 192.0.2.20, 130.176.0.${i}`, () => proof));
    const other = await login(server, 'someone@example.com', '192.0.2.21, 130.176.0.99', 'wrong password', proof);
    expect(other.status).toBe(401);
  });

  it('without the proof, with a wrong one of the same length or the right one in another case (a client that bypasses the CDN): X-Forwarded-For is ignored, the direct peer is the client', async () => {
    const wrong = secret.slice(0, -1) + (secret.endsWith('x') ? 'y' : 'x');
    const attempts: Record<string, string>[] = [{}, { 'x-yumina-proxy-secret': wrong }, { 'x-yumina-proxy-secret': secret.toUpperCase() }];
    limitedFromTheEleventh(await loginRound(server, (i) => `192.0.2.${100 + i}, 130.176.1.${i}`, (i) => attempts[i % 3]!));
  });
});
