import type { DbPool, Queryable } from '@yumina/db';
import { HttpError, parseWith } from '@yumina/http';
import { z } from 'zod';
import { messageForViewer, stateForViewer } from '@yumina/conversations';
import { memberSession, type MessageRow, messageView, ownedSession, type SessionRow, sessionView } from './model.ts';

/**
 * Long sessions open fast (issue 24): a session is read a page of messages at a time, newest
 * first, by keyset on `position` (the unique (session_id, position) index), never the whole
 * history. The page's messages carry their text and state snapshot; the alternatives (swipes,
 * each with a snapshot of its own) only on the session's newest message, where the player offers
 * them; any other message's swipes load on demand (GET /api/sessions/:id/messages/:messageId).
 */
export const HISTORY_PAGE_SIZE = 50;
export const HISTORY_PAGE_MAX = 200;

export const historyPageQuery = z.object({
  /** Messages before this position (the `earlierCursor` of the page after). */
  before: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
  limit: z.coerce.number().int().min(1).max(HISTORY_PAGE_MAX).default(HISTORY_PAGE_SIZE),
});
export type HistoryPageQuery = z.infer<typeof historyPageQuery>;

/** A message in a page: the full view, with the swipes of anything but the newest message left for later. */
export function pageMessageView(m: MessageRow, newest: boolean) {
  const view = messageView(newest ? m : { ...m, swipes: '[]' });
  return { ...view, swipeCount: newest ? view.swipes.length : (JSON.parse(m.swipes) as unknown[]).length, swipesLoaded: newest };
}

/**
 * One page of a session the account owns: `{ session, messages, history }`, messages oldest first
 * as before; `history.earlierCursor` (the first message's position) fetches the page before it,
 * null when the page reaches the start. With `member`, a room's page for any of its members, each
 * state with only the viewer's own per-player values (docs/ROOMS.md).
 */
export async function sessionPage(db: DbPool, sessionId: string, accountId: string, query: HistoryPageQuery = { limit: HISTORY_PAGE_SIZE }, member = false) {
  // One snapshot for both reads: read apart, a turn committing between them would pair the
  // session's state from before the turn with the reply from after it.
  const { session, rows, newest } = await db.transaction(
    async (tx) => {
      const session: SessionRow = member ? await memberSession(tx, sessionId, accountId) : await ownedSession(tx, sessionId, accountId);
      const params: unknown[] = [sessionId, query.limit + 1];
      if (query.before !== undefined) params.push(query.before);
      const { rows } = await tx.query<MessageRow & Record<string, unknown>>(
        `select * from chat_messages where session_id = $1${query.before !== undefined ? ' and position < $3' : ''}
          order by position desc limit $2`,
        params,
      );
      // An earlier page does not hold the newest message, which decides whether choices are pending.
      const newest =
        query.before === undefined
          ? rows[0]
          : (await tx.query<Pick<MessageRow, 'role' | 'status'>>('select role, status from chat_messages where session_id = $1 order by position desc limit 1', [sessionId])).rows[0];
      return { session, rows, newest };
    },
    { snapshot: true },
  );
  const more = rows.length > query.limit;
  const page = rows.slice(0, query.limit).reverse();
  const newestPosition = query.before === undefined ? page[page.length - 1]?.position : undefined;
  const view = sessionView(session);
  // Choices are pending only while the reply that offered them is the newest message, complete:
  // once the player answered (a message after it, or a reply to it still being written or failed) they are not.
  const state = view.state as { pendingChoices?: unknown } | null;
  if (state && Array.isArray(state.pendingChoices) && state.pendingChoices.length > 0 && !(newest?.role === 'assistant' && newest.status === 'complete')) {
    state.pendingChoices = [];
  }
  const messages = page.map((m) => pageMessageView(m, m.position === newestPosition));
  // a room's states carry only the viewer's own per-player values, the host's included
  const room = member || session.is_room === true;
  return {
    session: room ? { ...view, state: stateForViewer(view.state, accountId) } : view,
    messages: room ? messages.map((m) => messageForViewer(m, accountId)) : messages,
    history: { earlierCursor: more && page[0] ? String(page[0].position) : null, limit: query.limit },
  };
}

/** The query string of GET /api/sessions/:id, validated (a 400 for a bad cursor or limit). */
export const parseHistoryPageQuery = (query: unknown): HistoryPageQuery => parseWith(historyPageQuery, query, 'query');

/** One message in full (its swipes and state snapshot), for a message outside the newest. */
export async function sessionMessage(db: Queryable, sessionId: string, messageId: string, accountId: string, member = false) {
  const session = await (member ? memberSession(db, sessionId, accountId) : ownedSession(db, sessionId, accountId));
  const { rows } = await db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where session_id = $1 and id = $2', [sessionId, messageId]);
  if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such message.');
  const view = { ...messageView(rows[0]), swipeCount: (JSON.parse(rows[0].swipes) as unknown[]).length, swipesLoaded: true };
  return { message: member || session.is_room ? messageForViewer(view, accountId) : view };
}
