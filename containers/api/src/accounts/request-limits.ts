import { HttpError } from '@yumina/http';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';

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

/** Sign-up: limited per client address. */
export function limitSignup(ctx: AppContext, request: FastifyRequest): Promise<void> {
  return enforceLimits(
    ctx,
    [{ key: `signup:address:${request.ip}`, limit: ctx.config.limits.signupsPerHour, windowSeconds: 3600 }],
    'Too many accounts were created from this address. Try again later.',
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
