import { hostname, networkInterfaces } from 'node:os';
import { isPrivateAddress } from '@yumina/ai';
import { readFileSync } from 'node:fs';
import { grantCredits } from '@yumina/billing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Collector, isCleanErrorBody, readEvents, startCollector } from '../support/collector.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Outbound requests to AI providers (issue 18, item 1): server-side request forgery through a
 * private connection's base URL, the official provider, model listing and turns. Every attack
 * runs against a real server (PostgreSQL and Redis) with AI_PRIVATE_NETWORK_ACCESS=deny; the
 * loopback collectors count what reaches them and must see 0 requests.
 */

const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

async function signup(server: TestServer, name: string): Promise<Browser> {
  const b = new Browser(server.url);
  const res = await signUp(server, b, { email: `${name}-${Date.now()}-${Math.random()}@example.com`, password: 'long enough pw' });
  expect(res.status).toBeLessThan(300);
  return b;
}

describe('outbound AI requests: refused private addresses (AI_PRIVATE_NETWORK_ACCESS=deny)', () => {
  let server: TestServer;
  let collector: Collector;
  let official: Collector;
  let player: Browser;

  beforeAll(async () => {
    collector = await startCollector();
    official = await startCollector();
    server = await startTestServer({
      AI_PRIVATE_NETWORK_ACCESS: 'deny',
      OFFICIAL_AI_BASE_URL: `${official.origin}/v1`,
      OFFICIAL_AI_API_KEY: 'sk-official-secret',
      OFFICIAL_AI_MODEL: 'official-model',
    });
    player = await signup(server, 'ssrf');
  });
  afterAll(async () => {
    await server?.stop();
    await collector?.close();
    await official?.close();
  });

  it('every SSRF base URL is refused at save with a clean 400, and nothing is stored or sent', async () => {
    const port = collector.port;
    const attacks = [
      `http://127.0.0.1:${port}/metrics#`,
      `http://[::1]:${port}/`,
      `http://0x7f000001:${port}/`,
      `http://2130706433:${port}/`,
      `http://017700000001:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://localhost:${port}/v1`,
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:169.254.169.254]/latest/meta-data',
      'http://10.0.0.1/',
      'http://172.16.5.4/v1',
      'http://192.168.1.1/v1',
      'http://100.64.0.1/v1',
      'http://[fe80::1]/v1',
      'http://[fd00::1]/v1',
      'file:///etc/passwd',
      'gopher://127.0.0.1:6379/_PING',
      'http://user:pw@host/',
      'https://api.example.com/v1?key=1',
      'https://api.example.com/v1#x',
    ];
    // every provider kind (issue 47): the native protocols go through the same guard
    for (const kind of [undefined, 'anthropic', 'gemini']) {
      for (const baseUrl of attacks) {
        const res = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl, defaultModel: 'm', apiKey: 'sk-attacker', ...(kind ? { kind } : {}) } });
        const body = await res.json();
        expect({ baseUrl, kind, status: res.status }).toEqual({ baseUrl, kind, status: 400 });
        expect(isCleanErrorBody(body)).toBe(true);
        // The unsaved form's model list and test (issue 44, point 1) apply the same guard.
        const probe = await player.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl, apiKey: 'sk-attacker', ...(kind ? { kind } : {}) } });
        expect({ baseUrl, kind, probe: probe.status }).toEqual({ baseUrl, kind, probe: 400 });
        expect(isCleanErrorBody(await probe.json())).toBe(true);
      }
    }
    expect(await (await player.fetch('/api/settings/ai')).json()).toEqual({ configured: false });
    expect(collector.requests).toHaveLength(0);
  });

  it('the unsaved form’s probe of a rebinding name (public-looking, private at call) sends nothing and never echoes the key', async () => {
    const baseUrl = `http://${hostname()}:${collector.port}/v1`;
    const res = await player.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl, apiKey: 'sk-probe-secret-1234' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('sk-probe-secret');
    expect(JSON.parse(text)).toMatchObject({ ok: false, message: expect.stringMatching(/private network/) });
    expect(collector.requests).toHaveLength(0);
  });

  it('a native connection (Anthropic, Gemini) on a rebinding name is refused at call when saved or probed: nothing sent, nothing saved, the key never echoed', async () => {
    const baseUrl = `http://${hostname()}:${collector.port}/v1`;
    for (const kind of ['anthropic', 'gemini']) {
      const res = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl, apiKey: 'sk-native-secret-5678', kind } });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).not.toContain('sk-native-secret');
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/private network/) } });
      const probe = await player.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl, apiKey: 'sk-native-secret-5678', kind } });
      expect(await probe.json()).toMatchObject({ ok: false, kind, message: expect.stringMatching(/private network/) });
    }
    expect(await (await player.fetch('/api/settings/ai')).json()).toEqual({ configured: false });
    expect(collector.requests).toHaveLength(0);
  });

  it('a base URL stored earlier (or by a rebinding name) is refused at call: connection test, model list and a turn send nothing', async () => {
    const me = (await (await player.fetch('/api/auth/session')).json()) as { account: { id: string } };
    // A row as an older version (or an `allow` deployment) could have stored it.
    for (const baseUrl of [`${collector.origin}/v1`, `http://${hostname()}:${collector.port}/v1`]) {
      await server.ctx.db.primary.query('delete from ai_connections where account_id = $1', [me.account.id]);
      await server.ctx.db.primary.query(`insert into ai_connections (account_id, base_url, default_model, private_enabled) values ($1, $2, 'm', true)`, [
        me.account.id,
        baseUrl,
      ]);
      const test = (await (await player.fetch('/api/settings/ai/test', { method: 'POST' })).json()) as { ok: boolean; message: string };
      expect(test.ok).toBe(false);
      expect(test.message).toMatch(/private network/);
      const models = (await (await player.fetch('/api/models')).json()) as { errors: string[] };
      expect(models.errors.join(' ')).toMatch(/private network/);

      await player.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'private' } });
      const w = (await (await player.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string };
      const s = (await (await player.fetch(`/api/worlds/${w.id}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
      const events = await readEvents(await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'hello' } }));
      const error = events.find((e) => e.event === 'error');
      expect(error?.data.code).toBe('AI_URL_REFUSED');
      expect(isCleanErrorBody({ error: error?.data })).toBe(true);
    }
    expect(collector.requests).toHaveLength(0);
  });

  it('IPv6 transition forms of private IPv4 and the special-use ranges are refused at save and at call (issue 28, item 6)', async () => {
    const port = collector.port;
    const b = await signup(server, 'special-use');
    const literals = [
      '[::ffff:0:7f00:1]', // IPv4-translated 127.0.0.1
      '[::ffff:0:127.0.0.1]',
      '[64:ff9b::7f00:1]', // NAT64 127.0.0.1
      '[64:ff9b::a9fe:a9fe]', // NAT64 169.254.169.254
      '[64:ff9b:1::7f00:1]', // local-use NAT64
      '[2002:7f00:1::]', // 6to4 127.0.0.1
      '[2002:a9fe:a9fe::1]', // 6to4 169.254.169.254
      '[2001:0:4136:e378:8000:63bf:80ff:fffe]', // Teredo, client 127.0.0.1
      '[2001:db8::1]',
      '[100::1]',
      '[ff02::1]',
      '192.0.0.8',
      '192.0.2.1',
      '198.18.0.1',
      '198.51.100.1',
      '203.0.113.1',
      '224.0.0.1',
      '240.0.0.1',
      '255.255.255.255',
    ];
    for (const host of literals) {
      const baseUrl = `http://${host}:${port}/v1`;
      const res = await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl, defaultModel: 'm', apiKey: 'sk-attacker' } });
      const body = (await res.json()) as { error?: { message: string } };
      expect({ baseUrl, status: res.status }).toEqual({ baseUrl, status: 400 });
      expect(isCleanErrorBody(body)).toBe(true);
      expect(body.error?.message).toMatch(/private network/);
    }
    expect(await (await b.fetch('/api/settings/ai')).json()).toEqual({ configured: false });

    // Stored earlier (an older version, or an `allow` deployment): refused at call as well. Where
    // this machine has an interface address in a documentation or benchmarking range, a collector
    // listens there: today's guard let a request through to it.
    const special = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal && /^(?:192\.0\.2|198\.1[89]|198\.51\.100|203\.0\.113)\./.test(i.address))?.address;
    const local = special ? await startCollector(undefined, special) : null;
    try {
      const me = (await (await b.fetch('/api/auth/session')).json()) as { account: { id: string } };
      const stored = [`http://[::ffff:0:7f00:1]:${port}/v1`, `http://[64:ff9b::7f00:1]:${port}/v1`, `http://[2002:7f00:1::]:${port}/v1`];
      if (local) stored.push(`${local.origin}/v1`);
      for (const baseUrl of stored) {
        await server.ctx.db.primary.query('delete from ai_connections where account_id = $1', [me.account.id]);
        await server.ctx.db.primary.query(`insert into ai_connections (account_id, base_url, default_model, private_enabled) values ($1, $2, 'm', true)`, [
          me.account.id,
          baseUrl,
        ]);
        const test = (await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()) as { ok: boolean; message: string };
        expect({ baseUrl, ok: test.ok, message: test.message }).toEqual({ baseUrl, ok: false, message: expect.stringMatching(/private network/) });
        const models = (await (await b.fetch('/api/models')).json()) as { errors: string[] };
        expect(models.errors.join(' ')).toMatch(/private network/);
      }
      expect(local?.total() ?? 0).toBe(0);
      expect(collector.requests).toHaveLength(0);
    } finally {
      await local?.close();
    }
  });

  it('a public-looking host whose answer redirects to loopback: the redirect is not followed, the collector sees nothing', async () => {
    // This machine's own non-private interface address stands in for a public host (only loopback
    // and private ranges are refused); without one, the same host is loopback on an `allow` server.
    const address = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal && !isPrivateAddress(i.address))?.address;
    const redirector = await startCollector((_req, res) => {
      res.writeHead(302, { location: `${collector.origin}/v1/models` });
      res.end('moved');
    }, address ?? '127.0.0.1');
    const other = address ? null : await startTestServer({ AI_PRIVATE_NETWORK_ACCESS: 'allow' });
    try {
      const b = await signup(other ?? server, 'public-redirect');
      const baseUrl = `http://${address ?? '127.0.0.1'}:${redirector.port}/v1`;
      expect((await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl, defaultModel: 'm', apiKey: 'sk-redirect' } })).status).toBe(200);
      const test = (await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()) as { ok: boolean; status: number };
      expect(test).toMatchObject({ ok: false, status: 302 });
      expect(redirector.requests).toHaveLength(1); // the public host was asked …
      expect(collector.requests).toHaveLength(0); // … and its redirect to loopback was not followed
    } finally {
      await redirector.close();
      await other?.stop();
    }
  });

  it('the official provider on a private address is refused at call too, and nothing is charged', async () => {
    const b = await signup(server, 'official');
    const me = (await (await b.fetch('/api/auth/session')).json()) as { account: { id: string } };
    await grantCredits(server.ctx.db.primary, me.account.id, 1_000, me.account.id, 'test');
    await b.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'official' } });
    const before = ((await (await b.fetch('/api/billing')).json()) as { credits: number }).credits;
    const w = (await (await b.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string };
    const s = (await (await b.fetch(`/api/worlds/${w.id}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
    const events = await readEvents(await b.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'hello' } }));
    expect(events.find((e) => e.event === 'error')?.data.code).toBe('AI_URL_REFUSED');
    const billing = (await (await b.fetch('/api/billing')).json()) as { credits: number };
    expect(billing.credits).toBe(before);
    const usage = await server.ctx.db.primary.query('select 1 from usage_ledger where account_id = $1', [me.account.id]);
    expect(usage.rowCount).toBe(0);
    expect(official.requests).toHaveLength(0);
  });
});

describe('outbound AI requests with AI_PRIVATE_NETWORK_ACCESS=allow (a player’s own local server)', () => {
  let server: TestServer;
  let provider: Collector;
  let target: Collector;
  let redirector: Collector;

  beforeAll(async () => {
    provider = await startCollector();
    target = await startCollector();
    // Stands in for a public host whose answer redirects to an internal address.
    redirector = await startCollector((_req, res) => {
      res.writeHead(302, { location: `${target.origin}/v1/models` });
      res.end('moved');
    });
    server = await startTestServer({ AI_PRIVATE_NETWORK_ACCESS: 'allow' });
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([provider?.close(), target?.close(), redirector?.close()]);
  });

  it('a loopback provider still works', async () => {
    const b = await signup(server, 'local');
    const saved = await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${provider.origin}/v1`, defaultModel: 'm', apiKey: 'sk-local' } });
    expect(saved.status).toBe(200);
    expect(await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()).toMatchObject({ ok: true, models: 1 });
    expect(provider.requests.map((r) => r.url)).toEqual(['/v1/models']);
  });

  it('a redirect is never followed: a 3xx is a provider error and its target sees nothing', async () => {
    const b = await signup(server, 'redirect');
    await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${redirector.origin}/v1`, defaultModel: 'm', apiKey: 'sk-redirect' } });
    const test = (await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()) as { ok: boolean; status: number; message: string };
    expect(test).toMatchObject({ ok: false, status: 302 });
    expect(test.message).not.toContain('moved'); // never the raw body
    expect(redirector.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  it('an error answer shows only the provider’s own error.message, never a raw body', async () => {
    const html = await startCollector((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end(`<html><body>internal admin panel ${'x'.repeat(10_000)}</body></html>`);
    });
    const shaped = await startCollector((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error' }, debug: 'secret-internal-detail' }));
    });
    try {
      const b = await signup(server, 'errors');
      await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${html.origin}/v1`, defaultModel: 'm', apiKey: 'sk-1' } });
      const first = (await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()) as { message: string };
      expect(first.message).not.toMatch(/admin panel|<html/);
      await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${shaped.origin}/v1`, defaultModel: 'm', apiKey: 'sk-2' } });
      const second = (await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()) as { message: string };
      expect(second.message).toContain('Incorrect API key provided.');
      expect(second.message).not.toContain('secret-internal-detail');
    } finally {
      await html.close();
      await shaped.close();
    }
  });
});
