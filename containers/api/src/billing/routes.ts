import { balance, grantCredits } from '@yumina/billing';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { privateConnection } from '../accounts/ai-connection.ts';
import { findAccountByHandle } from '../accounts/lookup.ts';
import { effectivePreference } from '../ai/metering.ts';
import type { AppContext } from '../context.ts';

const preferenceBody = z.strictObject({ preference: z.enum(['auto', 'official', 'private', 'mix']) });
const grantBody = z.strictObject({
  accountId: z.string().regex(/^acc_[A-Za-z0-9_-]{16,}$/, 'must be an account id').optional(),
  /** The account by e-mail, account id, username or display name (instead of accountId); one account or a refusal. */
  account: z.string().trim().min(1).max(320).optional(),
  amount: z.number().int().min(1).max(1_000_000),
  reason: z.string().trim().min(1, 'must not be empty').max(500),
});

export async function billingRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.get('/api/billing', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const [state, ledger, connection] = await Promise.all([
      balance(db, auth.account.id),
      db.query<{ kind: string; amount: string; balance_after: string; detail: string; created_at: Date }>(
        'select kind, amount, balance_after, detail, created_at from credit_ledger where account_id = $1 order by id desc limit 50',
        [auth.account.id],
      ),
      privateConnection(ctx, auth.account.id),
    ]);
    const officialConfigured = !!ctx.config.ai.official;
    return {
      ...state,
      /** Whether the platform's provider is on, whether the account has its own connection, and which one plays now. */
      officialAvailable: officialConfigured,
      hasConnection: !!connection,
      source: effectivePreference(state.preference, !!connection, officialConfigured),
      ledger: ledger.rows.map((r) => ({
        kind: r.kind,
        amount: Number(r.amount),
        balanceAfter: Number(r.balance_after),
        detail: r.detail,
        at: r.created_at.toISOString(),
      })),
    };
  });

  app.put('/api/billing/preference', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(preferenceBody, request.body);
    await db.query(
      `insert into billing_accounts (account_id, preference) values ($1, $2)
       on conflict (account_id) do update set preference = excluded.preference, updated_at = now()`,
      [auth.account.id, body.preference],
    );
    return balance(db, auth.account.id);
  });

  /** Administrators grant platform credits; every grant is a ledger row naming who granted it. */
  app.post('/api/admin/credits', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    if (!auth.account.isAdmin) throw new HttpError(403, 'NOT_ADMIN', 'Only administrators can grant credits.');
    const body = parseWith(grantBody, request.body);
    if (!body.accountId === !body.account) throw new HttpError(400, 'VALIDATION_FAILED', 'Name the account by accountId or by account (e-mail or name).');
    const target = await findAccountByHandle(db, body.accountId ?? body.account!);
    return { credits: await grantCredits(db, target.id, body.amount, auth.account.id, body.reason), account: target };
  });
}
