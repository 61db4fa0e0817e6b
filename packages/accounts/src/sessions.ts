import { createHash } from 'node:crypto';
import type { Queryable } from '@yumina/db';
import { ACCOUNT_COLUMNS, type Account, toAccount } from './account.ts';
import { newId, newSecret } from './ids.ts';

export const SESSION_COOKIE = 'yumina_session';
/** A session is renewed (sliding expiry) at most once per this interval; its id never changes. */
const RENEW_AFTER_MS = 24 * 60 * 60 * 1000;
/** A login's "last used" time and address are refreshed at most once per this interval. */
const ACTIVE_EVERY_MS = 5 * 60 * 1000;

/** Where a login is used from: the client address (through TRUST_PROXY) and the browser's User-Agent. */
export interface ClientSeen {
  address: string;
  userAgent?: string;
}

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

export async function createSession(db: Queryable, accountId: string, ttlDays: number, seen?: ClientSeen): Promise<{ session: LoginSession; token: string }> {
  const id = newId('ses');
  const token = newSecret();
  const { rows } = await db.query<{ expires_at: Date }>(
    `insert into login_sessions (id, account_id, token_hash, expires_at, user_agent, client_address)
     values ($1, $2, $3, now() + make_interval(days => $4), $5, $6) returning expires_at`,
    [id, accountId, hashToken(token), ttlDays, seen?.userAgent?.slice(0, 400) ?? null, seen?.address ?? null],
  );
  return { session: { id, accountId, expiresAt: rows[0]!.expires_at }, token };
}

/** Resolves a cookie token to its live session and account; renews a session not renewed for a day. */
const RESOLVE_SESSION_SQL = {
  name: 'accounts.resolve_session',
  text: `select s.id as session_id, s.expires_at, s.last_seen_at, s.last_active_at, s.client_address, ${ACCOUNT_COLUMNS}
           from login_sessions s join accounts a on a.id = s.account_id
          where s.token_hash = $1 and s.ended_at is null and s.expires_at > now()`,
};

export async function resolveSession(db: Queryable, token: string, ttlDays: number, seen?: ClientSeen): Promise<Authenticated | null> {
  // Every signed-in request runs it: a named prepared statement (parsed and planned once per connection).
  const { rows } = await db.query<Record<string, unknown>>(RESOLVE_SESSION_SQL, [hashToken(token)]);
  const row = rows[0];
  if (!row) return null;
  const account = toAccount(row as never);
  const renewal = await renewIfDue(db, { id: row.session_id as string, lastSeenAt: row.last_seen_at as Date }, ttlDays);
  // "Last used, from where" for Settings' list of logins: one small write per login per five minutes at most.
  if (seen && (Date.now() - (row.last_active_at as Date).getTime() > ACTIVE_EVERY_MS || row.client_address !== seen.address)) {
    await db.query('update login_sessions set last_active_at = now(), client_address = $2 where id = $1', [row.session_id, seen.address]);
  }
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

/** One live login of an account, as Settings lists it: the device (User-Agent), the address it was last used from and when. */
export interface LoginRecord {
  id: string;
  userAgent: string | null;
  clientAddress: string | null;
  createdAt: Date;
  lastActiveAt: Date;
}

/** The account's live logins, the most recently used first (at most 200). */
export async function listLogins(db: Queryable, accountId: string): Promise<LoginRecord[]> {
  const { rows } = await db.query<{ id: string; user_agent: string | null; client_address: string | null; created_at: Date; last_active_at: Date }>(
    `select id, user_agent, client_address, created_at, last_active_at from login_sessions
      where account_id = $1 and ended_at is null and expires_at > now() order by last_active_at desc, id limit 200`,
    [accountId],
  );
  return rows.map((r) => ({ id: r.id, userAgent: r.user_agent, clientAddress: r.client_address, createdAt: r.created_at, lastActiveAt: r.last_active_at }));
}

/** Ends one live login of the account; false when it is not the account's or ended already. */
export async function endLoginOf(db: Queryable, accountId: string, sessionId: string): Promise<boolean> {
  const { rowCount } = await db.query('update login_sessions set ended_at = now() where id = $1 and account_id = $2 and ended_at is null', [sessionId, accountId]);
  return (rowCount ?? 0) > 0;
}

/** Ends every live login of an account but `keep` (null: all of them); returns how many ended. */
export async function endOtherSessions(db: Queryable, accountId: string, keep: string | null): Promise<number> {
  const { rowCount } = await db.query(
    'update login_sessions set ended_at = now() where account_id = $1 and ended_at is null and ($2::text is null or id <> $2)',
    [accountId, keep],
  );
  return rowCount ?? 0;
}

/** Scheduled maintenance: forget sessions that ended or expired more than a week ago. */
export async function purgeOldSessions(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `delete from login_sessions where coalesce(ended_at, expires_at) < now() - interval '7 days'`,
  );
  return rowCount ?? 0;
}
