import type { PartnerTokenPluginOptions } from '@yumina/fn-partner-token';
import { platformTokenOptions } from '@yumina/fn-partner-token/options';
import { loginSettings } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';

/** The partner-token function's hooks on the container's context (local mode), built as the deployed function builds them. */
export function partnerTokenOptions(ctx: AppContext): PartnerTokenPluginOptions {
  return platformTokenOptions({
    partners: ctx.partners.registry,
    keys: ctx.partners.keys,
    login: loginSettings(ctx),
    store: ctx.store,
    publicOrigin: ctx.config.publicOrigin,
    tokensPerMinute: ctx.config.partners.tokenRateLimitPerMinute,
  });
}
