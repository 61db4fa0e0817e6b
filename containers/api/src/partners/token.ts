import type { PartnerTokenPluginOptions } from '@yumina/fn-partner-token';
import { isCrossSite } from '@yumina/http';
import { linkedIdentities } from '../accounts/account.ts';
import { authenticate } from '../accounts/auth.ts';
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
      return { account: auth.account, sessionId: auth.session.id, identities: await linkedIdentities(ctx.db.primary, auth.account.id) };
    },
    async rateLimit(accountId) {
      const r = await ctx.store.rateLimit(`partner-token:${accountId}`, ctx.config.partners.tokenRateLimitPerMinute, 60);
      return { allowed: r.allowed, retryAfterSeconds: r.retryAfter };
    },
  };
}
