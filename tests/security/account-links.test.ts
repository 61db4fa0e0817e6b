import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxOf, linkIn, mailsTo, tokenOf, waitForMail } from '../support/outbox.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp as signUpAccount } from '../support/sign-up.ts';

/**
 * Issue 35: e-mail verification, password reset and change, address changes, through the real
 * server on PostgreSQL and Redis, with its real mail queue writing to its outbox folder. Link
 * reuse, expiry and forgery; no route telling whether an address has an account; rate limits;
 * tokens neither stored nor logged in the clear.
 */

interface ErrorBody {
  error: { code: string; message: string };
}
interface SessionBody {
  account: { id: string; email: string; emailVerified: boolean } | null;
  session: { id: string } | null;
}

describe('account links by mail: verification, reset, change', () => {
  let server: TestServer;
  let outbox: string;
  const logLines: string[] = [];
  /** Each test speaks from a client address of its own (TRUST_PROXY=loopback), so per-client limits stay apart. */
  let client = 0;
  const fromClient = () => ({ 'x-forwarded-for': `198.51.100.${++client}` });

  beforeAll(async () => {
    const logs = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    server = await startTestServer({ LOG_LEVEL: 'info', TRUST_PROXY: 'loopback', ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR: '3' }, { logDestination: logs });
    outbox = outboxOf(server);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const session = async (b: Browser) => (await (await b.fetch('/api/auth/session')).json()) as SessionBody;
  async function signUp(email: string, password = 'first password'): Promise<Browser> {
    const browser = new Browser(server.url);
    const res = await signUpAccount(server, browser, { email, password, displayName: email.split('@')[0], headers: fromClient() });
    expect(res.status).toBe(201);
    return browser;
  }
  /**
   * An account whose address is not verified: one made before sign-up became verify-first (issue 35,
   * point 5) — a password account made now is verified by its sign-up link. Its link comes from a resend.
   */
  async function unverified(email: string): Promise<Browser> {
    const browser = await signUp(email);
    await server.ctx.db.primary.query('update accounts set email_verified = false where lower(email) = $1', [email]);
    expect((await post(browser, '/api/auth/email/resend', {})).status).toBe(202);
    return browser;
  }
  async function signIn(email: string, password: string): Promise<{ status: number; browser: Browser }> {
    const browser = new Browser(server.url);
    const res = await browser.fetch('/api/auth/login', { method: 'POST', json: { email, password }, headers: fromClient() });
    return { status: res.status, browser };
  }
  const post = (b: Browser, path: string, json: unknown, headers: Record<string, string> = fromClient()) => b.fetch(path, { method: 'POST', json, headers });
  const anonymous = () => new Browser(server.url);
  async function partnerClaims(b: Browser): Promise<{ email: string; email_verified: boolean }> {
    const res = await b.fetch('/api/partners/demo/token', { method: 'POST' });
    expect(res.status).toBe(200);
    const { token } = (await res.json()) as { token: string };
    return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
  }
  /** Moves a link's expiry into the past, as the clock would after its lifetime. */
  const expire = (token: string) => server.ctx.db.primary.query(`update account_links set expires_at = now() - interval '1 second' where id = $1`, [token.split('.')[0]]);

  it('a verification link (the resend of an unverified account) verifies the address, once; partners see email_verified change at their next token', async () => {
    const browser = await unverified('verify-me@example.com');
    expect((await session(browser)).account!.emailVerified).toBe(false);
    expect(await partnerClaims(browser)).toMatchObject({ email: 'verify-me@example.com', email_verified: false });

    const mail = await waitForMail(outbox, 'verify-me@example.com', { subject: /Verify your e-mail/ });
    expect(mail.html).toMatch(/^<!doctype html>/);
    const link = linkIn(mail, '/verify-email');
    expect(link.origin).toBe(server.ctx.config.publicOrigin);
    const token = tokenOf(link);
    // The link lasts a day.
    const { rows } = await server.ctx.db.primary.query<{ hours: number }>(`select extract(epoch from expires_at - created_at) / 3600 as hours from account_links where id = $1`, [token.split('.')[0]]);
    expect(Number(rows[0]!.hours)).toBe(24);

    // Followed in another browser, signed in nowhere: it works.
    const used = await post(anonymous(), '/api/auth/email/verify', { token });
    expect(used.status).toBe(200);
    expect(await used.json()).toEqual({ ok: true, purpose: 'verified', email: 'verify-me@example.com' });
    expect((await session(browser)).account!.emailVerified).toBe(true);
    expect(await partnerClaims(browser)).toMatchObject({ email: 'verify-me@example.com', email_verified: true });

    // Single use.
    const again = await post(anonymous(), '/api/auth/email/verify', { token });
    expect(again.status).toBe(410);
    expect(((await again.json()) as ErrorBody).error.code).toBe('LINK_USED');
  });

  it('forged, truncated and expired links are refused with a clear answer and change nothing', async () => {
    const browser = await unverified('forge@example.com');
    const token = tokenOf(linkIn(await waitForMail(outbox, 'forge@example.com', { subject: /Verify your e-mail/ }), '/verify-email'));
    const [id, secret] = token.split('.') as [string, string];
    const forged = `${id}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [forged, `${id}.`, id, 'x'.repeat(66), '', `${'A'.repeat(22)}.${secret}`]) {
      const res = await post(anonymous(), '/api/auth/email/verify', { token: bad });
      expect(res.status, bad).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error.code).toBe('LINK_INVALID');
      expect(body.error.message).toMatch(/send a new link/i);
    }
    expect((await post(anonymous(), '/api/auth/email/verify', { token: 42 })).status).toBe(400);
    await expire(token);
    const expired = await post(anonymous(), '/api/auth/email/verify', { token });
    expect(expired.status).toBe(410);
    const body = (await expired.json()) as ErrorBody;
    expect(body.error.code).toBe('LINK_EXPIRED');
    expect(body.error.message).toMatch(/expired.*new link/i);
    expect((await session(browser)).account!.emailVerified).toBe(false);
  });

  it('a resend replaces the earlier link and is limited per account', async () => {
    const browser = await unverified('resend@example.com'); // its first resend
    const first = tokenOf(linkIn(await waitForMail(outbox, 'resend@example.com', { subject: /Verify your e-mail/ }), '/verify-email'));
    const res = await post(browser, '/api/auth/email/resend', {});
    expect(res.status).toBe(202);
    const second = tokenOf(linkIn(await waitForMail(outbox, 'resend@example.com', { subject: /Verify your e-mail/, count: 2 }), '/verify-email'));
    expect(second).not.toBe(first);
    expect((await post(anonymous(), '/api/auth/email/verify', { token: first })).status).toBe(410);
    // ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR is 3 here, even from changing client addresses (the two above and this one).
    expect((await post(browser, '/api/auth/email/resend', {})).status).toBe(202);
    const limited = await post(browser, '/api/auth/email/resend', {});
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await post(anonymous(), '/api/auth/email/verify', { token: second })).status).toBe(410); // replaced too
    expect((await post(anonymous(), '/api/auth/email/resend', {})).status).toBe(401);
  });

  it('“forgot password” answers the same whether or not the address has an account; only an account gets mail', async () => {
    await signUp('known@example.com');
    const answers = [];
    for (const email of ['known@example.com', 'unknown@example.com']) {
      const res = await post(anonymous(), '/api/auth/password/forgot', { email });
      const headers = Object.fromEntries([...res.headers].filter(([k]) => !['date', 'content-length', 'x-request-id'].includes(k)));
      answers.push({ status: res.status, body: await res.text(), headers });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(202);
    const reset = await waitForMail(outbox, 'known@example.com', { subject: /Reset your Yumina password/ });
    expect(linkIn(reset, '/reset-password')).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the worker's poll, twice over
    expect(await mailsTo(outbox, 'unknown@example.com')).toEqual([]);
    // An address change to a taken address answers like one to a free address.
    const asker = await signUp('asker@example.com', 'asker password');
    const toTaken = await post(asker, '/api/account/email', { email: 'known@example.com', password: 'asker password' });
    const toFree = await post(asker, '/api/account/email', { email: 'free@example.com', password: 'asker password' });
    expect(toTaken.status).toBe(202);
    expect(toFree.status).toBe(202);
    const [a, b] = [(await toTaken.json()) as { message: string }, (await toFree.json()) as { message: string }];
    expect(a.message.replace('known@example.com', 'X')).toBe(b.message.replace('free@example.com', 'X'));
    // The holder hears of it; no link reaches it.
    const notice = await waitForMail(outbox, 'known@example.com', { subject: /tried to use your address/ });
    expect(notice.text).not.toMatch(/#token=/);
  });

  it('“forgot password” is limited per address and per client, alike for known and unknown addresses', async () => {
    await signUp('limited@example.com');
    for (const email of ['limited@example.com', 'nobody-here@example.com']) {
      // One client: the fourth for an address is refused (issue 43, point 8: only its own allowance for it).
      const one = fromClient();
      for (let i = 0; i < 3; i++) expect((await post(anonymous(), '/api/auth/password/forgot', { email }, one)).status).toBe(202);
      const refused = await post(anonymous(), '/api/auth/password/forgot', { email }, one);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as ErrorBody).error.code).toBe('RATE_LIMITED');
      // Changing clients: the address's total, four times as many, then 429 (tests/security/mail-allowance.test.ts: the owner's floor).
      for (let i = 3; i < 12; i++) expect((await post(anonymous(), '/api/auth/password/forgot', { email })).status).toBe(202);
      expect((await post(anonymous(), '/api/auth/password/forgot', { email })).status).toBe(429);
    }
    // One client, many addresses: four times the per-address limit, then 429.
    const one = fromClient();
    for (let i = 0; i < 12; i++) expect((await post(anonymous(), '/api/auth/password/forgot', { email: `spray-${i}@example.com` }, one)).status).toBe(202);
    expect((await post(anonymous(), '/api/auth/password/forgot', { email: 'spray-last@example.com' }, one)).status).toBe(429);
    expect((await post(anonymous(), '/api/auth/password/forgot', { email: 'not an address' })).status).toBe(400);
  });

  it('a reset link works once within 30 minutes, sets the password, ends every other login and signs this browser in', async () => {
    const original = await signUp('reset@example.com', 'old password');
    const other = (await signIn('reset@example.com', 'old password')).browser;
    expect((await session(other)).account).not.toBeNull();
    expect((await post(anonymous(), '/api/auth/password/forgot', { email: 'Reset@Example.com ' })).status).toBe(202);
    const token = tokenOf(linkIn(await waitForMail(outbox, 'reset@example.com', { subject: /Reset/ }), '/reset-password'));
    const { rows } = await server.ctx.db.primary.query<{ minutes: number }>(`select extract(epoch from expires_at - created_at) / 60 as minutes from account_links where id = $1`, [token.split('.')[0]]);
    expect(Number(rows[0]!.minutes)).toBe(30);

    const resetter = anonymous();
    expect((await post(resetter, '/api/auth/password/reset-check', { token })).status).toBe(200);
    const tooShort = await post(resetter, '/api/auth/password/reset', { token, password: 'short' });
    expect(tooShort.status).toBe(400); // sign-up's rules; the link stays usable
    const done = await post(resetter, '/api/auth/password/reset', { token, password: 'brand new password' });
    expect(done.status).toBe(200);
    expect(((await done.json()) as { endedSessions: number }).endedSessions).toBe(2);
    expect((await session(resetter)).account!.email).toBe('reset@example.com');
    // Following the link proved the mailbox.
    expect((await session(resetter)).account!.emailVerified).toBe(true);
    expect((await session(original)).account).toBeNull();
    expect((await session(other)).account).toBeNull();
    expect((await signIn('reset@example.com', 'old password')).status).toBe(401);
    expect((await signIn('reset@example.com', 'brand new password')).status).toBe(200);
    await waitForMail(outbox, 'reset@example.com', { subject: /password was changed/ });

    const reused = await post(anonymous(), '/api/auth/password/reset', { token, password: 'attacker password' });
    expect(reused.status).toBe(410);
    expect(((await reused.json()) as ErrorBody).error.message).toMatch(/Forgot password/);
    expect((await post(anonymous(), '/api/auth/password/reset-check', { token })).status).toBe(410);

    // A second link, expired after its 30 minutes.
    expect((await post(anonymous(), '/api/auth/password/forgot', { email: 'reset@example.com' })).status).toBe(202);
    const late = tokenOf(linkIn(await waitForMail(outbox, 'reset@example.com', { subject: /Reset/, count: 2 }), '/reset-password'));
    await expire(late);
    const expired = await post(anonymous(), '/api/auth/password/reset', { token: late, password: 'too late password' });
    expect(expired.status).toBe(410);
    expect(((await expired.json()) as ErrorBody).error.code).toBe('LINK_EXPIRED');
    expect((await signIn('reset@example.com', 'brand new password')).status).toBe(200);
  });

  it('changing the password needs the current one and ends the other logins, not this one', async () => {
    const here = await signUp('change@example.com', 'current password');
    const elsewhere = (await signIn('change@example.com', 'current password')).browser;
    const wrong = await post(here, '/api/account/password', { currentPassword: 'not it', newPassword: 'next password 1' });
    expect(wrong.status).toBe(403);
    expect(((await wrong.json()) as ErrorBody).error.code).toBe('WRONG_PASSWORD');
    expect((await post(here, '/api/account/password', { currentPassword: 'current password', newPassword: 'short' })).status).toBe(400);
    const ok = await post(here, '/api/account/password', { currentPassword: 'current password', newPassword: 'next password 1' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, endedSessions: 1 });
    expect((await session(here)).account).not.toBeNull();
    expect((await session(elsewhere)).account).toBeNull();
    expect((await signIn('change@example.com', 'next password 1')).status).toBe(200);
    await waitForMail(outbox, 'change@example.com', { subject: /password was changed/ });
    expect((await post(anonymous(), '/api/account/password', { currentPassword: 'x', newPassword: 'next password 2' })).status).toBe(401);
  });

  it('a new address takes effect only through its link, verified; the old address is told', async () => {
    const browser = await signUp('old-address@example.com', 'mover password');
    expect((await post(browser, '/api/account/email', { email: 'new-address@example.com' })).status).toBe(400); // the password is required
    expect((await post(browser, '/api/account/email', { email: 'new-address@example.com', password: 'wrong' })).status).toBe(403);
    const asked = await post(browser, '/api/account/email', { email: 'New-Address@Example.com', password: 'mover password' });
    expect(asked.status).toBe(202);
    const pending = (await (await browser.fetch('/api/account')).json()) as { account: { email: string }; pendingEmail: string };
    expect(pending).toMatchObject({ account: { email: 'old-address@example.com' }, pendingEmail: 'new-address@example.com' });
    const token = tokenOf(linkIn(await waitForMail(outbox, 'new-address@example.com', { subject: /Confirm your new e-mail/ }), '/verify-email'));
    const confirmed = await post(anonymous(), '/api/auth/email/verify', { token });
    expect(await confirmed.json()).toEqual({ ok: true, purpose: 'changed', email: 'new-address@example.com' });
    expect((await session(browser)).account).toMatchObject({ email: 'new-address@example.com', emailVerified: true });
    const told = await waitForMail(outbox, 'old-address@example.com', { subject: /address was changed/ });
    expect(told.text).toContain('new-address@example.com');
    expect((await signIn('new-address@example.com', 'mover password')).status).toBe(200);
    expect((await signIn('old-address@example.com', 'mover password')).status).toBe(401);
    expect((await post(anonymous(), '/api/auth/email/verify', { token })).status).toBe(410);

    // An account without a password (a provider's) may move its address only from a fresh login.
    const providerOnly = await signUp('provider-only@example.com');
    const { id } = (await session(providerOnly)).account!;
    await server.ctx.db.primary.query('delete from password_credentials where account_id = $1', [id]);
    await server.ctx.db.primary.query(`update login_sessions set created_at = now() - interval '1 hour' where account_id = $1`, [id]);
    const stale = await post(providerOnly, '/api/account/email', { email: 'elsewhere@example.com' });
    expect(stale.status).toBe(403);
    expect(((await stale.json()) as ErrorBody).error.code).toBe('SIGN_IN_AGAIN');
    await server.ctx.db.primary.query(`update login_sessions set created_at = now() where account_id = $1`, [id]);
    expect((await post(providerOnly, '/api/account/email', { email: 'elsewhere@example.com' })).status).toBe(202);
  });

  it('stores only hashes of link secrets, keeps no sent content, and never logs a token or an address of a mail', async () => {
    await unverified('secretive@example.com');
    const token = tokenOf(linkIn(await waitForMail(outbox, 'secretive@example.com', { subject: /Verify your e-mail/ }), '/verify-email'));
    const [id, secret] = token.split('.') as [string, string];
    const { rows } = await server.ctx.db.primary.query<{ secret_hash: Buffer }>('select secret_hash from account_links where id = $1', [id]);
    expect(rows[0]!.secret_hash.equals(createHash('sha256').update(secret).digest())).toBe(true);
    const dump = await server.ctx.db.primary.query<{ t: string }>(`select (select coalesce(string_agg(encode(coalesce(payload, ''::bytea), 'escape'), ''), '') from mail_queue) || (select string_agg(id || email, '') from account_links) as t`);
    expect(dump.rows[0]!.t).not.toContain(secret);
    const sent = await server.ctx.db.primary.query<{ n: number }>(`select count(*)::int as n from mail_queue where status = 'sent' and payload is not null`);
    expect(sent.rows[0]!.n).toBe(0);
    const logs = logLines.join('');
    expect(logs).toContain('"type":"mail.sent"');
    expect(logs).toContain('"kind":"verify-email"');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain('secretive@example.com');
  });
});
