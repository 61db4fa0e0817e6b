/**
 * Deleting a message with a few seconds to undo it (issue 50), instead of a confirmation first:
 * the message and those after it leave the chat at once and a notice offers Undo; the server is
 * asked to delete only when the time is up, or before anything else changes the session (a send,
 * a regenerate, an edit: the player hook waits for it), or as the page goes away. Undo asks the
 * server nothing: no data is lost before the delete is certain.
 */
import { apiPath } from '@yumina/sandbox';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Player } from './use-player.ts';

/** How long the Undo stays offered. */
export const UNDO_MS = 7000;

export interface PendingDelete {
  sessionId: string;
  messageId: string;
  /** The deleted message's place: it and every later message are hidden meanwhile. */
  position: number;
  /** How many messages go. */
  count: number;
}

export function useDelayedDelete(p: Player) {
  const [pending, setPending] = useState<PendingDelete | null>(null);
  const ref = useRef<PendingDelete | null>(null);
  const timer = useRef<number | undefined>(undefined);
  const { refresh, loadSessions, setError, setBeforeChange } = p;
  const open = useRef<string | undefined>(undefined);
  open.current = p.data?.session.id;

  /** Sends the pending delete now (once), and shows the session as the server has it. */
  const commit = useCallback(async () => {
    const d = ref.current;
    if (!d) return;
    ref.current = null;
    window.clearTimeout(timer.current);
    try {
      const res = await fetch(apiPath('sessions', d.sessionId, 'messages', d.messageId), { method: 'DELETE', credentials: 'same-origin' });
      if (!res.ok) {
        const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        setError(err?.error?.message ?? `The delete failed (${res.status}).`);
      }
      if (open.current === d.sessionId) await refresh(d.sessionId).catch(() => {});
      void loadSessions().catch(() => {});
    } finally {
      setPending((now) => (now === d ? null : now));
    }
  }, [refresh, loadSessions, setError]);

  const remove = useCallback(
    (d: PendingDelete) => {
      void commit(); // an earlier one still pending goes first
      ref.current = d;
      setPending(d);
      timer.current = window.setTimeout(() => void commit(), UNDO_MS);
    },
    [commit],
  );

  const undo = useCallback(() => {
    window.clearTimeout(timer.current);
    ref.current = null;
    setPending(null);
  }, []);

  // Anything else that changes the session waits for the delete first (../player/use-player.ts).
  useEffect(() => {
    setBeforeChange(commit);
    return () => setBeforeChange(null);
  }, [commit, setBeforeChange]);
  // The page goes away (closed, reloaded, another page): the delete is sent as it leaves.
  useEffect(() => {
    const leave = () => {
      const d = ref.current;
      if (!d) return;
      ref.current = null;
      void fetch(apiPath('sessions', d.sessionId, 'messages', d.messageId), { method: 'DELETE', credentials: 'same-origin', keepalive: true });
    };
    window.addEventListener('pagehide', leave);
    return () => {
      window.removeEventListener('pagehide', leave);
      leave(); // the player left the page inside the app
    };
  }, []);

  return { pending, remove, undo, commit };
}
