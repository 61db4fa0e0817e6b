import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';
import { canonicalEmail } from './email-address.ts';

/** The account an operator's action changed, as the answer (and the admin command) names it. */
export interface AccountRef {
  id: string;
  email: string;
  emailVerified: boolean;
  displayName: string;
}

const ACCOUNT_ID = /^acc_[A-Za-z0-9_-]{16,}$/;

type Row = {
  id: string;
  email: string;
  email_verified: boolean;
  display_name: string;
};

const describe = (r: Row) => `${r.id} (${r.email}, "${r.display_name}")`;

/**
 * Finds the one account an operator names, for a change to it (a credit grant, a review hold, the
 * administrator role):
 * - an account id names that account;
 * - anything with an `@` is an e-mail address and names the account that holds it (any letter case
 *   or width; the database lets one account hold an address, and an address a provider did not
 *   vouch for is never held) — never a display name that merely looks like one;
 * - otherwise, with `names`, a username or a display name (case-insensitive).
 * None answers 404; several (a shared display name, or an address held twice in data older than
 * the rule) answer 409 AMBIGUOUS_ACCOUNT naming each candidate's id, so the operator can name the
 * account by its id; nothing is changed either way.
 */
export async function findAccountByHandle(db: Queryable, handle: string, options: { names?: boolean } = {}): Promise<AccountRef> {
  const h = handle.trim();
  const columns = 'id, email, email_verified, display_name';
  let rows: Row[];
  if (ACCOUNT_ID.test(h)) {
    rows = (await db.query<Row>(`select ${columns} from accounts where id = $1`, [h])).rows;
  } else if (h.includes('@')) {
    rows = (await db.query<Row>(`select ${columns} from accounts where lower(email) = lower($1) order by created_at, id limit 10`, [canonicalEmail(h)])).rows;
  } else if (options.names ?? true) {
    rows = (
      await db.query<Row>(
        `select ${columns} from accounts where lower(username) = lower($1) or lower(display_name) = lower($1) order by created_at, id limit 10`,
        [h],
      )
    ).rows;
  } else {
    throw new HttpError(400, 'VALIDATION_FAILED', `"${h}" is neither an e-mail address nor an account id; name the account by one of them.`);
  }
  if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', `No account is named "${h}".`);
  if (rows.length > 1) {
    throw new HttpError(409, 'AMBIGUOUS_ACCOUNT', `Several accounts match "${h}": ${rows.map(describe).join('; ')}. Name the account by its id; nothing was changed.`);
  }
  const r = rows[0];
  return { id: r.id, email: r.email, emailVerified: r.email_verified, displayName: r.display_name };
}
