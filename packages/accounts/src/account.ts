import type { Queryable } from '@yumina/db';

export interface Account {
  id: string;
  email: string;
  emailVerified: boolean;
  username: string | null;
  displayName: string;
  picture: string | null;
  isAdmin: boolean;
  createdAt: string;
}

interface AccountRow {
  id: string;
  email: string;
  email_verified: boolean;
  username: string | null;
  display_name: string;
  picture: string | null;
  is_admin: boolean;
  created_at: Date;
}

export const ACCOUNT_COLUMNS = 'a.id, a.email, a.email_verified, a.username, a.display_name, a.picture, a.is_admin, a.created_at';

export function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    email: row.email,
    emailVerified: row.email_verified,
    username: row.username,
    displayName: row.display_name,
    picture: row.picture,
    isAdmin: row.is_admin,
    createdAt: row.created_at.toISOString(),
  };
}

export async function findAccount(db: Queryable, id: string): Promise<Account | null> {
  const { rows } = await db.query<AccountRow & Record<string, unknown>>(`select ${ACCOUNT_COLUMNS} from accounts a where a.id = $1`, [id]);
  return rows[0] ? toAccount(rows[0]) : null;
}

/** Linked providers as identity-token claims: only those with a completed OAuth link. */
export async function linkedIdentities(db: Queryable, accountId: string): Promise<Partial<Record<'google' | 'discord' | 'twitter', string>>> {
  const { rows } = await db.query<{ provider: 'google' | 'discord' | 'twitter'; subject: string }>(
    'select provider, subject from oauth_identities where account_id = $1',
    [accountId],
  );
  return Object.fromEntries(rows.map((r) => [r.provider, r.subject]));
}

/** A picture as an absolute URL (identity tokens carry absolute https URLs or null): an uploaded one is a platform path. */
export function absolutePicture(picture: string | null, publicOrigin: string): string | null {
  if (!picture) return null;
  return picture.startsWith('/') ? `${publicOrigin}${picture}` : picture;
}
