import { HttpError } from '@yumina/http';
import type { Counter } from '@yumina/telemetry';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { authenticate } from './auth.ts';

/**
 * Per-address and per-account request limits. The client address is `request.ip`, which Fastify
 * derives through TRUST_PROXY only: a client-supplied X-Forwarded-For from a hop that is not
 * trusted is ignored, so it cannot rotate the key.
 */

/** The e-mail as the login limit keys it: trimmed, NFKC-normalized and case-folded. */
export function normalizeEmail(raw: string): string {
  return raw.trim().normalize('NFKC').toUpperCase().toLowerCase();
}

/** Counts one attempt under each key; the first exhausted key answers 429 with Retry-After. */
export async function enforceLimits(
  ctx: AppContext,
  checks: readonly { key: string; limit: number; windowSeconds: number }[],
  message: string,
): Promise<void> {
  const results = await Promise.all(checks.map((c) => ctx.store.rateLimit(c.key, c.limit, c.windowSeconds)));
  const refused = results.filter((r) => !r.allowed);
  if (refused.length) {
    const retryAfter = Math.max(...refused.map((r) => r.retryAfter));
    throw new HttpError(429, 'RATE_LIMITED', message, { 'retry-after': String(retryAfter) });
  }
}

/** Password login: limited per client address and, separately, per normalized e-mail. */
export function limitLogin(ctx: AppContext, request: FastifyRequest, email: string): Promise<void> {
  const per = ctx.config.auth.loginRateLimitPerMinute;
  return enforceLimits(
    ctx,
    [
      { key: `login:address:${request.ip}`, limit: per, windowSeconds: 60 },
      { key: `login:email:${normalizeEmail(email)}`, limit: per, windowSeconds: 60 },
    ],
    'Too many sign-in attempts. Wait a moment and try again.',
  );
}

/** AI connection tests and model listings: limited per account (each one calls the provider). */
export function limitAiCheck(ctx: AppContext, accountId: string): Promise<void> {
  return enforceLimits(
    ctx,
    [{ key: `ai-check:account:${accountId}`, limit: ctx.config.limits.aiChecksPerMinute, windowSeconds: 60 }],
    'Too many checks of the AI provider. Wait a moment and try again.',
  );
}

/**
 * Mails an account flow sends to an account (a verification resend, an address change): per
 * account ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR, per client address four times as many. Mails to an
 * address a client names (a reset link, a sign-up mail) go through limitMailToAddress instead.
 */
export function limitAccountMail(ctx: AppContext, request: FastifyRequest, flow: string, target: { accountId: string }): Promise<void> {
  const per = ctx.config.limits.accountMailPerHour;
  return enforceLimits(
    ctx,
    [
      { key: `${flow}:address:${request.ip}`, limit: per * 4, windowSeconds: 3600 },
      { key: `${flow}:account:${target.accountId}`, limit: per, windowSeconds: 3600 },
    ],
    TOO_MANY_MAILS,
  );
}

const TOO_MANY_MAILS = 'Too many mails were asked for. Wait a while and try again; check your spam folder meanwhile.';

/** The owner's own request still gets one link this often when an address's hourly total is spent. */
export const OWNER_MAIL_FLOOR_SECONDS = 15 * 60;

/**
 * Mails to an address a client names: a reset link, a sign-up mail (issue 43, point 8: five requests
 * of a stranger spent the address's allowance and locked its owner out for an hour). Three buckets:
 * - the requester's own allowance for this address: ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR per client
 *   address and target address (what a stranger can spend is only their own), beside `perClient`
 *   (the client's limit over every address);
 * - the address's total, over every requester: four times as many (a mailbox cannot be flooded from
 *   many client addresses), counted only for requests the first bucket let through;
 * - once that total is spent, the owner's own request still gets one mail per 15 minutes: from a
 *   browser signed in to the account that has the address, or from a client address the account
 *   signed in from (its logins, kept until a week after they end).
 * The same for known and unknown addresses (an unknown address has no owner to recognise, so its
 * total is its limit); the answer says nothing about which it is.
 */
export async function limitMailToAddress(
  ctx: AppContext,
  request: FastifyRequest,
  flow: string,
  email: string,
  perClient: { key: string; limit: number },
  message = TOO_MANY_MAILS,
): Promise<void> {
  const per = ctx.config.limits.accountMailPerHour;
  const target = normalizeEmail(email);
  await enforceLimits(
    ctx,
    [
      { key: perClient.key, limit: perClient.limit, windowSeconds: 3600 },
      { key: `${flow}:email:${target}:from:${request.ip}`, limit: per, windowSeconds: 3600 },
    ],
    message,
  );
  const total = await ctx.store.rateLimit(`${flow}:email:${target}`, per * 4, 3600);
  if (total.allowed) return;
  if (await isOwnRequest(ctx, request, target)) {
    const floor = await ctx.store.rateLimit(`${flow}:email:${target}:owner`, 1, OWNER_MAIL_FLOOR_SECONDS);
    if (floor.allowed) return;
    throw new HttpError(429, 'RATE_LIMITED', message, { 'retry-after': String(floor.retryAfter) });
  }
  throw new HttpError(429, 'RATE_LIMITED', message, { 'retry-after': String(total.retryAfter) });
}

/** Whether a request comes from the owner of the account at `email`: signed in to it, or from an address it signed in from. */
async function isOwnRequest(ctx: AppContext, request: FastifyRequest, email: string): Promise<boolean> {
  const auth = await authenticate(ctx, request);
  if (auth && normalizeEmail(auth.account.email) === email) return true;
  const { rowCount } = await ctx.db.primary.query(
    `select 1 from login_sessions s
      where s.client_address = $2
        and s.account_id in (select id from accounts where lower(email) = $1 union select account_id from password_credentials where lower(email) = $1)
      limit 1`,
    [email, request.ip],
  );
  return (rowCount ?? 0) > 0;
}

/** Password checks of a signed-in account (changing the password, the address): as many per minute as logins. */
export function limitPasswordCheck(ctx: AppContext, accountId: string): Promise<void> {
  return enforceLimits(
    ctx,
    [{ key: `password-check:account:${accountId}`, limit: ctx.config.auth.loginRateLimitPerMinute, windowSeconds: 60 }],
    'Too many password attempts. Wait a moment and try again.',
  );
}

/**
 * Anonymous requests that hash a password (issue 43): a login (after its own limits), a sign-up's
 * completion and a password reset share one budget per client address,
 * PASSWORD_HASH_RATE_LIMIT_PER_MINUTE, counted before the request's link or password is checked (a
 * refused one costs a store round trip, never a hash), so no address can keep the CPU busy with
 * scrypt for everyone else. (A sign-up's own hash is bounded by SIGNUP_RATE_LIMIT_PER_HOUR.)
 */
export function limitPasswordHashing(ctx: AppContext, request: FastifyRequest): Promise<void> {
  return enforceLimits(
    ctx,
    [{ key: `password-hash:address:${request.ip}`, limit: ctx.config.limits.passwordHashesPerMinute, windowSeconds: 60 }],
    'Too many sign-in and password attempts from your network. Wait a minute and try again.',
  );
}

const hashCounters = new WeakMap<AppContext['telemetry'], Counter>();

/** Counts a password hash (or verification) a route is about to compute, by route: `yumina_password_hashes_total` in GET /metrics. */
export function countPasswordHash(ctx: AppContext, route: 'login' | 'signup' | 'signup-complete' | 'password-reset'): void {
  let counter = hashCounters.get(ctx.telemetry);
  if (!counter) {
    counter = ctx.telemetry.registry.counter('yumina_password_hashes_total', 'Password hashes and verifications computed for anonymous requests, by route.', ['route']);
    hashCounters.set(ctx.telemetry, counter);
  }
  counter.inc({ route });
}
