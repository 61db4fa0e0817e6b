import { type BillingSource, type CreditGate, type MeteringContext, selectProvider, type UsageRecord } from '@yumina/ai';
import { balance, priceOf, recordUsage, reserveCredits, settleCredits } from '@yumina/billing';
import { type PrivateConnection, privateConnection } from '../accounts/ai-connection.ts';
import type { AppContext } from '../context.ts';

/** The platform's price of a model (AI_PRICES, @yumina/billing priceOf). */
export const platformPrice = (ctx: AppContext, model: string) => priceOf(ctx.config.ai.prices, model);

/**
 * Reserve-then-settle on the platform credit balance (packages/billing), one transaction per step,
 * at the platform's price of the call's model: fresh input, cache reads, cache writes and output.
 */
export function creditGate(ctx: AppContext): CreditGate {
  return {
    reserve: (request) => reserveCredits(ctx.db.primary, { ...request, price: platformPrice(ctx, request.model).price }),
    // the charge and the call's usage row commit together
    async settle(reservation, usage, record) {
      const price = platformPrice(ctx, usage?.model ?? record?.model ?? '').price;
      const used = usage ? { tokensIn: usage.tokensIn, tokensOut: usage.tokensOut, cachedTokensIn: usage.cachedTokensIn, cacheWriteTokensIn: usage.cacheWriteTokensIn } : null;
      await settleCredits(ctx.db.primary, reservation.id, used, usage?.model ?? '', record ?? undefined, price);
    },
  };
}

/** One usage_ledger row per successful call, on either billing source. */
export function usageRecorder(ctx: AppContext) {
  return (r: UsageRecord): Promise<void> => recordUsage(ctx.db.primary, r);
}

/**
 * The preference applied to a call: 'auto' (the default) is the account's own connection when it
 * has one, otherwise the platform's credits when the platform's provider is configured.
 */
export function effectivePreference(preference: string, hasConnection: boolean, officialConfigured: boolean): 'official' | 'private' | 'mixed' {
  if (preference === 'mix') return 'mixed';
  if (preference === 'auto') return !hasConnection && officialConfigured ? 'official' : 'private';
  return preference as 'official' | 'private';
}

/** What a world's interface chose for the player in one world (setPreferredProvider, setModel): null where it chose nothing. */
export interface WorldAiChoice extends Record<string, unknown> {
  provider: 'official' | 'private' | null;
  model: string | null;
}

export async function worldAiChoice(ctx: AppContext, accountId: string, worldId: string): Promise<WorldAiChoice> {
  const { rows } = await ctx.db.primary.query<WorldAiChoice>('select provider, model from world_ai_choices where account_id = $1 and world_id = $2', [accountId, worldId]);
  return rows[0] ?? { provider: null, model: null };
}

/**
 * The metering context of one call for an account: the provider chosen by the account's billing
 * preference (private connection or official key), with credits and usage records around it. In a
 * world (`worldId`), what the world's interface chose for the player there overrides the account's
 * preference and its connection's model (issue 43 point 9: never the account-wide choice).
 */
export async function meteringFor(ctx: AppContext, accountId: string, worldId?: string | null): Promise<MeteringContext> {
  const [prefs, connection, choice] = await Promise.all([
    balance(ctx.db.primary, accountId),
    privateConnection(ctx, accountId),
    worldId ? worldAiChoice(ctx, accountId, worldId) : null,
  ]);
  const own = connection && choice?.model ? { ...connection, defaultModel: choice.model } : connection;
  return meteringOf(ctx, accountId, choice?.provider ?? prefs.preference, own);
}

/** The same from what the caller read already (a turn reads the preference and the connection with its session). */
export function meteringOf(ctx: AppContext, accountId: string, preference: string, connection: PrivateConnection | null, modelSource?: BillingSource): MeteringContext {
  const selection = selectProvider({
    preference: effectivePreference(preference, !!connection, !!ctx.config.ai.official),
    official: ctx.config.ai.official ?? null,
    privateConnection: connection,
    modelSource,
    privateNetwork: ctx.config.ai.privateNetworkAccess,
  });
  return { accountId, selection, recordUsage: usageRecorder(ctx), credits: creditGate(ctx), deadlines: ctx.config.ai.deadlines };
}
