import { randomBytes } from 'node:crypto';
import type { DbPool, Queryable } from '@yumina/db';
import { creditsForUsage, DEFAULT_PRICE, maxCreditsFor, type ModelPrice, type PricedUsage, promptParts, TOKENS_PER_CREDIT } from './prices.ts';

export class InsufficientCreditsError extends Error {
  readonly code = 'INSUFFICIENT_CREDITS';
  readonly statusCode = 402;
  constructor(
    readonly needed: number,
    readonly balance: number,
  ) {
    super(`This needs ${needed} credits and the balance is ${balance}. Add credits or use your own AI connection.`);
  }
}

export interface ReserveRequest {
  accountId: string;
  model: string;
  purpose: string;
  estimatedTokensIn: number;
  maxTokensOut: number;
  /** The model's price (./prices.ts); DEFAULT_PRICE when omitted. */
  price?: ModelPrice;
}

/** What a call used: `cachedTokensIn` (read from the provider's cache) and `cacheWriteTokensIn` are parts of `tokensIn`. */
export type Usage = PricedUsage;

async function ensureBillingAccount(db: Queryable, accountId: string): Promise<void> {
  await db.query('insert into billing_accounts (account_id) values ($1) on conflict do nothing', [accountId]);
}

export async function balance(db: Queryable, accountId: string): Promise<{ plan: string; credits: number; preference: string }> {
  const { rows } = await db.query<{ plan: string; credits: string; preference: string }>(
    { name: 'billing.balance', text: 'select plan, credits, preference from billing_accounts where account_id = $1' },
    [accountId],
  );
  const r = rows[0];
  return r ? { plan: r.plan, credits: Number(r.credits), preference: r.preference } : { plan: 'free', credits: 0, preference: 'auto' };
}

/**
 * Step 1, before any provider request: holds the most the call can cost, in one transaction.
 * An insufficient balance throws (402) and nothing is held.
 */
export async function reserveCredits(db: DbPool, request: ReserveRequest): Promise<{ id: string; amount: number }> {
  const amount = maxCreditsFor(request.price ?? DEFAULT_PRICE, request.estimatedTokensIn, request.maxTokensOut);
  const id = `res_${randomBytes(12).toString('base64url')}`;
  return db.transaction(async (tx) => {
    await ensureBillingAccount(tx, request.accountId);
    const held = await tx.query<{ credits: string }>(
      'update billing_accounts set credits = credits - $2, updated_at = now() where account_id = $1 and credits >= $2 returning credits',
      [request.accountId, amount],
    );
    if (!held.rows[0]) {
      const current = await balance(tx, request.accountId);
      throw new InsufficientCreditsError(amount, current.credits);
    }
    await tx.query('insert into credit_reservations (id, account_id, amount, model, purpose) values ($1, $2, $3, $4, $5)', [
      id,
      request.accountId,
      amount,
      request.model,
      request.purpose,
    ]);
    return { id, amount };
  });
}

/** One usage_ledger row (one per successful AI call, on either billing source). */
export interface UsageLedgerRow {
  accountId: string;
  model: string;
  requestedModel: string;
  providerModel: string | null;
  tokensIn: number;
  tokensOut: number;
  /** Of `tokensIn`: read from the provider's prompt cache, written to it (0 when not reported). */
  cachedTokensIn?: number;
  cacheWriteTokensIn?: number;
  estimated: boolean;
  partial: boolean;
  billingSource: 'official' | 'private';
  purpose: string;
  reservationId: string | null;
  /** Credits the call was charged (official calls; settleCredits sets it to the charge it writes). */
  credits?: number | null;
}

/**
 * The same insert for rows given as one JSON parameter (`param`, e.g. `$14`, text from
 * usageLedgerJson), for a statement that writes them together with other rows (the end of a turn:
 * @yumina/conversations' completeTurn). `where` (SQL) can make the insert depend on the rest.
 */
export function usageLedgerInsertFromJson(param: string, where = 'true'): string {
  return `insert into usage_ledger (account_id, model, requested_model, provider_model, tokens_in, tokens_out, cached_tokens_in, cache_write_tokens_in, credits,
                                    estimated, partial, billing_source, purpose, reservation_id)
          select account_id, model, requested_model, provider_model, tokens_in, tokens_out, cached_tokens_in, cache_write_tokens_in, credits,
                 estimated, partial, billing_source, purpose, reservation_id
            from json_to_recordset(${param}::json) as u(account_id text, model text, requested_model text, provider_model text, tokens_in integer,
                 tokens_out integer, cached_tokens_in integer, cache_write_tokens_in integer, credits bigint, estimated boolean, partial boolean,
                 billing_source text, purpose text, reservation_id text)
           where ${where}`;
}

export function usageLedgerJson(rows: readonly UsageLedgerRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      account_id: r.accountId,
      model: r.model,
      requested_model: r.requestedModel,
      provider_model: r.providerModel,
      tokens_in: r.tokensIn,
      tokens_out: r.tokensOut,
      ...cacheColumns(r),
      credits: r.credits ?? null,
      estimated: r.estimated,
      partial: r.partial,
      billing_source: r.billingSource,
      purpose: r.purpose,
      reservation_id: r.reservationId,
    })),
  );
}

/** The cache figures as stored: parts of tokens_in, clamped to it. */
function cacheColumns(r: UsageLedgerRow): { cached_tokens_in: number; cache_write_tokens_in: number } {
  const parts = promptParts(r);
  return { cached_tokens_in: parts.cached, cache_write_tokens_in: parts.written };
}

export async function recordUsage(db: Queryable, r: UsageLedgerRow): Promise<void> {
  const cache = cacheColumns(r);
  await db.query(
    {
      name: 'billing.record_usage_v2',
      text: `insert into usage_ledger (account_id, model, requested_model, provider_model, tokens_in, tokens_out, cached_tokens_in, cache_write_tokens_in, credits,
                                       estimated, partial, billing_source, purpose, reservation_id)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    },
    [
      r.accountId,
      r.model,
      r.requestedModel,
      r.providerModel,
      r.tokensIn,
      r.tokensOut,
      cache.cached_tokens_in,
      cache.cache_write_tokens_in,
      r.credits ?? null,
      r.estimated,
      r.partial,
      r.billingSource,
      r.purpose,
      r.reservationId,
    ],
  );
}

/**
 * Step 2, after the call: charges the actual cost (never more than was held) and returns the
 * rest, or returns everything when `usage` is null. Idempotent: a reservation is settled once,
 * so a retried or duplicated settle (for example after a restart) never charges twice. With
 * `record`, the call's usage_ledger row is written in the same transaction as the charge: a
 * credit is never taken without its usage row, and never recorded twice.
 */
export async function settleCredits(
  db: DbPool,
  reservationId: string,
  usage: Usage | null,
  detail = '',
  record?: UsageLedgerRow,
  price: ModelPrice = DEFAULT_PRICE,
): Promise<{ charged: number } | null> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ account_id: string; amount: string; status: string }>(
      'select account_id, amount, status from credit_reservations where id = $1 for update',
      [reservationId],
    );
    const r = rows[0];
    if (!r || r.status !== 'reserved') return null;
    const held = Number(r.amount);
    const charged = usage ? Math.min(held, creditsForUsage(price, usage)) : 0;
    const after = await tx.query<{ credits: string }>(
      'update billing_accounts set credits = credits + $2, updated_at = now() where account_id = $1 returning credits',
      [r.account_id, held - charged],
    );
    await tx.query('update credit_reservations set status = $2, charged = $3, settled_at = now() where id = $1', [
      reservationId,
      usage ? 'settled' : 'released',
      charged,
    ]);
    if (charged > 0) {
      await tx.query(
        'insert into credit_ledger (account_id, kind, amount, balance_after, reservation_id, detail) values ($1, $2, $3, $4, $5, $6)',
        [r.account_id, 'charge', -charged, after.rows[0]!.credits, reservationId, detail],
      );
    }
    if (usage && record) await recordUsage(tx, { ...record, reservationId, credits: charged });
    return { charged };
  });
}

/**
 * Maintenance: a reservation left open past `olderThanMinutes` (its process died between the
 * steps, so the usage is unknown) is settled at the amount held — charged once, never twice.
 */
export async function settleAbandonedReservations(db: DbPool, olderThanMinutes: number): Promise<number> {
  const { rows } = await db.query<{ id: string; amount: string; account_id: string; model: string; purpose: string }>(
    `select id, amount, account_id, model, purpose from credit_reservations where status = 'reserved' and created_at < now() - make_interval(mins => $1)`,
    [olderThanMinutes],
  );
  let settled = 0;
  for (const r of rows) {
    const tokens = Number(r.amount) * TOKENS_PER_CREDIT;
    // the charge and its usage row together, as a live settle writes them (estimated: the call never reported)
    const record: UsageLedgerRow = {
      accountId: r.account_id,
      model: r.model,
      requestedModel: r.model,
      providerModel: null,
      tokensIn: tokens,
      tokensOut: 0,
      estimated: true,
      partial: true,
      billingSource: 'official',
      purpose: r.purpose,
      reservationId: r.id,
    };
    // at DEFAULT_PRICE, `tokens` of fresh input cost exactly the amount held
    if (await settleCredits(db, r.id, { tokensIn: tokens, tokensOut: 0 }, 'settled by maintenance: the call did not report back', record)) settled++;
  }
  return settled;
}

export async function grantCredits(db: DbPool, accountId: string, amount: number, grantedBy: string | null, detail: string): Promise<number> {
  return db.transaction(async (tx) => {
    await ensureBillingAccount(tx, accountId);
    const { rows } = await tx.query<{ credits: string }>(
      'update billing_accounts set credits = credits + $2, updated_at = now() where account_id = $1 returning credits',
      [accountId, amount],
    );
    const after = Number(rows[0]!.credits);
    await tx.query('insert into credit_ledger (account_id, kind, amount, balance_after, granted_by, detail) values ($1, $2, $3, $4, $5, $6)', [
      accountId,
      'grant',
      amount,
      after,
      grantedBy,
      detail,
    ]);
    return after;
  });
}
