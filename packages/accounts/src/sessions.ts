import { createHash } from 'node:crypto';
import type { Queryable } from '@yumina/db';
import { ACCOUNT_COLUMNS, type Account, toAccount } from './account.ts';
import { newId, newSecret } from './ids.ts';

export const SESSION_COOKIE = 'yumina_session';
/** A session is renewed (sliding expiry) at most once per this interval; its id never changes. */
const RENEW_AFTER_MS = 24 * 60 * 60 * 1000;

export interface LoginSession {
  /** Stable for the whole login, across renewals: the identity token's `sid`. */
  id: string;
  accountId: string;
  expiresAt: Date;
}

export interface Authenticated {
  account: Account;
  session: LoginSession;
  /** Set when this request renewed the session: the cookie must be sent again. */
  renewed: boolean;
}

/** What login_sessions.token_hash holds of a cookie's token. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest();

export async function createSession(db: Queryable, accountId: string, ttlDays: number): Promise<{ session: LoginSession; token: string }> {
  const id = newId('ses');
  const token = newSecret();
  const { rows } = await db.query<{ expires_at: Date }>(
    `insert into login_sessions (id, account_id, token_hash, expires_at)
     values ($1, $2, $3, now() + make_interval(days => $4)) returning expires_at`,
    [id, accountId, hashToken(token), ttlDays],
  );
  return { session: { id, accountId, expiresAt: rows[0]!.expires_at }, token };
}

/** Resolves a cookie token to its live session and account; renews a session not renewed for a day. */
const RESOLVE_SESSION_SQL = {
  name: 'accounts.resolve_session',
  text: `select s.id as session_id, s.expires_at, s.last_seen_at, ${ACCOUNT_COLUMNS}
           from login_sessions s join accounts a on a.id = s.account_id
          where s.token_hash = $1 and s.ended_at is null and s.expires_at > now()`,
};

export async function resolveSession(db: Queryable, token: string, ttlDays: number): Promise<Authenticated | null> {
  // Every signed-in request runs it: a named prepared statement (parsed and planned once per connection).
  const { rows } = await db.query<Record<string, unknown>>(RESOLVE_SESSION_SQL, [hashToken(token)]);
  const row = rows[0];
  if (!row) return null;
  const account = toAccount(row as never);
  const renewal = await renewIfDue(db, { id: row.session_id as string, lastSeenAt: row.last_seen_at as Date }, ttlDays);
  return { account, session: { id: row.session_id as string, accountId: account.id, expiresAt: renewal ?? (row.expires_at as Date) }, renewed: renewal !== null };
}

/** Sliding expiry: a session not renewed for a day gets a new expiry (its new expiry), else null. */
export async function renewIfDue(db: Queryable, session: { id: string; lastSeenAt: Date }, ttlDays: number): Promise<Date | null> {
  if (Date.now() - session.lastSeenAt.getTime() <= RENEW_AFTER_MS) return null;
  const updated = await db.query<{ expires_at: Date }>(
    `update login_sessions set last_seen_at = now(), expires_at = now() + make_interval(days => $2)
      where id = $1 and ended_at is null returning expires_at`,
    [session.id, ttlDays],
  );
  return updated.rows[0]?.expires_at ?? null;
}

export async function endSession(db: Queryable, sessionId: string): Promise<void> {
  await db.query('update login_sessions set ended_at = now() where id = $1 and ended_at is null', [sessionId]);
}

/** Scheduled maintenance: forget sessions that ended or expired more than a week ago. */
export async function purgeOldSessions(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `delete from login_sessions where coalesce(ended_at, expires_at) < now() - interval '7 days'`,
  );
  return rowCount ?? 0;
}
