import { type BillingSource, type CreditGate, type MeteringContext, selectProvider, type UsageRecord } from '@yumina/ai';
import { balance, reserveCredits, settleCredits } from '@yumina/billing';
import { privateConnection } from '../accounts/ai-connection.ts';
import type { AppContext } from '../context.ts';

/** Reserve-then-settle on the platform credit balance (packages/billing), one transaction per step. */
export function creditGate(ctx: AppContext): CreditGate {
  return {
    reserve: (request) => reserveCredits(ctx.db.primary, request),
    async settle(reservation, usage) {
      await settleCredits(ctx.db.primary, reservation.id, usage ? { tokensIn: usage.tokensIn, tokensOut: usage.tokensOut } : null, usage?.model ?? '');
    },
  };
}

/** One usage_ledger row per successful call, on either billing source. */
export function usageRecorder(ctx: AppContext) {
  return async (r: UsageRecord): Promise<void> => {
    await ctx.db.primary.query(
      `insert into usage_ledger (account_id, model, requested_model, provider_model, tokens_in, tokens_out, estimated, partial, billing_source, purpose, reservation_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [r.accountId, r.model, r.requestedModel, r.providerModel, r.tokensIn, r.tokensOut, r.estimated, r.partial, r.billingSource, r.purpose, r.reservationId],
    );
  };
}

/**
 * The metering context of one call for an account: the provider chosen by the account's billing
 * preference (private connection or official key), with credits and usage records around it.
 */
export async function meteringFor(ctx: AppContext, accountId: string, modelSource?: BillingSource): Promise<MeteringContext> {
  const [prefs, connection] = await Promise.all([balance(ctx.db.primary, accountId), privateConnection(ctx, accountId)]);
  const selection = selectProvider({
    preference: prefs.preference === 'mix' ? 'mixed' : (prefs.preference as 'official' | 'private'),
    official: ctx.config.ai.official ?? null,
    privateConnection: connection,
    modelSource,
  });
  return { accountId, selection, recordUsage: usageRecorder(ctx), credits: creditGate(ctx) };
}
