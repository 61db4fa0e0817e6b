import { HttpError } from '@yumina/http';
import type { AppContext } from '../../containers/api/src/context.ts';

/**
 * bench/turn.bench.ts only: the frozen baseline of the turn lock that bench/legacy/turn-route.ts
 * takes, copied from containers/api/src/conversations/turn-lock.ts as it was before the lock became
 * one store round trip keyed by account: the lock keyed by session plus its holder key written
 * beside it (two round trips to acquire), released by token; and the retried `markReplyFailed`.
 * Only what the legacy route uses; do not update it with the live code.
 */

const TURN_LOCK_TTL_MS = 180_000;
const lockKey = (sessionId: string) => `chat:${sessionId}`;
const holderKey = (sessionId: string) => `chat:holder:${sessionId}`;

const SESSION_BUSY_MESSAGE = 'A reply is already being written in this session (another tab?). Wait for it, or stop it.';

export async function acquireTurnLock(ctx: AppContext, sessionId: string): Promise<string> {
  const token = await ctx.store.acquireLock(lockKey(sessionId), TURN_LOCK_TTL_MS);
  if (!token) throw new HttpError(409, 'SESSION_BUSY', SESSION_BUSY_MESSAGE);
  await ctx.store.set(holderKey(sessionId), token, TURN_LOCK_TTL_MS / 1000).catch(() => {});
  return token;
}

export async function releaseTurnLock(ctx: AppContext, sessionId: string, token: string): Promise<void> {
  await ctx.store.releaseLock(lockKey(sessionId), token).catch(() => false);
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
