import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkIn, outboxOf, tokenOf, waitForMail } from '../support/outbox.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp as signUpAccount } from '../support/sign-up.ts';

/**
 * Issue 43, point 4: a reset link mailed to an old address still worked after the account moved to
 * a new one (whoever kept the old mailbox, or read the mail there, could take the account). A reset
 * link is tied to the address it was sent to, and an address change or a password change ends every
 * outstanding reset link. Through the real server, its mail queue and its outbox.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

describe('reset links end when the address or the password changes', () => {
  let server: TestServer;
  let outbox: string;
  let client = 0;
  const fromClient = () => ({ 'x-forwarded-for': `198.51.100.${++client}` });

  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY: 'loopback' });
    outbox = outboxOf(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const post = (b: Browser, path: string, json: unknown) => b.fetch(path, { method: 'POST', json, headers: fromClient() });
  const anonymous = () => new Browser(server.url);
  async function signUp(email: string, password: string): Promise<Browser> {
    const browser = new Browser(server.url);
    expect((await signUpAccount(server, browser, { email, password, headers: fromClient() })).status).toBe(201);
    return browser;
  }
  async function resetLink(email: string, count: number): Promise<string> {
    expect((await post(anonymous(), '/api/auth/password/forgot', { email })).status).toBe(202);
    return tokenOf(linkIn(await waitForMail(outbox, email, { subject: /Reset/, count }), '/reset-password'));
  }
  async function signIn(email: string, password: string): Promise<number> {
    return (await post(anonymous(), '/api/auth/login', { email, password })).status;
  }
  /** The link is refused by both the page's check and the reset, and the password stays. */
  async function expectRefused(token: string): Promise<void> {
    const checked = await post(anonymous(), '/api/auth/password/reset-check', { token });
    expect(checked.status).toBe(410);
    const reset = await post(anonymous(), '/api/auth/password/reset', { token, password: 'attacker password' });
    expect(reset.status).toBe(410);
    expect(((await reset.json()) as ErrorBody).error.code).toBe('LINK_USED');
    expect(reset.headers.getSetCookie()).toEqual([]);
  }

  it('a reset link sent to the old address is refused once the address has changed; one sent to the new address works', async () => {
    const owner = await signUp('moving-old@example.com', 'owner password');
    const stale = await resetLink('moving-old@example.com', 1);
    expect((await post(anonymous(), '/api/auth/password/reset-check', { token: stale })).status).toBe(200);

    expect((await post(owner, '/api/account/email', { email: 'moving-new@example.com', password: 'owner password' })).status).toBe(202);
    const change = tokenOf(linkIn(await waitForMail(outbox, 'moving-new@example.com', { subject: /Confirm your new e-mail/ }), '/verify-email'));
    expect((await post(anonymous(), '/api/auth/email/verify', { token: change })).status).toBe(200);

    await expectRefused(stale);
    expect(await signIn('moving-new@example.com', 'owner password')).toBe(200);
    expect(await signIn('moving-new@example.com', 'attacker password')).toBe(401);

    const fresh = await resetLink('moving-new@example.com', 1);
    expect((await post(anonymous(), '/api/auth/password/reset', { token: fresh, password: 'owner password 2' })).status).toBe(200);
    expect(await signIn('moving-new@example.com', 'owner password 2')).toBe(200);
  });

  it('a reset link is refused once the password has been changed in Settings', async () => {
    const owner = await signUp('changer@example.com', 'first password');
    const stale = await resetLink('changer@example.com', 1);
    const changed = await post(owner, '/api/account/password', { currentPassword: 'first password', newPassword: 'second password' });
    expect(changed.status).toBe(200);
    await expectRefused(stale);
    expect(await signIn('changer@example.com', 'second password')).toBe(200);
  });

  it('a reset link works only while the account still has the address it was sent to, whatever moved the account', async () => {
    await signUp('tied@example.com', 'tied password');
    const token = await resetLink('tied@example.com', 1);
    // The address moved by another path than the change route (an operator's repair, say): the link still went to the old mailbox.
    await server.ctx.db.primary.query(`update accounts set email = 'tied-elsewhere@example.com' where lower(email) = 'tied@example.com'`);
    await server.ctx.db.primary.query(`update password_credentials set email = 'tied-elsewhere@example.com' where lower(email) = 'tied@example.com'`);
    await expectRefused(token);
    expect(await signIn('tied-elsewhere@example.com', 'tied password')).toBe(200);
  });
});
