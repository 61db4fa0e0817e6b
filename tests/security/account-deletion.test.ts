import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 43, point 7: deleting an account needed only the login cookie (while an address change needs
 * the password), so whoever held a stolen cookie could erase the account. Deletion now asks for the
 * password; an account without one (a provider's) must ask from a login made in the last 15 minutes.
 * Through the real server: the account stays until the proof is given.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

describe('deleting an account needs the password, or a fresh sign-in without one', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ LOGIN_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const exists = async (id: string) => ((await server.ctx.db.primary.query('select 1 from accounts where id = $1', [id])).rowCount ?? 0) > 0;
  const remove = (b: Browser, json?: unknown) => b.fetch('/api/account', json === undefined ? { method: 'DELETE' } : { method: 'DELETE', json });
  async function refused(res: Response, status: number, code: string): Promise<void> {
    expect(res.status).toBe(status);
    expect(((await res.json()) as ErrorBody).error.code).toBe(code);
  }

  it('the cookie alone, an empty or a wrong password delete nothing; the right password deletes the account and ends the login', async () => {
    const browser = new Browser(server.url);
    const { account } = await signUp(server, browser, { password: 'keep me safe' });
    // A stolen cookie: another client with only the cookie.
    const thief = new Browser(server.url);
    thief.cookies = new Map(browser.cookies);
    await refused(await remove(thief), 400, 'VALIDATION_FAILED');
    await refused(await remove(thief, {}), 400, 'VALIDATION_FAILED');
    await refused(await remove(thief, { password: '' }), 400, 'VALIDATION_FAILED');
    await refused(await remove(thief, { password: 'a guess' }), 403, 'WRONG_PASSWORD');
    expect(await exists(account.id)).toBe(true);
    expect((await browser.fetch('/api/account')).status).toBe(200);

    const done = await remove(browser, { password: 'keep me safe' });
    expect(done.status).toBe(200);
    expect(await exists(account.id)).toBe(false);
    expect(browser.cookies.size).toBe(0);
    expect((await thief.fetch('/api/account')).status).toBe(401);
  });

  it('password guesses count like logins: beyond the limit even the right one waits', async () => {
    const browser = new Browser(server.url);
    const { account } = await signUp(server, browser, { password: 'guarded password' });
    for (let i = 0; i < 3; i++) await refused(await remove(browser, { password: `guess ${i}` }), 403, 'WRONG_PASSWORD');
    await refused(await remove(browser, { password: 'guarded password' }), 429, 'RATE_LIMITED');
    expect(await exists(account.id)).toBe(true);
  });

  it('an account without a password is deleted only from a login made in the last 15 minutes', async () => {
    const browser = new Browser(server.url);
    const { account } = await signUp(server, browser);
    const db = server.ctx.db.primary;
    await db.query('delete from password_credentials where account_id = $1', [account.id]);
    await db.query(`update login_sessions set created_at = now() - interval '16 minutes' where account_id = $1`, [account.id]);
    await refused(await remove(browser), 403, 'SIGN_IN_AGAIN');
    await refused(await remove(browser, { password: 'anything' }), 403, 'SIGN_IN_AGAIN');
    expect(await exists(account.id)).toBe(true);
    // Signed in again (the login is new): deleted.
    await db.query(`update login_sessions set created_at = now() where account_id = $1`, [account.id]);
    expect((await remove(browser)).status).toBe(200);
    expect(await exists(account.id)).toBe(false);
  });
});
