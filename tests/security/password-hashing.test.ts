import { randomBytes } from 'node:crypto';
import { parsePrometheus } from '@yumina/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkIn, outboxOf, tokenOf, waitForMail } from '../support/outbox.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 43, point 3: an anonymous flood of password hashes. POST /api/auth/password/reset hashed
 * the new password before it checked the token, with no limit: 24 connections of made-up tokens
 * took other people's logins from 0.1–0.3 s to 4–6 s. Now the token is checked first (a made-up
 * one costs no hash), and the anonymous routes that hash a password (reset, sign-up completion,
 * login) are limited per client address (PASSWORD_HASH_RATE_LIMIT_PER_MINUTE, one budget for all
 * of them; a sign-up's own hash by SIGNUP_RATE_LIMIT_PER_HOUR). The hashes a replica computes are counted by route in GET /metrics
 * (`yumina_password_hashes_total`). Client addresses come from X-Forwarded-For through the
 * trusted loopback hop (TRUST_PROXY=loopback), so each test names its own.
 */
const LIMIT = 6;
const METRICS_TOKEN = 'metrics-token-of-the-password-hashing-test';

interface ErrorBody {
  error: { code: string; message: string };
}

/** A token of the links' shape (`<22>.<43>` base64url), made up. */
const madeUpToken = () => `${randomBytes(16).toString('base64url').slice(0, 22)}.${randomBytes(32).toString('base64url').slice(0, 43)}`;

describe('anonymous password hashing is checked first and limited per client address (issue 43, point 3)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY: 'loopback', METRICS_TOKEN, PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: String(LIMIT), LOGIN_RATE_LIMIT_PER_MINUTE: '100' });
    expect((await signUp(server, new Browser(server.url), { email: 'hash-victim@example.com', password: 'the right password' })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  /** Hashes computed so far, by route, as GET /metrics counts them. */
  async function hashes(): Promise<Record<string, number>> {
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const family = parsePrometheus(await res.text()).get('yumina_password_hashes_total');
    return Object.fromEntries((family?.samples ?? []).map((s) => [s.labels.route!, s.value]));
  }

  const post = (path: string, address: string, json: unknown) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': address }, body: JSON.stringify(json) });

  it('a flood of made-up reset tokens: refused without a hash, then 429 from the limit on; another address still signs in', async () => {
    const before = await hashes();
    const statuses: number[] = [];
    const codes: string[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < LIMIT * 4; i++) {
      const res = await post('/api/auth/password/reset', '203.0.113.30', { token: madeUpToken(), password: 'a new password of the attacker' });
      statuses.push(res.status);
      codes.push(((await res.json()) as ErrorBody).error.code);
      if (res.status === 429) retryAfter ??= res.headers.get('retry-after');
    }
    expect(codes.slice(0, LIMIT)).toEqual(Array(LIMIT).fill('LINK_INVALID'));
    expect(statuses.slice(LIMIT)).toEqual(Array(LIMIT * 3).fill(429));
    expect(codes.slice(LIMIT).every((c) => c === 'RATE_LIMITED')).toBe(true);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Not one hash for a made-up token.
    expect((await hashes())['password-reset'] ?? 0).toBe(before['password-reset'] ?? 0);

    // The same address's login shares the budget (one limit for every route that hashes) ...
    expect((await post('/api/auth/login', '203.0.113.30', { email: 'hash-victim@example.com', password: 'the right password' })).status).toBe(429);
    // ... while another address's login works, and costs its one hash.
    const login = await post('/api/auth/login', '198.51.100.30', { email: 'hash-victim@example.com', password: 'the right password' });
    expect(login.status).toBe(200);
    expect((await hashes()).login).toBe((before.login ?? 0) + 1);
  });

  it('a flood of made-up sign-up completions: refused without a hash, then 429', async () => {
    const before = await hashes();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT * 2; i++) {
      const res = await post('/api/auth/signup/complete', '203.0.113.31', { token: madeUpToken(), password: 'whatever password' });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(400));
    expect(statuses.slice(LIMIT)).toEqual(Array(LIMIT).fill(429));
    expect((await hashes())['signup-complete'] ?? 0).toBe(before['signup-complete'] ?? 0);
  });

  it('a real reset link: the password is hashed once and set; the old one no longer signs in', async () => {
    const before = await hashes();
    expect((await post('/api/auth/password/forgot', '198.51.100.32', { email: 'hash-victim@example.com' })).status).toBe(202);
    const mail = await waitForMail(outboxOf(server), 'hash-victim@example.com', { subject: /Reset your Yumina password/ });
    const reset = await post('/api/auth/password/reset', '198.51.100.32', { token: tokenOf(linkIn(mail, '/reset-password')), password: 'the new password' });
    expect(reset.status).toBe(200);
    expect((await hashes())['password-reset']).toBe((before['password-reset'] ?? 0) + 1);
    expect((await post('/api/auth/login', '198.51.100.33', { email: 'hash-victim@example.com', password: 'the right password' })).status).toBe(401);
    expect((await post('/api/auth/login', '198.51.100.33', { email: 'hash-victim@example.com', password: 'the new password' })).status).toBe(200);
  });
});
