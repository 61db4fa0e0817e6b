import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp as signUpAccount } from '../../../../tests/support/sign-up.ts';

const uniqueEmail = () => `player-${randomBytes(5).toString('hex')}@example.com`;

describe('accounts and login sessions (real PostgreSQL and Redis)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ LOGIN_RATE_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => server?.stop());

  it('sign-up → login → the cookie authorizes → logout ends it', async () => {
    const email = uniqueEmail();
    const a = new Browser(server.url);
    const signUp = await signUpAccount(server, a, { email, password: 'correct horse battery', displayName: 'Ada' });
    expect(signUp.status).toBe(201);
    const created = signUp;
    expect(created.account.id).toMatch(/^acc_[A-Za-z0-9_-]{22}$/);
    expect(Number.isNaN(Number(created.account.id))).toBe(true);
    expect(created.account.displayName).toBe('Ada');
    const setCookie = signUp.setCookie.join('\n');
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i); // served over http here

    const b = new Browser(server.url);
    expect(((await (await b.fetch('/api/auth/session')).json()) as { account: unknown }).account).toBeNull();
    const login = await b.fetch('/api/auth/login', { method: 'POST', json: { email: email.toUpperCase(), password: 'correct horse battery' } });
    expect(login.status).toBe(200);
    const session = (await (await b.fetch('/api/auth/session')).json()) as { account: { id: string }; session: { id: string } };
    expect(session.account.id).toBe(created.account.id);

    const cookieBefore = b.cookieHeader;
    expect((await b.fetch('/api/auth/logout', { method: 'POST' })).status).toBe(200);
    // The old cookie no longer authorizes, even if a client kept it.
    const replay = await fetch(`${server.url}/api/auth/session`, { headers: { cookie: cookieBefore } });
    expect(((await replay.json()) as { account: unknown }).account).toBeNull();
  });

  it('the session id stays the same across a renewal (sliding expiry)', async () => {
    const a = new Browser(server.url);
    await signUpAccount(server, a, { email: uniqueEmail(), password: 'long enough pw' });
    const first = (await (await a.fetch('/api/auth/session')).json()) as { session: { id: string; expiresAt: string } };
    // Age the session by two days, as if the player came back later.
    await server.ctx.db.primary.query(
      `update login_sessions set last_seen_at = now() - interval '2 days', expires_at = now() + interval '28 days' where id = $1`,
      [first.session.id],
    );
    const renewedRes = await a.fetch('/api/auth/session');
    const renewed = (await renewedRes.json()) as { session: { id: string; expiresAt: string } };
    expect(renewed.session.id).toBe(first.session.id);
    expect(new Date(renewed.session.expiresAt).getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3600 * 1000);
    expect(renewedRes.headers.get('set-cookie')).toMatch(/yumina_session=/);
  });

  it('a wrong password is 401; a burst is 429 with Retry-After; bad bodies are 400 and change nothing', async () => {
    const email = uniqueEmail();
    await signUpAccount(server, new Browser(server.url), { email, password: 'the right one' });
    const c = new Browser(server.url);
    const wrong = await c.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'the wrong one' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: { code: 'INVALID_CREDENTIALS', message: expect.any(String) } });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 6; i++) {
      const r = await c.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'the wrong one' } });
      statuses.push(r.status);
      if (r.status === 429) retryAfter = r.headers.get('retry-after');
    }
    // Limited per address and per e-mail (5 each): this address already logged in once above.
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Even the right password is refused during the lock-out.
    expect((await c.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'the right one' } })).status).toBe(429);

    const before = await server.ctx.db.primary.query('select count(*)::int as n from accounts');
    for (const json of [{ email: 'not-an-email', password: 'long enough' }, { email: uniqueEmail(), password: 'short' }, { email: uniqueEmail(), password: 'long enough', admin: true }]) {
      const r = await c.fetch('/api/auth/signup', { method: 'POST', json });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    }
    const after = await server.ctx.db.primary.query('select count(*)::int as n from accounts');
    expect(after.rows[0]).toEqual(before.rows[0]);
    // A taken address: the same answer as a free one (issue 35, point 5), no login, no second account.
    const dup = await c.fetch('/api/auth/signup', { method: 'POST', json: { email, password: 'another one!' } });
    expect(dup.status).toBe(202);
    expect(dup.headers.getSetCookie()).toEqual([]);
    expect((await server.ctx.db.primary.query('select 1 from accounts where lower(email) = $1', [email])).rowCount).toBe(1);
  });

  it('a cross-site POST with the session cookie is refused with 403', async () => {
    const a = new Browser(server.url);
    await signUpAccount(server, a, { email: uniqueEmail(), password: 'long enough pw' });
    const viaOrigin = await a.fetch('/api/auth/logout', { method: 'POST', headers: { origin: 'https://evil.example' } });
    expect(viaOrigin.status).toBe(403);
    expect(((await viaOrigin.json()) as { error: { code: string } }).error.code).toBe('CROSS_SITE_REQUEST');
    const viaFetchMeta = await a.fetch('/api/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' } });
    expect(viaFetchMeta.status).toBe(403);
    const opaque = await a.fetch('/api/auth/logout', { method: 'POST', headers: { origin: 'null' } });
    expect(opaque.status).toBe(403);
    // Still signed in: nothing changed.
    expect(((await (await a.fetch('/api/auth/session')).json()) as { account: unknown }).account).not.toBeNull();
    const sameOrigin = await a.fetch('/api/auth/logout', { method: 'POST', headers: { origin: server.url, 'sec-fetch-site': 'same-origin' } });
    expect(sameOrigin.status).toBe(200);
  });

  it('account deletion cascades and the id is never issued again', async () => {
    const a = new Browser(server.url);
    const res = await signUpAccount(server, a, { email: uniqueEmail(), password: 'long enough pw' });
    const { account } = res;
    expect((await a.fetch('/api/account', { method: 'DELETE', json: { password: 'long enough pw' } })).status).toBe(200);
    const db = server.ctx.db.primary;
    expect((await db.query('select 1 from login_sessions where account_id = $1', [account.id])).rowCount).toBe(0);
    expect((await db.query('select 1 from password_credentials where account_id = $1', [account.id])).rowCount).toBe(0);
    expect((await db.query('select 1 from retired_account_ids where id = $1', [account.id])).rowCount).toBe(1);
  });
});
