import type { Queryable } from '@yumina/db';
import type { AppContext } from '../context.ts';
import { SAMPLES_ACCOUNT } from '../worlds/samples.ts';

/** Serializes the claim between concurrent sign-ups (a transaction-scoped advisory lock). */
const FIRST_ADMIN_LOCK = 727_044;

/** How an operator makes an administrator (scripts/admin.ts), for messages and logs. */
export const MAKE_ADMIN_COMMAND = 'npm run admin -- grant <e-mail>';

/**
 * On a fresh install (FIRST_ACCOUNT_ADMIN, on by default for the embedded database) the first
 * account made becomes the administrator, as self-hosted apps do: publishing waits for an
 * administrator's review, and a fresh data folder has nobody else to give it. Only when no
 * administrator exists and the account is the only one (the sample worlds' own account aside).
 * Runs in the caller's transaction, after the account's row is inserted; true when it was made
 * the administrator.
 */
export async function claimFirstAdministrator(ctx: AppContext, tx: Queryable, accountId: string): Promise<boolean> {
  if (!ctx.config.auth.firstAccountAdmin) return false;
  await tx.query('select pg_advisory_xact_lock($1)', [FIRST_ADMIN_LOCK]);
  const { rowCount } = await tx.query(
    `update accounts set is_admin = true
      where id = $1
        and not exists (select 1 from accounts where is_admin)
        and not exists (select 1 from accounts where id <> $1 and id <> $2)`,
    [accountId, SAMPLES_ACCOUNT.id],
  );
  return rowCount === 1;
}

/** Whether any administrator exists (someone who can approve a held publication). */
export async function administratorExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>('select exists (select 1 from accounts where is_admin) as found');
  return rows[0]?.found === true;
}
