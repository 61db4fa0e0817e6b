import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkIn, mailsTo, outboxOf, waitForMail } from '../support/outbox.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 43, point 8: a stranger spent an address's mail allowance with five requests (reset links,
 * sign-up mails), so its owner could not reset or sign up for an hour. A requester now spends only
 * their own allowance for an address (ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR, default 5, per client
 * address and target address); the address's total over every requester is four times that; and
 * once the total is spent, the owner's own request (signed in, or from an address the account signed
 * in from) still gets one mail per 15 minutes. Through the real server with the default limit; each
 * client speaks from an address of its own (TRUST_PROXY=loopback).
 */

describe("a requester's limit does not lock the address's owner out", () => {
  let server: TestServer;
  let outbox: string;
  let client = 0;
  const newAddress = () => `203.0.113.${++client}`;
  const from = (address: string) => ({ 'x-forwarded-for': address });

  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY: 'loopback' });
    outbox = outboxOf(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const forgot = (email: string, address: string, browser = new Browser(server.url)) =>
    browser.fetch('/api/auth/password/forgot', { method: 'POST', json: { email }, headers: from(address) });
  const resets = async (email: string) => (await mailsTo(outbox, email)).filter((m) => /Reset your Yumina password/.test(m.subject));

  it('five reset requests of a stranger leave the owner a working reset link', async () => {
    const owner = 'reset-owner@example.com';
    await signUp(server, new Browser(server.url), { email: owner, headers: from(newAddress()) });
    const stranger = newAddress();
    for (let i = 0; i < 5; i++) expect((await forgot(owner, stranger)).status).toBe(202);
    const spent = await forgot(owner, stranger);
    expect(spent.status).toBe(429);
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
    await waitForMail(outbox, owner, { subject: /Reset/, count: 5 });

    // The owner, from an address of their own (not even one they signed in from), asks and gets a link.
    expect((await forgot(owner, newAddress())).status).toBe(202);
    const sixth = await waitForMail(outbox, owner, { subject: /Reset/, count: 6 });
    expect(linkIn(sixth, '/reset-password')).toBeDefined();
  });

  it('when strangers from many addresses spend the total, the owner (from an address they signed in from) still gets one link per 15 minutes', async () => {
    const owner = 'flooded-owner@example.com';
    const home = newAddress();
    await signUp(server, new Browser(server.url), { email: owner, headers: from(home) });
    // Four strangers, five each: the address's total (20) is spent.
    for (let s = 0; s < 4; s++) {
      const stranger = newAddress();
      for (let i = 0; i < 5; i++) expect((await forgot(owner, stranger)).status).toBe(202);
    }
    expect((await forgot(owner, newAddress())).status).toBe(429); // a fifth stranger
    await waitForMail(outbox, owner, { subject: /Reset/, count: 20 });

    expect((await forgot(owner, home)).status).toBe(202);
    await waitForMail(outbox, owner, { subject: /Reset/, count: 21 });
    // One per 15 minutes: the next is refused, and says when to try again.
    const again = await forgot(owner, home);
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(again.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the mail worker's poll, twice over
    expect(await resets(owner)).toHaveLength(21);
  });

  it('a signed-in owner is recognised from any address once the total is spent', async () => {
    const owner = 'signed-in-owner@example.com';
    const browser = new Browser(server.url);
    await signUp(server, browser, { email: owner, headers: from(newAddress()) });
    for (let s = 0; s < 4; s++) {
      const stranger = newAddress();
      for (let i = 0; i < 5; i++) expect((await forgot(owner, stranger)).status).toBe(202);
    }
    expect((await forgot(owner, newAddress())).status).toBe(429);
    expect((await forgot(owner, newAddress(), browser)).status).toBe(202);
    await waitForMail(outbox, owner, { subject: /Reset/, count: 21 });
  });

  it('five sign-up mails a stranger asked for leave the owner of a fresh address able to sign up', async () => {
    const email = 'fresh-owner@example.com';
    const stranger = newAddress();
    for (let i = 0; i < 5; i++) {
      const res = await new Browser(server.url).fetch(i === 0 ? '/api/auth/signup' : '/api/auth/signup/resend', {
        method: 'POST',
        json: i === 0 ? { email, password: 'stranger password' } : { email },
        headers: from(stranger),
      });
      expect(res.status).toBe(202);
    }
    expect((await new Browser(server.url).fetch('/api/auth/signup/resend', { method: 'POST', json: { email }, headers: from(stranger) })).status).toBe(429);
    await waitForMail(outbox, email, { subject: /Finish creating/, count: 5 });
    // The owner signs up from their own address: the link arrives and creates the account with the owner's password.
    const done = await signUp(server, new Browser(server.url), { email, password: 'owner password', headers: from(newAddress()) });
    expect(done.status).toBe(201);
    expect(done.account.email).toBe(email);
  });
});
