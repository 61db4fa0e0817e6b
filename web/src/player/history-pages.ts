import { type CSSProperties, type UIEvent, useCallback, useLayoutEffect, useRef, useState } from 'react';
import { api } from '../lib/api.ts';

/** What GET /api/sessions/:id answers: the newest page of messages and the cursor for the page before it. */
export interface HistoryPage<M> {
  session: { id: string };
  messages: M[];
  history?: { earlierCursor: string | null };
}

interface Earlier<M> {
  sessionId: string | null;
  messages: M[];
  cursor: string | null;
}

/** How many messages one scroll back loads. */
export const EARLIER_PAGE_SIZE = 100;
/** Closer than this to the top of the conversation (px), the page before loads. */
const NEAR_TOP_PX = 200;

/**
 * Scrolls a list to its end in the next frame, before it is painted: reading its height lays the
 * page out, which there is the frame's own layout, not a second one forced inside React's commit
 * (on opening the player that was most of the longest task on a phone). Returns the cancel.
 */
function toEnd(list: HTMLElement | null): (() => void) | undefined {
  if (!list) return undefined;
  const frame = requestAnimationFrame(() => {
    list.scrollTop = list.scrollHeight;
  });
  return () => cancelAnimationFrame(frame);
}

/**
 * Earlier messages of a long session, loaded as the reader scrolls up (issue 24). The session
 * routes answer only the newest page; this keeps the pages loaded before it and merges them with
 * each newer page by position. When the newest page no longer follows on from them (messages
 * were added or removed), the loaded pages are dropped and load again on the next scroll up.
 * Returns the merged messages and the props of the scrolling list: it opens at the bottom, stays
 * at the bottom as the newest page changes, and keeps the reader's place when a page is prepended.
 */
export function useHistoryPages<M extends { id: string; position: number }>(page: HistoryPage<M> | null) {
  const [earlier, setEarlier] = useState<Earlier<M>>({ sessionId: null, messages: [], cursor: null });
  const [loading, setLoading] = useState(false);
  const listRef = useRef<HTMLOListElement | null>(null);
  const anchor = useRef<{ height: number; top: number } | null>(null);

  const sessionId = page?.session.id ?? null;
  const newest = page?.messages ?? [];
  const first = newest[0]?.position;
  let kept = earlier.sessionId === sessionId ? earlier.messages.filter((m) => first === undefined || m.position < first) : [];
  if (kept.length && first !== undefined && kept[kept.length - 1]!.position + 1 !== first) kept = [];
  const cursor = kept.length ? earlier.cursor : (page?.history?.earlierCursor ?? null);
  const messages = kept.length ? [...kept, ...newest] : newest;

  const state = useRef({ sessionId, cursor, kept, loading });
  state.current = { sessionId, cursor, kept, loading };

  const loadEarlier = useCallback(async () => {
    const { sessionId: id, cursor: before, kept: loaded, loading: busy } = state.current;
    if (!id || !before || busy) return;
    setLoading(true);
    try {
      const older = await api<HistoryPage<M>>(`/api/sessions/${encodeURIComponent(id)}?before=${encodeURIComponent(before)}&limit=${EARLIER_PAGE_SIZE}`);
      const list = listRef.current;
      anchor.current = list ? { height: list.scrollHeight, top: list.scrollTop } : null;
      setEarlier({ sessionId: id, messages: [...older.messages, ...loaded], cursor: older.history?.earlierCursor ?? null });
    } finally {
      setLoading(false);
    }
  }, []);

  // A prepended page keeps what the reader was looking at in place.
  useLayoutEffect(() => {
    const list = listRef.current;
    if (!list || !anchor.current) return;
    list.scrollTop = anchor.current.top + (list.scrollHeight - anchor.current.height);
    anchor.current = null;
  }, [earlier]);
  // The newest page (opening, a reply, an edit): the conversation shows its end.
  useLayoutEffect(() => toEnd(listRef.current), [page]);

  const onScroll = useCallback(
    (event: UIEvent<HTMLElement>) => {
      if (event.currentTarget.scrollTop < NEAR_TOP_PX) void loadEarlier();
    },
    [loadEarlier],
  );
  // The list mounts (after the page arrived, once the world is loaded too): it opens at the bottom.
  const ref = useCallback((list: HTMLOListElement | null) => {
    listRef.current = list;
    toEnd(list);
  }, []);
  // A scrolling region: focusable (tabIndex 0) so that keyboard readers scroll it too.
  const style: CSSProperties = { maxHeight: '70vh', overflowY: 'auto' };

  return { messages, hasEarlier: !!cursor, loadingEarlier: loading, loadEarlier, listProps: { ref, onScroll, style, tabIndex: 0 } };
}
