/**
 * A room's data and operations for its page (docs/ROOMS.md): the snapshot (GET /api/rooms/:id),
 * kept live by the room's event stream (an EventSource: it resumes after the last event it saw,
 * on this replica or another, with Last-Event-ID), and the member's and the host's actions.
 * A `room` event is applied only when its status is newer than the one shown; `reset` and `sync`
 * read the room again; `removed` ends the stream and says so.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiError } from '../lib/api.ts';
import type { Toast, WorldData } from '../player/player-types.ts';
import { newerRoom, type Streaming, withDelta, withMessage, withReplyStarted, withRoomStatus } from './room-events.ts';
import type { Invite, Member, QueuedMessage, RoomMessage, RoomSnapshot, RoomState, RoomStatus } from './room-types.ts';

export type { Streaming };

export type Connection = 'connecting' | 'live' | 'reconnecting';

const ROOM_EVENTS = ['room', 'members', 'reply:start', 'delta', 'reasoning', 'reply:done', 'reply:error', 'state', 'sync', 'typing', 'removed', 'reset'] as const;
/** How long "is writing" shows after the last typing signal. */
const TYPING_SHOWN_MS = 4000;
/** How often this page sends its own typing signal while the member writes. */
const TYPING_EVERY_MS = 2500;

const roomPath = (id: string, ...rest: string[]) => `/api/rooms/${encodeURIComponent(id)}${rest.map((r) => `/${encodeURIComponent(r)}`).join('')}`;

export function useRoom(roomId: string) {
  const [snap, setSnap] = useState<RoomSnapshot | null>(null);
  const [world, setWorld] = useState<WorldData | null>(null);
  const [streaming, setStreaming] = useState<Streaming | null>(null);
  const [typing, setTyping] = useState<Record<string, number>>({});
  const [removed, setRemoved] = useState(false);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [invites, setInvites] = useState<Invite[] | null>(null);
  /** The composer's text (the world's interface may fill it: setComposerDraft). */
  const [draft, setDraft] = useState('');
  const [toasts, setToasts] = useState<Toast[]>([]);
  const toastId = useRef(0);
  const toast = useCallback((message: string, kind: Toast['kind'] = 'info') => {
    const id = ++toastId.current;
    setToasts((list) => [...list.slice(-4), { id, message, kind }]);
    window.setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), 8000);
  }, []);
  /** Where the live stream starts: bumped (with a new event id) when the room is read again after `reset`. */
  const [streamFrom, setStreamFrom] = useState<{ after: string; n: number } | null>(null);
  const snapRef = useRef<RoomSnapshot | null>(null);
  snapRef.current = snap;

  /** Reads the room again; `restream` opens a new live stream after its event id (after `reset`). */
  const reload = useCallback(
    async (restream = false) => {
      try {
        const next = await api<RoomSnapshot>(roomPath(roomId));
        setSnap((shown) => newerRoom(shown, next));
        const replying = next.messages.find((m) => m.status === 'streaming');
        setStreaming((s) => (replying ? (s?.messageId === replying.id ? s : { messageId: replying.id, base: '', text: replying.content }) : null));
        if (restream) setStreamFrom((f) => ({ after: next.eventId, n: (f?.n ?? 0) + 1 }));
        return next;
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          if (snapRef.current) setRemoved(true);
          else setMissing(true);
        } else setError((err as Error).message);
        return null;
      }
    },
    [roomId],
  );

  useEffect(() => {
    let live = true;
    setSnap(null);
    setWorld(null);
    setRemoved(false);
    setMissing(false);
    void reload().then((first) => {
      if (live && first) setStreamFrom({ after: first.eventId, n: 0 });
    });
    api<WorldData>(roomPath(roomId, 'world')).then(
      (w) => live && setWorld(w),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [roomId, reload]);

  const handle = useCallback(
    (type: (typeof ROOM_EVENTS)[number], data: Record<string, unknown>) => {
      switch (type) {
        case 'room': {
          setSnap((s) => withRoomStatus(s, data.room as RoomStatus, data.queue as QueuedMessage[]));
          break;
        }
        case 'members':
          setSnap((s) => (s ? { ...s, members: data.members as Member[] } : s));
          break;
        case 'reply:start': {
          const messageId = data.messageId as string;
          const round = (data.round as RoomMessage[]) ?? [];
          const redo = data.redo as 'regenerate' | 'continue' | undefined;
          const existing = snapRef.current?.messages.find((m) => m.id === messageId);
          setStreaming({ messageId, base: redo === 'continue' ? (existing?.content ?? '') : '', text: '' });
          setSnap((s) => withReplyStarted(s, messageId, (data.position as number | undefined) ?? null, round));
          break;
        }
        case 'delta': {
          const at = data.at as number;
          const text = data.text as string;
          setStreaming((s) => withDelta(s, data.messageId as string, at, text));
          break;
        }
        case 'reply:done': {
          const message = data.message as RoomMessage | null;
          setStreaming(null);
          setSnap((s) => (s ? { ...s, messages: message ? withMessage(s.messages, message) : s.messages, session: { ...s.session, state: (data.state as RoomState) ?? s.session.state } } : s));
          break;
        }
        case 'reply:error':
          // the failure sits on the round's last message: the room as it is now shows it, with the host's retry
          setStreaming(null);
          void reload();
          break;
        case 'state':
          setSnap((s) => (s ? { ...s, session: { ...s.session, state: data.state as RoomState } } : s));
          break;
        case 'sync':
          void reload();
          break;
        case 'typing':
          setTyping((t) => ({ ...t, [data.participantId as string]: Date.now() + TYPING_SHOWN_MS }));
          break;
        default:
          break;
      }
    },
    [reload],
  );

  // The live stream: EventSource reconnects by itself after a drop (sending Last-Event-ID); when it gives up (an error answer), it is opened again after the last event seen.
  useEffect(() => {
    if (!streamFrom || removed) return;
    let source: EventSource | null = null;
    let stopped = false;
    let retry: number | undefined;
    let lastId = streamFrom.after;
    const open = () => {
      setConnection((c) => (c === 'live' ? 'reconnecting' : c));
      const es = new EventSource(`${roomPath(roomId, 'events')}?after=${encodeURIComponent(lastId)}`);
      source = es;
      es.onopen = () => setConnection('live');
      es.onerror = () => {
        if (stopped) return;
        setConnection('reconnecting');
        if (es.readyState === EventSource.CLOSED) {
          window.clearTimeout(retry);
          retry = window.setTimeout(open, 2000);
        }
      };
      for (const type of ROOM_EVENTS) {
        es.addEventListener(type, (e) => {
          const event = e as MessageEvent<string>;
          if (event.lastEventId) lastId = event.lastEventId;
          if (type === 'removed') {
            stopped = true;
            es.close();
            setRemoved(true);
            return;
          }
          if (type === 'reset') {
            stopped = true;
            es.close();
            void reload(true);
            return;
          }
          handle(type, JSON.parse(event.data || '{}') as Record<string, unknown>);
        });
      }
    };
    open();
    return () => {
      stopped = true;
      window.clearTimeout(retry);
      source?.close();
    };
  }, [roomId, streamFrom, removed, handle, reload]);

  // "is writing" fades out on its own.
  useEffect(() => {
    const ids = Object.keys(typing);
    if (ids.length === 0) return;
    const next = Math.min(...Object.values(typing)) - Date.now();
    const timer = window.setTimeout(() => setTyping((t) => Object.fromEntries(Object.entries(t).filter(([, until]) => until > Date.now()))), Math.max(50, next));
    return () => window.clearTimeout(timer);
  }, [typing]);

  /** Runs a request, showing its refusal; resolves with its answer or null. */
  const run = useCallback(async <T,>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T | null> => {
    setError(null);
    try {
      return await api<T>(path, init);
    } catch (err) {
      setError((err as Error).message);
      return null;
    }
  }, []);

  const lastTyping = useRef(0);
  const me = snap?.me;
  const loadInvites = useCallback(async () => {
    const r = await run<{ invites: Invite[] }>(roomPath(roomId, 'invites'));
    if (r) setInvites(r.invites);
  }, [roomId, run]);

  return {
    roomId,
    snap,
    world,
    streaming,
    /** Who else is writing (this member's own signal is not shown back to them). */
    typing: Object.keys(typing).filter((id) => id !== me?.participantId),
    removed,
    missing,
    error,
    setError,
    connection,
    invites,
    draft,
    setDraft,
    toasts,
    toast,
    reload,
    /** Shows the state the platform answered an interface's action with (the stream brings the same to everyone). */
    showState(state: RoomState) {
      setSnap((s) => (s ? { ...s, session: { ...s.session, state } } : s));
    },
    isHost: me?.role === 'host' || me?.role === 'owner',
    async send(content: string): Promise<boolean> {
      return (await run(roomPath(roomId, 'messages'), { json: { content } })) !== null;
    },
    typed() {
      if (Date.now() - lastTyping.current < TYPING_EVERY_MS) return;
      lastTyping.current = Date.now();
      void api(roomPath(roomId, 'typing'), { method: 'POST' }).catch(() => {});
    },
    takeBack: (queuedId: string) => run(roomPath(roomId, 'queue', queuedId), { method: 'DELETE' }),
    replyNow: () => run(roomPath(roomId, 'reply'), { method: 'POST' }),
    regenerate: () => run(roomPath(roomId, 'regenerate'), { method: 'POST' }),
    continueReply: () => run(roomPath(roomId, 'continue'), { method: 'POST' }),
    stop: () => run(roomPath(roomId, 'stop'), { method: 'POST' }),
    passTurn: (participantId?: string) => run(roomPath(roomId, 'turn'), { json: participantId ? { participantId } : {} }),
    async setModes(settings: { triggerMode?: string; speechMode?: string; timerSeconds?: number }) {
      const next = await run<RoomSnapshot>(roomPath(roomId), { method: 'PATCH', json: settings });
      if (next) setSnap((s) => newerRoom(s, next));
    },
    end: () => run(roomPath(roomId, 'end'), { method: 'POST' }).then(() => reload()),
    leave: () => run(roomPath(roomId, 'leave'), { method: 'POST' }),
    kick: (participantId: string, bar: boolean) => run(`${roomPath(roomId, 'members', participantId)}?bar=${bar}`, { method: 'DELETE' }),
    setRole: (participantId: string, role: 'player' | 'spectator') => run(roomPath(roomId, 'members', participantId), { method: 'PATCH', json: { role } }),
    loadInvites,
    /** The host's changes to the conversation, through the session's own routes (every member reads the room again: `sync`). */
    async session(parts: string[], method: string, json?: unknown): Promise<boolean> {
      const sessionId = snapRef.current?.session.id;
      if (!sessionId) return false;
      const done = await run(`/api/sessions/${[sessionId, ...parts].map(encodeURIComponent).join('/')}`, { method, ...(json === undefined ? {} : { json }) });
      if (done !== null) await reload();
      return done !== null;
    },
    async createInvite(role: 'player' | 'spectator', hours?: number): Promise<string | null> {
      const r = await run<{ url: string }>(roomPath(roomId, 'invites'), { json: { role, ...(hours ? { hours } : {}) } });
      void loadInvites();
      return r?.url ?? null;
    },
    async revokeInvite(inviteId: string) {
      await run(roomPath(roomId, 'invites', inviteId), { method: 'DELETE' });
      void loadInvites();
    },
  };
}

export type RoomHandle = ReturnType<typeof useRoom>;
