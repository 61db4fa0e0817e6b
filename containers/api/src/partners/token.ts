import type { PartnerTokenPluginOptions } from '@yumina/fn-partner-token';
import { isCrossSite } from '@yumina/http';
import { linkedIdentities } from '../accounts/account.ts';
import { authenticate } from '../accounts/auth.ts';
import { absolutePicture } from '../accounts/profile-routes.ts';
import type { AppContext } from '../context.ts';

/** The partner-token function's hooks, backed by the platform's login sessions, identities and store. */
export function partnerTokenOptions(ctx: AppContext): PartnerTokenPluginOptions {
  return {
    partners: ctx.partners.registry,
    keys: ctx.partners.keys,
    isCrossSite: (request) => isCrossSite(request, [ctx.config.publicOrigin]),
    async authenticate(request) {
      const auth = await authenticate(ctx, request);
      if (!auth) return null;
      // An uploaded picture is a platform path; the token carries it as an absolute URL.
      const account = { ...auth.account, picture: absolutePicture(auth.account.picture, ctx.config.publicOrigin) };
      return { account, sessionId: auth.session.id, identities: await linkedIdentities(ctx.db.primary, auth.account.id) };
    },
    async rateLimit(accountId) {
      const r = await ctx.store.rateLimit(`partner-token:${accountId}`, ctx.config.partners.tokenRateLimitPerMinute, 60);
      return { allowed: r.allowed, retryAfterSeconds: r.retryAfter };
    },
  };
}
