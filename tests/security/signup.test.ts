import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkIn, mailsTo, outboxOf, tokenOf, waitForMail } from '../support/outbox.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp, signUpLink } from '../support/sign-up.ts';

/**
 * Issue 35, point 5: no route tells whether an address has an account. Sign-up is verify-first:
 * it answers the same for a taken and a free address and signs nobody in; the account exists once
 * the link mailed to the address is followed. Against the real server, PostgreSQL, Redis and its
 * mail queue writing to the outbox folder.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

describe('verify-first sign-up', () => {
  let server: TestServer;
  let outbox: string;
  let client = 0;
  const fromClient = () => ({ 'x-forwarded-for': `203.0.113.${++client}` });

  beforeAll(async () => {
    // Production's password hash cost: the timing test below measures what a hash costs.
    server = await startTestServer({ TRUST_PROXY: 'loopback', ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR: '3', PASSWORD_HASH_COST: '14' });
    outbox = outboxOf(server);
  }, 60_000);
  afterAll(() => server?.stop());

  const post = (b: Browser, path: string, json: unknown, headers: Record<string, string> = fromClient()) => b.fetch(path, { method: 'POST', json, headers });
  const anonymous = () => new Browser(server.url);
  const sessionOf = async (b: Browser) => ((await (await b.fetch('/api/auth/session')).json()) as { account: { id: string } | null }).account;
  const accountsWith = async (email: string) =>
    (await server.ctx.db.primary.query<{ id: string; email_verified: boolean }>('select id, email_verified from accounts where lower(email) = $1', [email])).rows;
  /** Everything a client can see of an answer but the date and the request id. */
  async function answer(res: Response) {
    const headers = Object.fromEntries([...res.headers].filter(([k]) => !['date', 'x-request-id'].includes(k)));
    return { status: res.status, body: await res.text(), headers, cookies: res.headers.getSetCookie() };
  }

  it('a taken and a free address get the same answer (status, body, headers, no cookie); only the free one gets a link', async () => {
    const owner = await signUp(server, anonymous(), { email: 'owner@example.com', password: 'owner password', headers: fromClient() });
    const answers = [];
    for (const email of ['owner@example.com', 'Owner@Example.com', 'newcomer@example.com']) {
      const b = anonymous();
      const res = await post(b, '/api/auth/signup', { email, password: 'intruder password', displayName: 'Someone' });
      answers.push(await answer(res));
      expect(b.cookies.size).toBe(0);
      expect(await sessionOf(b)).toBeNull();
    }
    expect(answers[0]!.status).toBe(202);
    expect(JSON.parse(answers[0]!.body)).toMatchObject({ status: 'verification_sent' });
    expect(answers[0]!.cookies).toEqual([]);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);

    // The holder hears of it, without a link; nothing changes on the account.
    const notice = await waitForMail(outbox, 'owner@example.com', { subject: /tried to create a Yumina account/ });
    expect(notice.text).not.toMatch(/#token=/);
    expect(notice.text).toMatch(/reset-password|forgot-password/);
    expect(await accountsWith('owner@example.com')).toEqual([{ id: owner.account.id, email_verified: true }]);
    expect((await post(anonymous(), '/api/auth/login', { email: 'owner@example.com', password: 'owner password' })).status).toBe(200);
    expect((await post(anonymous(), '/api/auth/login', { email: 'owner@example.com', password: 'intruder password' })).status).toBe(401);
    const pending = await server.ctx.db.primary.query('select 1 from pending_signups where lower(email) = $1 and used_at is null', ['owner@example.com']);
    expect(pending.rowCount).toBe(0);

    // The free address: a link, and no account until it is followed.
    await signUpLink(server, 'newcomer@example.com', 1);
    expect(await accountsWith('newcomer@example.com')).toEqual([]);
    expect((await post(anonymous(), '/api/auth/login', { email: 'newcomer@example.com', password: 'intruder password' })).status).toBe(401);
  });

  it('both answers hash the password: neither is much faster than the other', async () => {
    // One taken address per round: the per-address mail limit (3 here) is not what is measured.
    for (let i = 0; i < 3; i++) await signUp(server, anonymous(), { email: `timed-owner-${i}@example.com`, headers: fromClient() });
    const time = async (email: string) => {
      const start = process.hrtime.bigint();
      expect((await post(anonymous(), '/api/auth/signup', { email, password: 'some password' })).status).toBe(202);
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const taken: number[] = [];
    const free: number[] = [];
    for (let i = 0; i < 3; i++) {
      taken.push(await time(`timed-owner-${i}@example.com`));
      free.push(await time(`timed-free-${i}@example.com`));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[1]!;
    // Each includes an scrypt hash (tens of milliseconds); without it the taken branch would be a few.
    expect(median(taken)).toBeGreaterThan(median(free) / 3);
    expect(median(free)).toBeGreaterThan(median(taken) / 3);
  });

  it('following the link creates the verified account and signs that browser in, once; reuse, forgery and expiry are refused', async () => {
    const asker = anonymous();
    expect((await post(asker, '/api/auth/signup', { email: 'Link@Example.com', password: 'link password', displayName: 'Linda', returnTo: '/studio' })).status).toBe(202);
    const mail = await waitForMail(outbox, 'link@example.com', { subject: /Finish creating/ });
    expect(mail.html).toMatch(/^<!doctype html>/);
    const link = linkIn(mail, '/complete-signup');
    expect(link.origin).toBe(server.ctx.config.publicOrigin);
    const token = tokenOf(link);
    const [id, secret] = token.split('.') as [string, string];
    // Only the secret's hash is stored, and the password's scrypt hash; the link lasts a day.
    const { rows } = await server.ctx.db.primary.query<{ hours: number; secret_hash: Buffer; password_hash: string }>(
      'select extract(epoch from expires_at - created_at) / 3600 as hours, secret_hash, password_hash from pending_signups where id = $1',
      [id],
    );
    expect(Number(rows[0]!.hours)).toBe(24);
    expect(rows[0]!.secret_hash.toString('base64url')).not.toContain(secret);
    // At the configured cost (PASSWORD_HASH_COST 14: N = 16,384).
    expect(rows[0]!.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);

    const forged = `${id}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [forged, `${id}.`, id, 'x'.repeat(66), '', `${'A'.repeat(22)}.${secret}`]) {
      const res = await post(anonymous(), '/api/auth/signup/complete', { token: bad, password: 'link password' });
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as ErrorBody).error.code).toBe('LINK_INVALID');
    }
    expect((await post(anonymous(), '/api/auth/signup/complete', { token: 42 })).status).toBe(400);
    expect(await accountsWith('link@example.com')).toEqual([]);

    // Another browser follows it: that browser is signed in to the new, verified account.
    const other = anonymous();
    const done = await post(other, '/api/auth/signup/complete', { token, password: 'link password' });
    expect(done.status).toBe(201);
    const body = (await done.json()) as { account: { id: string; email: string; emailVerified: boolean; displayName: string }; returnTo: string };
    expect(body.account).toMatchObject({ email: 'link@example.com', emailVerified: true, displayName: 'Linda' });
    expect(body.returnTo).toBe('/studio');
    expect((await sessionOf(other))?.id).toBe(body.account.id);
    expect(await sessionOf(asker)).toBeNull();
    expect((await post(anonymous(), '/api/auth/login', { email: 'link@example.com', password: 'link password' })).status).toBe(200);
    const claims = await other.fetch('/api/partners/demo/token', { method: 'POST' });
    expect(claims.status).toBe(200);
    const { token: idToken } = (await claims.json()) as { token: string };
    expect(JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString())).toMatchObject({ email: 'link@example.com', email_verified: true });

    // Single use.
    const third = anonymous();
    const again = await post(third, '/api/auth/signup/complete', { token, password: 'link password' });
    expect(again.status).toBe(410);
    expect(((await again.json()) as ErrorBody).error.code).toBe('LINK_USED');
    expect(third.cookies.size).toBe(0);
    expect(await accountsWith('link@example.com')).toHaveLength(1);

    // Expired after 24 hours: refused, no account, and the answer offers a new link.
    expect((await post(anonymous(), '/api/auth/signup', { email: 'late@example.com', password: 'late password' })).status).toBe(202);
    const late = tokenOf(await signUpLink(server, 'late@example.com', 1));
    await server.ctx.db.primary.query(`update pending_signups set expires_at = now() - interval '1 second' where id = $1`, [late.split('.')[0]]);
    const expired = await post(anonymous(), '/api/auth/signup/complete', { token: late, password: 'late password' });
    expect(expired.status).toBe(410);
    const refusal = (await expired.json()) as ErrorBody;
    expect(refusal.error.code).toBe('LINK_EXPIRED');
    expect(refusal.error.message).toMatch(/new link/i);
    expect(await accountsWith('late@example.com')).toEqual([]);
    // A resend gives a fresh link for the same sign-up.
    expect((await post(anonymous(), '/api/auth/signup/resend', { email: 'late@example.com' })).status).toBe(202);
    const fresh = tokenOf(await signUpLink(server, 'late@example.com', 2));
    expect((await post(anonymous(), '/api/auth/signup/complete', { token: fresh, password: 'late password' })).status).toBe(201);
    expect((await post(anonymous(), '/api/auth/login', { email: 'late@example.com', password: 'late password' })).status).toBe(200);
  });

  it('the link alone does not finish a sign-up: the password chosen at sign-up is asked, wrong ones count, the fifth ends the link (no pre-account takeover)', async () => {
    // A stranger signs up with the victim's address and a password of the stranger's choosing.
    expect((await post(anonymous(), '/api/auth/signup', { email: 'victim@example.com', password: 'stranger password' })).status).toBe(202);
    const token = tokenOf(await signUpLink(server, 'victim@example.com', 1));
    // The victim follows the mail: without the stranger's password nothing is created, nobody signed in.
    const victim = anonymous();
    expect((await post(victim, '/api/auth/signup/complete', { token })).status).toBe(400); // no password at all
    for (let left = 4; left >= 1; left--) {
      const res = await post(victim, '/api/auth/signup/complete', { token, password: 'victim guess' });
      expect(res.status).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error.code).toBe('WRONG_PASSWORD');
      expect(body.error.message).toContain(`${left} ${left === 1 ? 'try' : 'tries'} left`);
    }
    const fifth = await post(victim, '/api/auth/signup/complete', { token, password: 'victim guess' });
    expect(fifth.status).toBe(410);
    expect(((await fifth.json()) as ErrorBody).error.code).toBe('LINK_USED');
    // Ended: the right password no longer finishes it either.
    expect((await post(anonymous(), '/api/auth/signup/complete', { token, password: 'stranger password' })).status).toBe(410);
    expect(victim.cookies.size).toBe(0);
    expect(await accountsWith('victim@example.com')).toEqual([]);

    // A wrong password leaves the link usable: the right one then finishes it.
    expect((await post(anonymous(), '/api/auth/signup', { email: 'typo@example.com', password: 'typo password' })).status).toBe(202);
    const typo = tokenOf(await signUpLink(server, 'typo@example.com', 1));
    expect((await post(anonymous(), '/api/auth/signup/complete', { token: typo, password: 'typo pasword' })).status).toBe(400);
    expect((await post(anonymous(), '/api/auth/signup/complete', { token: typo, password: 'typo password' })).status).toBe(201);
  });

  it('a newer sign-up or resend replaces the earlier link; a link for an address taken meanwhile creates nothing', async () => {
    expect((await post(anonymous(), '/api/auth/signup', { email: 'twice@example.com', password: 'first password' })).status).toBe(202);
    const first = tokenOf(await signUpLink(server, 'twice@example.com', 1));
    expect((await post(anonymous(), '/api/auth/signup', { email: 'twice@example.com', password: 'second password' })).status).toBe(202);
    const second = tokenOf(await signUpLink(server, 'twice@example.com', 2));
    expect((await post(anonymous(), '/api/auth/signup/complete', { token: first, password: 'first password' })).status).toBe(410);
    expect((await post(anonymous(), '/api/auth/signup/complete', { token: second, password: 'second password' })).status).toBe(201);
    expect((await post(anonymous(), '/api/auth/login', { email: 'twice@example.com', password: 'second password' })).status).toBe(200);

    // Two pending sign-ups cannot both become accounts: the address is taken when the second is followed.
    expect((await post(anonymous(), '/api/auth/signup', { email: 'race@example.com', password: 'race password' })).status).toBe(202);
    const raced = tokenOf(await signUpLink(server, 'race@example.com', 1));
    await server.ctx.db.primary.query(`insert into accounts (id, email, email_verified, display_name) values ('acc_racer_0123456789abcdef', 'race@example.com', true, 'Racer')`);
    const late = anonymous();
    const res = await post(late, '/api/auth/signup/complete', { token: raced, password: 'race password' });
    expect(res.status).toBe(409);
    expect(late.cookies.size).toBe(0);
    expect((await accountsWith('race@example.com')).map((r) => r.id)).toEqual(['acc_racer_0123456789abcdef']);
  });

  it('sign-up mails are limited per address (taken or not) and resends per client', async () => {
    await signUp(server, anonymous(), { email: 'busy@example.com', headers: fromClient() });
    // ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR is 3 here per client and address (a sign-up and a resend count
    // alike), and four times as many per address from changing clients (issue 43, point 8).
    for (const email of ['busy@example.com', 'never-signed-up@example.com', 'pending@example.com']) {
      const one = fromClient();
      if (email === 'pending@example.com') expect((await post(anonymous(), '/api/auth/signup', { email, password: 'pending password' }, one)).status).toBe(202);
      const allowed = email === 'pending@example.com' ? 2 : 3; // its sign-up from this client counts as one
      for (let i = 0; i < allowed; i++) expect((await post(anonymous(), '/api/auth/signup/resend', { email }, one)).status, email).toBe(202);
      const refused = await post(anonymous(), '/api/auth/signup/resend', { email }, one);
      expect(refused.status, email).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await post(anonymous(), '/api/auth/signup', { email, password: 'yet another pw' }, one)).status, email).toBe(429);
      // From changing clients, up to the address's total (12, busy@'s own sign-up from another client included).
      const total = email === 'busy@example.com' ? 12 - 1 - 3 : 12 - 3;
      for (let i = 0; i < total; i++) expect((await post(anonymous(), '/api/auth/signup/resend', { email })).status, email).toBe(202);
      expect((await post(anonymous(), '/api/auth/signup/resend', { email })).status, email).toBe(429);
    }
    // The unknown address got nothing; the taken one only notices; the pending one its links.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await mailsTo(outbox, 'never-signed-up@example.com')).toEqual([]);
    expect((await mailsTo(outbox, 'busy@example.com')).filter((m) => /#token=/.test(m.text))).toHaveLength(1); // its own sign-up
    expect((await mailsTo(outbox, 'pending@example.com')).length).toBe(12);

    // One client, many addresses: four times the per-address limit, then 429.
    const one = fromClient();
    for (let i = 0; i < 12; i++) expect((await post(anonymous(), '/api/auth/signup/resend', { email: `spray-${i}@example.com` }, one)).status).toBe(202);
    expect((await post(anonymous(), '/api/auth/signup/resend', { email: 'spray-last@example.com' }, one)).status).toBe(429);
    expect((await post(anonymous(), '/api/auth/signup/resend', { email: 'not an address' })).status).toBe(400);
  });
});
