import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';

/**
 * Single-use links sent by mail (account_links, migration 089). A link's token is `<id>.<secret>`:
 * the row is found by its id, and the SHA-256 of the secret is compared with the stored one in
 * constant time, so neither a database read nor the time an answer takes gives a usable link.
 */
export type LinkPurpose = 'verify_email' | 'change_email' | 'reset_password';

/** How long a link stays valid: a day to verify an address, 30 minutes to reset a password. */
export const LINK_TTL_MINUTES: Record<LinkPurpose, number> = { verify_email: 24 * 60, change_email: 24 * 60, reset_password: 30 };

const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest();

export interface IssuedLink {
  token: string;
  expiresAt: Date;
}

/** A new link for `purpose`; any earlier unused link of the account for the same purpose stops working. */
export async function issueLink(db: Queryable, accountId: string, purpose: LinkPurpose, email: string): Promise<IssuedLink> {
  await db.query('update account_links set used_at = now() where account_id = $1 and purpose = $2 and used_at is null', [accountId, purpose]);
  const id = randomBytes(16).toString('base64url');
  const secret = randomBytes(32).toString('base64url');
  const { rows } = await db.query<{ expires_at: Date }>(
    `insert into account_links (id, account_id, purpose, email, secret_hash, expires_at)
     values ($1, $2, $3, $4, $5, now() + make_interval(mins => $6)) returning expires_at`,
    [id, accountId, purpose, email, hashSecret(secret), LINK_TTL_MINUTES[purpose]],
  );
  return { token: `${id}.${secret}`, expiresAt: rows[0]!.expires_at };
}

export interface ValidLink {
  id: string;
  accountId: string;
  purpose: LinkPurpose;
  email: string;
}

/** What a link is: usable, or why not. `used` includes a link a newer one replaced. */
export type LinkState = { state: 'valid'; link: ValidLink } | { state: 'invalid' | 'expired' | 'used' };

/**
 * The state of a link of one of `purposes`, without using it. With `lock` (inside a transaction)
 * the row stays locked until the transaction ends, so two uses of one link cannot both pass.
 */
export async function inspectLink(db: Queryable, purposes: readonly LinkPurpose[], token: unknown, lock = false): Promise<LinkState> {
  const parts = typeof token === 'string' ? TOKEN.exec(token) : null;
  if (!parts) return { state: 'invalid' };
  // `addressed`: the account still signs in with the address the link went to (its own address, or
  // its password sign-in's). A reset link mailed to an address the account has left is over.
  const { rows } = await db.query<{ account_id: string; purpose: LinkPurpose; email: string; secret_hash: Buffer; used_at: Date | null; expired: boolean; addressed: boolean }>(
    `select l.account_id, l.purpose, l.email, l.secret_hash, l.used_at, l.expires_at <= now() as expired,
            exists (select 1 from accounts a where a.id = l.account_id and lower(a.email) = lower(l.email))
              or exists (select 1 from password_credentials p where p.account_id = l.account_id and lower(p.email) = lower(l.email)) as addressed
       from account_links l where l.id = $1 and l.purpose = any($2::text[])${lock ? ' for update of l' : ''}`,
    [parts[1], purposes],
  );
  const row = rows[0];
  // The secret is compared in constant time; a row that does not match says no more than no row.
  const expected = row?.secret_hash ?? hashSecret('');
  const matches = timingSafeEqual(hashSecret(parts[2]!), expected) && row !== undefined;
  if (!row || !matches) return { state: 'invalid' };
  if (row.used_at) return { state: 'used' };
  if (row.purpose === 'reset_password' && !row.addressed) return { state: 'used' };
  if (row.expired) return { state: 'expired' };
  return { state: 'valid', link: { id: parts[1]!, accountId: row.account_id, purpose: row.purpose, email: row.email } };
}

/** What an unusable link answers: a clear message that offers a new link (the page shows it). */
export function linkRefusal(state: 'invalid' | 'expired' | 'used', again: string): HttpError {
  if (state === 'expired') return new HttpError(410, 'LINK_EXPIRED', `This link has expired. ${again}`);
  if (state === 'used') return new HttpError(410, 'LINK_USED', `This link was already used, or a newer one replaced it. ${again}`);
  return new HttpError(400, 'LINK_INVALID', `This link is not valid: it may be incomplete (copy the whole link from the mail). ${again}`);
}

/** Uses a link inside the caller's transaction: valid once, then never again. Throws the refusal otherwise. */
export async function useLink(tx: Queryable, purposes: readonly LinkPurpose[], token: unknown, again: string): Promise<ValidLink> {
  const found = await inspectLink(tx, purposes, token, true);
  if (found.state !== 'valid') throw linkRefusal(found.state, again);
  await tx.query('update account_links set used_at = now() where id = $1', [found.link.id]);
  return found.link;
}

/**
 * Ends the account's outstanding links of `purposes` (marked used): an address change or a password
 * change ends every reset link mailed before it.
 */
export async function endLinks(db: Queryable, accountId: string, purposes: readonly LinkPurpose[]): Promise<number> {
  const { rowCount } = await db.query('update account_links set used_at = now() where account_id = $1 and purpose = any($2::text[]) and used_at is null', [accountId, purposes]);
  return rowCount ?? 0;
}

/** Scheduled maintenance: forget links that ended more than a week ago. */
export async function purgeOldLinks(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`delete from account_links where coalesce(used_at, expires_at) < now() - interval '7 days'`);
  return rowCount ?? 0;
}
