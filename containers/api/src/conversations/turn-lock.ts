import { randomUUID } from 'node:crypto';
import { breakTurn, failTurn, lockTurn, releaseTurn, settleAbandonedReplies, settleStreamingReplies } from '@yumina/conversations';
import { HttpError } from '@yumina/http';
import type { AppContext } from '../context.ts';

/**
 * The turn lock of a conversation (one reply written at a time) and what settles a turn that
 * failed. The lock is a token on the session's row (chat_sessions.turn_token, turn_until; its SQL
 * is @yumina/conversations'): the send path takes it in startTurn's statement and completeTurn
 * gives it back; the other routes that write a session's messages (regenerate, continue, revert,
 * restore, world actions) take it here. Its expiry is a last resort only: every path releases it
 * at once, a failed reply's settle gives it back in the same statement, and `stop` breaks it from
 * any replica.
 */

export const SESSION_BUSY_MESSAGE = 'A reply is already being written in this session (another tab?). Wait for it, or stop it.';

/** Takes the lock of a session the account owns (check ownership first: a busy session answers 409); its token. */
export async function acquireTurnLock(ctx: AppContext, accountId: string, sessionId: string): Promise<string> {
  const token = randomUUID();
  if (!(await lockTurn(ctx.db.primary, { sessionId, accountId, lockToken: token }))) throw new HttpError(409, 'SESSION_BUSY', SESSION_BUSY_MESSAGE);
  return token;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends a turn that did not complete (@yumina/conversations' releaseTurn), retried with backoff: a
 * database that just dropped its connections or a pool that timed out usually answers again within
 * seconds; what still fails is settled by the next turn of the session or by maintenance, once the
 * lock has expired. True once written.
 */
async function endTurn(ctx: AppContext, input: Parameters<typeof releaseTurn>[1], attempts: number): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      await releaseTurn(ctx.db.primary, input);
      return true;
    } catch (err) {
      ctx.log.warn({ err, sessionId: input.sessionId, messageId: input.failedReply?.id, attempt }, 'could not end a turn yet');
      if (attempt < attempts - 1) await sleep(100 * 2 ** attempt);
    }
  }
  return false;
}

/** Gives the lock back when `token` still holds it. */
export async function releaseTurnLock(ctx: AppContext, sessionId: string, token: string, attempts = 6): Promise<void> {
  await endTurn(ctx, { sessionId, lockToken: token }, attempts);
}

/** `stop` (after the ownership check): breaks the session's lock whoever holds it (the running turn, if any, was told to stop). */
export async function breakTurnLock(ctx: AppContext, accountId: string, sessionId: string): Promise<void> {
  await breakTurn(ctx.db.primary, { sessionId, accountId });
}

/** Ends a reply as `failed` with the text received so far, and gives the turn's lock back in the same statement (when `lock` is given). */
export async function markReplyFailed(
  ctx: AppContext,
  messageId: string,
  partial: string,
  message: string,
  attempts = 6,
  lock?: { sessionId: string; token: string },
): Promise<boolean> {
  return endTurn(ctx, { sessionId: lock?.sessionId ?? null, lockToken: lock?.token ?? null, failedReply: { id: messageId, partial, message } }, attempts);
}

/**
 * Ends a turn that failed (@yumina/conversations' failTurn: the failure goes on the player's
 * message, a new reply is removed, a regenerated or continued one stays as it was) and gives the
 * lock back, retried with backoff as `endTurn` is. True once written.
 */
export async function markTurnFailed(ctx: AppContext, input: Parameters<typeof failTurn>[1], attempts = 6): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      await failTurn(ctx.db.primary, input);
      return true;
    } catch (err) {
      ctx.log.warn({ err, sessionId: input.sessionId, messageId: input.replyId, attempt }, 'could not end a failed turn yet');
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
