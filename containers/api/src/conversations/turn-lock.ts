import { randomUUID } from 'node:crypto';
import { releaseTurn, settleAbandonedReplies, settleStreamingReplies, TURN_LOCK_TTL_SECONDS } from '@yumina/conversations';
import { HttpError } from '@yumina/http';
import type { AppContext } from '../context.ts';

/**
 * The turn lock of a conversation (one reply written at a time) and what settles a turn that
 * failed. The lock is a token on the session's row (chat_sessions.turn_token, turn_until): the send
 * path takes it in startTurn's statement and completeTurn gives it back (@yumina/conversations);
 * the other routes that write a session's messages (regenerate, continue, revert, restore, world
 * actions) take it here. Its expiry is a last resort only: every path releases it at once, a
 * failed reply's settle gives it back in the same statement, and `stop` breaks it from any replica.
 */

export const TURN_LOCK_TTL_MS = TURN_LOCK_TTL_SECONDS * 1000;

export const SESSION_BUSY_MESSAGE = 'A reply is already being written in this session (another tab?). Wait for it, or stop it.';

const LOCK_SQL = {
  name: 'conversations.turn_lock',
  text: `update chat_sessions set turn_token = $3, turn_until = now() + make_interval(secs => $4)
          where id = $1 and account_id = $2 and (turn_token is null or turn_until < now())`,
};

/** Takes the lock of a session the account owns (check ownership first: a busy session answers 409); its token. */
export async function acquireTurnLock(ctx: AppContext, accountId: string, sessionId: string): Promise<string> {
  const token = randomUUID();
  const { rowCount } = await ctx.db.primary.query(LOCK_SQL, [sessionId, accountId, token, TURN_LOCK_TTL_SECONDS]);
  if (!rowCount) throw new HttpError(409, 'SESSION_BUSY', SESSION_BUSY_MESSAGE);
  return token;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Gives the lock back when `token` still holds it, retried with backoff (a database that just
 * dropped its connections usually answers again within seconds; what still fails expires).
 */
export async function releaseTurnLock(ctx: AppContext, sessionId: string, token: string, attempts = 6): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      await releaseTurn(ctx.db.primary, { sessionId, lockToken: token });
      return;
    } catch (err) {
      ctx.log.warn({ err, sessionId, attempt }, 'could not release a turn lock yet');
      if (attempt < attempts - 1) await sleep(100 * 2 ** attempt);
    }
  }
}

/** `stop` (after the ownership check): breaks the session's lock whoever holds it (the running turn, if any, was told to stop). */
export async function breakTurnLock(ctx: AppContext, accountId: string, sessionId: string): Promise<void> {
  await ctx.db.primary.query(`update chat_sessions set turn_token = null, turn_until = null where id = $1 and account_id = $2`, [sessionId, accountId]);
}

/**
 * Ends a reply as `failed` with the text received so far, and gives the turn's lock back in the
 * same statement (when `lock` is given). Retried with backoff (a database that just dropped its
 * connections or a pool that timed out usually answers again within seconds); what still fails is
 * settled by the next turn of the session or by maintenance, once the lock has expired.
 */
export async function markReplyFailed(
  ctx: AppContext,
  messageId: string,
  partial: string,
  message: string,
  attempts = 6,
  lock?: { sessionId: string; token: string },
): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      await releaseTurn(ctx.db.primary, { sessionId: lock?.sessionId ?? null, lockToken: lock?.token ?? null, failedReply: { id: messageId, partial, message } });
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

/** Maintenance: replies left `streaming` by a turn that no longer runs, in sessions whose lock is free or expired, end as `failed`. */
export async function settleStaleReplies(ctx: AppContext, olderThanSeconds = 60): Promise<number> {
  return settleAbandonedReplies(ctx.db.primary, olderThanSeconds);
}
