import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';

export interface AccountRef {
  id: string;
  email: string;
  displayName: string;
}

/**
 * Finds one account by what an administrator knows of it: its e-mail, its username or its display
 * name (case-insensitive), or its id. Several matches of a name answer 409 with the candidates'
 * e-mails, so the administrator can name the account exactly; none answers 404.
 */
export async function findAccountByHandle(db: Queryable, handle: string): Promise<AccountRef> {
  const h = handle.trim();
  const { rows } = await db.query<{ id: string; email: string; display_name: string }>(
    `select id, email, display_name from accounts
      where id = $1 or lower(email) = lower($1) or lower(username) = lower($1) or lower(display_name) = lower($1)
      order by (id = $1) desc, (lower(email) = lower($1)) desc, created_at limit 10`,
    [h],
  );
  if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', `No account is named "${h}".`);
  const exact = rows.find((r) => r.id === h || r.email.toLowerCase() === h.toLowerCase());
  if (!exact && rows.length > 1) {
    throw new HttpError(409, 'AMBIGUOUS_ACCOUNT', `Several accounts are named "${h}"; use the e-mail: ${rows.map((r) => r.email).join(', ')}.`);
  }
  const r = exact ?? rows[0];
  return { id: r.id, email: r.email, displayName: r.display_name };
}
