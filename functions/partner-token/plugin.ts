import {
  type IdentityAccount,
  issueIdentityToken,
  type LinkedIdentities,
  type PartnerRegistry,
  type SigningKeySet,
  SigningUnavailableError,
} from '@yumina/identity';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

/**
 * POST /api/partners/:partner/token: issues an identity token (§2.5) to the landing page.
 * 404 unknown or disabled partner; 403 cross-site browser origin; 401 no platform login session;
 * 429 with Retry-After when rate limited; 503 on a temporary signing failure; else {token, expiresAt}.
 * Authentication, the cross-site rule and the rate limit are hooks supplied by the caller.
 */

export interface TokenSubject {
  account: IdentityAccount;
  /** The login-session id (stable across renewals of one login). */
  sessionId: string;
  identities: LinkedIdentities | null;
}

export interface RateLimitDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

export interface PartnerTokenPluginOptions {
  partners: PartnerRegistry;
  /** The key set, or a getter; a getter that throws counts as a temporary signing failure (503). */
  keys: SigningKeySet | (() => SigningKeySet | Promise<SigningKeySet>);
  /** The platform login session of the request, or null. */
  authenticate: (request: FastifyRequest) => Promise<TokenSubject | null> | TokenSubject | null;
  /** Per-account limit (30 tokens per minute by default, in packages/store). */
  rateLimit: (accountId: string) => Promise<RateLimitDecision> | RateLimitDecision;
  /** True when the request comes from a cross-site browser origin. */
  isCrossSite: (request: FastifyRequest) => boolean;
  now?: () => number;
}

function fail(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}

export const partnerTokenPlugin: FastifyPluginAsync<PartnerTokenPluginOptions> = async (app, options) => {
  const now = options.now ?? Date.now;

  app.post<{ Params: { partner: string } }>('/api/partners/:partner/token', async (request, reply) => {
    const partner = options.partners.get(request.params.partner);
    if (!partner?.enabled) return fail(reply, 404, 'PARTNER_NOT_FOUND', 'No such partner.');
    if (options.isCrossSite(request)) return fail(reply, 403, 'CROSS_SITE_REQUEST', 'Cross-site requests are not allowed.');

    const subject = await options.authenticate(request);
    if (!subject) return fail(reply, 401, 'UNAUTHENTICATED', 'Sign in to continue.');

    const limit = await options.rateLimit(subject.account.id);
    if (!limit.allowed) {
      reply.header('retry-after', String(Math.max(1, Math.ceil(limit.retryAfterSeconds))));
      return fail(reply, 429, 'RATE_LIMITED', 'Too many identity tokens requested; try again shortly.');
    }

    const unavailable = (error: unknown) => {
      request.log.warn({ err: error }, 'identity token signing failed');
      reply.header('retry-after', '5');
      return fail(reply, 503, 'IDENTITY_SIGNING_UNAVAILABLE', 'Identity is temporarily unavailable; try again shortly.');
    };
    let keys: SigningKeySet;
    try {
      keys = typeof options.keys === 'function' ? await options.keys() : options.keys;
    } catch (error) {
      return unavailable(error); // the key store could not be read: temporary
    }
    try {
      const issued = await issueIdentityToken({
        keys,
        account: subject.account,
        sessionId: subject.sessionId,
        identities: subject.identities,
        partner,
        now: now(),
      });
      return reply.header('cache-control', 'no-store').send(issued);
    } catch (error) {
      if (error instanceof SigningUnavailableError) return unavailable(error);
      throw error; // a malformed account record is a bug, not an outage: the error handler answers 500
    }
  });
};

export default partnerTokenPlugin;
