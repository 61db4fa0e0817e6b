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
 * Writes the end of a turn, retried with backoff: a database that just dropped its connections or a
 * pool that timed out usually answers again within seconds; what still fails is settled by the next
 * turn of the session or by maintenance, once the lock has expired. True once written.
 */
async function retried(ctx: AppContext, attempts: number, about: { sessionId: string | null; messageId?: string }, what: string, write: () => Promise<unknown>): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      await write();
      return true;
    } catch (err) {
      ctx.log.warn({ err, ...about, attempt }, `could not end ${what} yet`);
      if (attempt < attempts - 1) await sleep(100 * 2 ** attempt);
    }
  }
  return false;
}

/** Gives the lock back when `token` still holds it (@yumina/conversations' releaseTurn). */
export async function releaseTurnLock(ctx: AppContext, sessionId: string, token: string, attempts = 6): Promise<void> {
  await retried(ctx, attempts, { sessionId }, 'a turn', () => releaseTurn(ctx.db.primary, { sessionId, lockToken: token }));
}

/** `stop` (after the ownership check): breaks the session's lock whoever holds it (the running turn, if any, was told to stop). */
export async function breakTurnLock(ctx: AppContext, accountId: string, sessionId: string): Promise<void> {
  await breakTurn(ctx.db.primary, { sessionId, accountId });
}

/**
 * Ends a turn that failed (@yumina/conversations' failTurn: the failure goes on the player's
 * message, a new reply is removed, a regenerated or continued one stays as it was) and gives the
 * lock back. True once written.
 */
export async function markTurnFailed(ctx: AppContext, input: Parameters<typeof failTurn>[1], attempts = 6): Promise<boolean> {
  return retried(ctx, attempts, { sessionId: input.sessionId, messageId: input.replyId }, 'a failed turn', () => failTurn(ctx.db.primary, input));
}

/** Replies of a session still `streaming` while its lock is held by the caller (the turn's SQL lives in @yumina/conversations). */
export { settleStreamingReplies };

/** Maintenance: replies left `streaming` by a turn that no longer runs, in sessions whose lock is free or expired, end as `failed`. */
export async function settleStaleReplies(ctx: AppContext, olderThanSeconds = 60): Promise<number> {
  return settleAbandonedReplies(ctx.db.primary, olderThanSeconds);
}
