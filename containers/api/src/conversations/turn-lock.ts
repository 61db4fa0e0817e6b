import { settleStreamingReplies } from '@yumina/conversations';
import { HttpError } from '@yumina/http';
import type { AppContext } from '../context.ts';

/**
 * The session lock of a turn (one reply written at a time per conversation) and what settles a
 * turn that failed. The lock lives in the shared store with a TTL as a last resort only: every
 * path of a turn releases it at once, success or failure, and `stop` breaks it from any replica.
 *
 * The key names the owning account beside the session: only the owner's requests can contend for
 * it, so the send path may take it before the statement that checks ownership (one round trip
 * less before the provider is called). Another account taking "its" lock on someone's session id
 * holds a key nobody else uses, and is answered 404 by that statement.
 */

export const TURN_LOCK_TTL_MS = 180_000;
const lockKey = (accountId: string, sessionId: string) => `chat:${accountId}:${sessionId}`;

export const SESSION_BUSY_MESSAGE = 'A reply is already being written in this session (another tab?). Wait for it, or stop it.';

/** One store round trip; 409 SESSION_BUSY when a turn of the session holds it. */
export async function acquireTurnLock(ctx: AppContext, accountId: string, sessionId: string): Promise<string> {
  const token = await ctx.store.acquireLock(lockKey(accountId, sessionId), TURN_LOCK_TTL_MS);
  if (!token) throw new HttpError(409, 'SESSION_BUSY', SESSION_BUSY_MESSAGE);
  return token;
}

export async function releaseTurnLock(ctx: AppContext, accountId: string, sessionId: string, token: string): Promise<void> {
  await ctx.store.releaseLock(lockKey(accountId, sessionId), token).catch(() => false);
}

/** `stop` (after the ownership check): breaks the session's lock whoever holds it (the running turn, if any, was told to stop). */
export async function breakTurnLock(ctx: AppContext, accountId: string, sessionId: string): Promise<void> {
  await ctx.store.breakLock(lockKey(accountId, sessionId)).catch(() => false);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends a reply as `failed` with the text received so far. Retried with backoff (a database that
 * just dropped its connections or a pool that timed out usually answers again within seconds);
 * what still fails is settled by the next turn of the session or by maintenance.
 */
export async function markReplyFailed(ctx: AppContext, messageId: string, partial: string, message: string, attempts = 6): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      await ctx.db.primary.query(`update chat_messages set status = 'failed', content = $2, error_message = $3 where id = $1 and status <> 'complete'`, [
        messageId,
        partial,
        message,
      ]);
      return true;
    } catch (err) {
      ctx.log.warn({ err, messageId, attempt }, 'could not mark a failed reply yet');
      if (attempt < attempts - 1) await sleep(100 * 2 ** attempt);
    }
  }
  return false;
}

/** Replies of a session still `streaming` while its lock is held by the caller (the turn's SQL lives in @yumina/conversations). */
export { settleStreamingReplies };

/**
 * Maintenance: replies left `streaming` by a turn that no longer runs (its process died, its
 * database went away) end as `failed`. A session counts as idle when its lock can be taken; the
 * lock is held while its replies are settled, so a turn starting meanwhile waits for it.
 */
export async function settleStaleReplies(ctx: AppContext, olderThanSeconds = 60): Promise<number> {
  const { rows } = await ctx.db.primary.query<{ session_id: string; account_id: string }>(
    `select distinct m.session_id, s.account_id from chat_messages m join chat_sessions s on s.id = m.session_id
      where m.status = 'streaming' and m.created_at < now() - make_interval(secs => $1) limit 1000`,
    [olderThanSeconds],
  );
  let settled = 0;
  for (const { session_id: sessionId, account_id: accountId } of rows) {
    const token = await ctx.store.acquireLock(lockKey(accountId, sessionId), TURN_LOCK_TTL_MS).catch(() => null);
    if (!token) continue;
    try {
      settled += await settleStreamingReplies(ctx.db.primary, sessionId);
    } finally {
      await releaseTurnLock(ctx, accountId, sessionId, token);
    }
  }
  return settled;
}
