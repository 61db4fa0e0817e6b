/**
 * The player's data and operations: the world, the open session with its messages and checkpoints,
 * the world's other sessions, the player's preferences, streaming generations, interface actions
 * and events, and the engine's effects (notifications, audio, AI requests) after each of them.
 * The default chat and the sandbox host both drive the session through this hook.
 */
import { apiPath, type AssetScope, resolveAssetUrl } from '@yumina/sandbox';
import { playlistStart } from '@yumina/world';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api } from '../lib/api.ts';
import { chosenSession, playerUrls, sessionUrls } from '../lib/player-reads.ts';
import { navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useAssetScope } from './asset-access.ts';
import { AudioDirector, type AudioCommand, browserAudio } from './audio.ts';
import type { Checkpoint, EngineEffects, PlayerPreferences, PlayerSession, SessionData, Toast, WorldData } from './player-types.ts';
import { readEvents } from './event-stream.ts';
import { loadPreview, previewTurn, SignInRequired } from './guest-preview.ts';
import type { SandboxCapabilities } from '@yumina/sandbox';
import { refreshHeader } from '../shell/header-data.ts';

export interface Persona {
  id: string;
  name: string;
  avatar: string | null;
  active: boolean;
}

const VOLUME_KEY = 'yumina:player-volume';
/** No choices pending (one array, so the interface's state does not change when nothing did). */
const NO_CHOICES: string[] = [];

function storedVolumes(): { bgm: number; sfx: number } {
  try {
    const v = JSON.parse(window.localStorage.getItem(VOLUME_KEY) ?? 'null') as { bgm?: number; sfx?: number } | null;
    return { bgm: typeof v?.bgm === 'number' ? v.bgm : 0.8, sfx: typeof v?.sfx === 'number' ? v.sfx : 1 };
  } catch {
    return { bgm: 0.8, sfx: 1 };
  }
}

/** How often a turn refused as busy is sent again before the refusal is shown. */
const BUSY_RETRIES = 3;
/** Whether an answer is the server's load-shedding refusal (nothing was started). */
async function isBusy(res: Response): Promise<boolean> {
  if (res.status !== 503) return false;
  const body = (await res.clone().json().catch(() => null)) as { error?: { code?: string } } | null;
  return body?.error?.code === 'SERVER_BUSY';
}

/** A session and its checkpoints, read together (the paths preloadPlayer reads them by). */
async function readSession(id: string): Promise<{ session: SessionData; checkpoints: Checkpoint[] }> {
  const urls = sessionUrls(id);
  const [session, cps] = await Promise.all([api<SessionData>(urls.session), api<{ checkpoints: Checkpoint[] }>(urls.checkpoints)]);
  return { session, checkpoints: cps.checkpoints };
}

export function usePlayer(worldId: string) {
  const { loading, info } = useSession();
  const [world, setWorld] = useState<WorldData | null>(null);
  const [data, setData] = useState<SessionData | null>(null);
  const [checkpoints, setCheckpoints] = useState<Checkpoint[]>([]);
  const [sessions, setSessions] = useState<PlayerSession[]>([]);
  const [prefs, setPrefs] = useState<PlayerPreferences | null>(null);
  const [persona, setPersona] = useState<Persona | null>(null);
  const [streaming, setStreaming] = useState('');
  const [reasoning, setReasoning] = useState('');
  const [busy, setBusy] = useState(false);
  /** The player's message shown at once while the server stores it and the reply starts. */
  const [pendingUser, setPendingUser] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [toasts, setToasts] = useState<Toast[]>([]);
  /** Every notification of this visit, newest first, for the player who missed a toast. */
  const [notificationLog, setNotificationLog] = useState<Toast[]>([]);
  const [draft, setDraft] = useState('');
  /** The newest message when the last send, regenerate or continue began: its choices were answered (until the session is read again). */
  const [answered, setAnswered] = useState<unknown>(null);
  const [canvasMode, setCanvasMode] = useState<'chat' | 'custom' | 'fullscreen'>('chat');
  const [volumes, setVolumes] = useState(storedVolumes);
  const [nowPlaying, setNowPlaying] = useState<{ trackId: string; kind: string }[]>([]);
  /** Set in guest preview (a published world without an account): what the guest may do. */
  const [guest, setGuest] = useState<SandboxCapabilities | null>(null);
  const guestRef = useRef<SandboxCapabilities | null>(null);
  guestRef.current = guest;
  const dataRef = useRef<SessionData | null>(null);
  dataRef.current = data;
  const sessionRef = useRef<string | undefined>(undefined);
  sessionRef.current = data?.session.id;
  const audioRef = useRef<AudioDirector | null>(null);
  const toastId = useRef(0);
  const volumesRef = useRef(volumes);
  volumesRef.current = volumes;
  const assetScope = useAssetScope(world?.id ?? null);
  const assetScopeRef = useRef<AssetScope | null>(null);
  assetScopeRef.current = assetScope;
  // Set below: a generation the engine asked for (@ai.request) is sent like the player's own message.
  const aiRequestRef = useRef<(text: string) => void>(() => {});
  /** True while the reply the engine asked for (@ai.request) is written: its own requests are not acted on (no endless chain). */
  const answeringAiRequest = useRef(false);
  /** Waited for before anything changes the session (a delete still offering Undo is sent first: ./delayed-delete.ts). */
  const beforeChange = useRef<(() => Promise<void>) | null>(null);
  const setBeforeChange = useCallback((run: (() => Promise<void>) | null) => {
    beforeChange.current = run;
  }, []);

  const toast = useCallback((message: string, kind: Toast['kind'] = 'info') => {
    const id = ++toastId.current;
    setToasts((list) => [...list.slice(-4), { id, message, kind }]);
    setNotificationLog((list) => [{ id, message, kind }, ...list].slice(0, 50));
    window.setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), 8000);
  }, []);

  /** Notifications become toasts, audio commands play, AI requests start a generation. */
  const applyEffects = useCallback(
    (effects: EngineEffects | undefined) => {
      if (!effects) return;
      for (const n of effects.notifications ?? []) {
        if (typeof n === 'string') toast(n);
        else toast(n.message ?? n.text ?? JSON.stringify(n), (n.style as Toast['kind'] | undefined) ?? 'info');
      }
      audioRef.current?.apply((effects.audioCommands as AudioCommand[] | undefined) ?? []);
      const request = effects.aiRequests?.[0];
      if (request && answeringAiRequest.current) {
        toast('The world asked for another reply right after one it asked for; that request was skipped.', 'warning');
      } else if (request) {
        // One generation per request batch, with the request's text as the player's message.
        const value = request.value as { message?: string; prompt?: string } | string | null;
        aiRequestRef.current(typeof value === 'string' && value.trim() ? value : (typeof value === 'object' && (value?.message ?? value?.prompt)) || 'Continue the story.');
      }
    },
    [toast],
  );

  // The world's music and sounds.
  useEffect(() => {
    if (!world) return;
    const director = new AudioDirector(
      world.world.audioTracks ?? [],
      (url) => resolveAssetUrl(url, assetScopeRef.current ?? { origin: window.location.origin, worldId: world.id, token: null }),
      browserAudio,
    );
    audioRef.current = director;
    const timer = window.setInterval(() => {
      const next = director.state.map((p) => ({ trackId: p.trackId, kind: p.kind }));
      setNowPlaying((before) => (JSON.stringify(before) === JSON.stringify(next) ? before : next));
    }, 300);
    return () => {
      window.clearInterval(timer);
      director.dispose();
      audioRef.current = null;
    };
  }, [world]);
  useEffect(() => {
    audioRef.current?.setChannelVolume('bgm', volumes.bgm);
    audioRef.current?.setChannelVolume('sfx', volumes.sfx);
    window.localStorage.setItem(VOLUME_KEY, JSON.stringify(volumes));
  }, [volumes, world]);

  // Without an account: the guest preview of a published world, else the login page.
  useEffect(() => {
    if (loading || info?.account) return;
    let cancelled = false;
    void loadPreview(worldId).then((preview) => {
      if (cancelled) return;
      if (!preview) {
        navigate(`/login?returnTo=${encodeURIComponent(`/play/${worldId}`)}`);
        return;
      }
      setGuest(preview.capabilities);
      setWorld(preview.world);
      setCanvasMode(preview.world.world.rootComponent ? 'custom' : 'chat');
      setData(preview.data);
    });
    return () => {
      cancelled = true;
    };
  }, [loading, info, worldId]);

  const loadSessions = useCallback(async () => {
    const list = await api<{ sessions: PlayerSession[] }>(playerUrls(worldId).sessions);
    setSessions(list.sessions);
    return list.sessions;
  }, [worldId]);

  const loadPrefs = useCallback(async () => {
    setPrefs(await api<PlayerPreferences>(playerUrls(worldId).preferences));
  }, [worldId]);

  /** Counts reads of the session: only the latest one started is shown (answers can arrive out of order). */
  const refreshes = useRef(0);
  /** Reads the session again and shows it, with `alsoShown` (more state set in the same render), unless a later read started meanwhile. */
  const refresh = useCallback(async (id: string, alsoShown?: () => void) => {
    const seq = ++refreshes.current;
    const { session, checkpoints: cps } = await readSession(id);
    if (seq === refreshes.current) {
      setData(session);
      setCheckpoints(cps);
      alsoShown?.();
    }
    return session;
  }, []);

  /** Music that was playing in this session when it was last left (the playlist or a track). */
  const resumeMusic = useCallback(
    (session: PlayerSession, w: WorldData) => {
      const audio = session.state.audio;
      const director = audioRef.current;
      if (!audio || !director) return;
      if (audio.playlistPlaying) {
        const start = playlistStart(w.world as never, `${session.id}`, 'resume');
        if (start) director.apply([start as AudioCommand]);
      } else if (audio.currentBgm) {
        const track = (w.world.audioTracks ?? []).find((t) => t.id === audio.currentBgm);
        if (track) director.apply([{ action: 'play', trackId: track.id, trackType: track.type }]);
      }
    },
    [],
  );

  const openSession = useCallback(
    async (id: string, w: WorldData | null) => {
      const session = await refresh(id);
      if (w) resumeMusic(session.session, w);
      return session;
    },
    [refresh, resumeMusic],
  );

  /** A new session of this world: its greeting and session-start effects (notifications, music). */
  const createSession = useCallback(async () => {
    await beforeChange.current?.();
    audioRef.current?.dispose();
    const created = await api<SessionData & { start: EngineEffects }>(apiPath('worlds', worldId, 'sessions'), { method: 'POST' });
    setData({ session: created.session, messages: created.messages });
    setCheckpoints([]);
    applyEffects(created.start);
    await loadSessions();
    return created.session;
  }, [worldId, applyEffects, loadSessions]);

  // Opens (or creates) the session once per account and world, however often the session info re-renders.
  const openedFor = useRef<string | null>(null);
  useEffect(() => {
    if (!info?.account) return;
    const key = `${info.account.id}:${worldId}`;
    if (openedFor.current === key) return;
    openedFor.current = key;
    (async () => {
      // The same reads preloadPlayer started with the page's chunk (lib/player-reads.ts), all at once.
      const urls = playerUrls(worldId);
      const [w, opened, , personas] = await Promise.all([
        api<WorldData>(urls.world),
        loadSessions().then((list) => {
          const id = chosenSession(list, new URLSearchParams(window.location.search).get('session'));
          return id ? readSession(id) : null;
        }),
        loadPrefs(),
        api<{ personas: Persona[] }>(urls.personas).catch(() => ({ personas: [] as Persona[] })),
      ]);
      // The world and the session it opens render together, once (the page shows neither without the other).
      setWorld(w);
      setCanvasMode(w.world.rootComponent ? 'custom' : 'chat');
      setPersona(personas.personas.find((p) => p.active) ?? null);
      if (opened) {
        setData(opened.session);
        setCheckpoints(opened.checkpoints);
      }
      // The audio director exists once the world is rendered; wait for it so music can resume or start.
      for (let i = 0; i < 40 && !audioRef.current; i++) await new Promise((r) => setTimeout(r, 25));
      if (opened) resumeMusic(opened.session.session, w);
      else await createSession();
    })().catch((e: Error) => setError(e.message));
  }, [info, worldId, loadSessions, loadPrefs, resumeMusic, createSession]);

  /** Streams one generation (send, regenerate or continue) and reloads the session when it ends. */
  const stream = useCallback(
    async (path: 'messages' | 'regenerate' | 'continue', body?: { content: string }) => {
      await beforeChange.current?.();
      const id = sessionRef.current;
      if (!id) return;
      if (guestRef.current) {
        if (path !== 'messages' || !body) throw new SignInRequired('This');
        if (!guestRef.current.canSendMessage) throw new SignInRequired('Talking with this world');
        setAnswered(dataRef.current?.messages.at(-1) ?? null);
        setBusy(true);
        setError(null);
        setPendingUser(body.content);
        try {
          const turn = await previewTurn(worldId, dataRef.current!, body.content);
          setData(turn.data);
          applyEffects(turn.effects);
        } catch (e) {
          setError((e as Error).message);
        } finally {
          setPendingUser(null);
          setBusy(false);
        }
        return;
      }
      setAnswered(dataRef.current?.messages.at(-1) ?? null);
      setBusy(true);
      setError(null);
      setStreaming('');
      setReasoning('');
      if (body) setPendingUser(body.content);
      let effects: EngineEffects | undefined;
      /** The turn's failure as streamed: shown beside the player's message once stored there, else on the page. */
      let failure: string | null = null;
      try {
        const send = () =>
          fetch(apiPath('sessions', id, path), {
            method: 'POST',
            credentials: 'same-origin',
            headers: body === undefined ? {} : { 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
        let res = await send();
        // A server shedding load refuses before it starts anything (503 SERVER_BUSY): say so, and
        // send again after its Retry-After (with a little jitter, so refused players do not return together).
        for (let attempt = 1; attempt <= BUSY_RETRIES && (await isBusy(res)); attempt++) {
          const seconds = Number(res.headers.get('retry-after')) || 2;
          toast(`The server is busy; retrying in ${seconds} s (attempt ${attempt} of ${BUSY_RETRIES})…`, 'info');
          await new Promise((r) => setTimeout(r, seconds * 1000 * (1 + Math.random() * 0.5)));
          res = await send();
        }
        if (!res.ok) {
          const err = (await res.json().catch(() => null)) as { error?: { message: string } } | null;
          throw new Error(err?.error?.message ?? `Request failed (${res.status})`);
        }
        await readEvents(res, (event, payload) => {
          if (event === 'start') {
            // The player's message is stored: it replaces the one shown while sending once the
            // session read that holds it is shown, in the same render (never neither, never both).
            void refresh(id, () => setPendingUser(null)).catch(() => {});
          }
          if (event === 'delta') setStreaming((s) => s + String(payload.text ?? ''));
          if (event === 'reasoning') setReasoning((s) => s + String(payload.text ?? ''));
          if (event === 'error') failure = String(payload.message ?? 'The reply failed.');
          if (event === 'done') effects = payload as EngineEffects;
        });
      } catch (e) {
        setError((e as Error).message);
      } finally {
        // The stored reply replaces the streamed text in one render (the text did not vanish first).
        const after = await refresh(id).catch(() => null);
        setPendingUser(null);
        setStreaming('');
        setBusy(false);
        if (failure !== null && !after?.messages.slice(-2).some((m) => m.failure)) setError(failure);
        void loadSessions().catch(() => {});
        // A turn may have cost platform credits: the header reads the balance again.
        refreshHeader();
        applyEffects(effects);
      }
    },
    [refresh, applyEffects, loadSessions, worldId, toast],
  );
  aiRequestRef.current = (text) => {
    answeringAiRequest.current = true;
    void stream('messages', { content: text })
      .catch(() => {})
      .finally(() => {
        answeringAiRequest.current = false;
      });
  };

  /**
   * A JSON call on a route of the open session (`segments` below /api/sessions/<open session>/,
   * each one encoded), then a reload; failures show as the page's error.
   */
  const action = useCallback(
    async <T = unknown>(segments: readonly string[], method = 'POST', json?: unknown): Promise<T | undefined> => {
      await beforeChange.current?.();
      const id = sessionRef.current;
      if (!id) return undefined;
      if (guestRef.current) throw new SignInRequired('This');
      try {
        return await api<T>(apiPath('sessions', id, ...segments), { method, json });
      } catch (e) {
        setError((e as Error).message);
        throw e;
      } finally {
        await refresh(id).catch(() => {});
        // A delete, edit, revert or restore changes the session's message count in the switcher too.
        void loadSessions().catch(() => {});
      }
    },
    [refresh, loadSessions],
  );

  /** `action` for the page's own buttons: a failure already shows as the page's error. */
  const act = useCallback((segments: readonly string[], method = 'POST', json?: unknown) => action(segments, method, json).catch(() => undefined), [action]);

  /** An interface action or event, or a variable change (`segments` below the open session): the engine's answer updates the state. */
  const dispatch = useCallback(
    async (segments: readonly string[], method: string, json: unknown) => {
      await beforeChange.current?.();
      const id = sessionRef.current;
      if (!id) return;
      if (guestRef.current) throw new SignInRequired('This');
      const answer = await api<EngineEffects & { state: PlayerSession['state'] }>(apiPath('sessions', id, ...segments), { method, json });
      setData((d) => (d && d.session.id === id ? { ...d, session: { ...d.session, state: answer.state } } : d));
      applyEffects(answer);
      return answer;
    },
    [applyEffects],
  );

  /**
   * The choices the newest reply offered (stored with the session's state): pending while that
   * reply is the newest message, complete, and nothing is being written (nor was since the
   * session was last read: a reply that just ended leaves them hidden until the reread shows its
   * own). A regenerated, swiped, deleted or reverted reply brings its own state, so its choices go
   * (or come back) with it.
   */
  const offered = data?.session.state.pendingChoices;
  const newest = data?.messages.at(-1);
  const pendingChoices = useMemo(
    () => (!busy && newest !== answered && newest?.role === 'assistant' && newest.status === 'complete' && offered?.length ? offered : NO_CHOICES),
    [busy, newest, answered, offered],
  );

  /** clearPendingChoices(): no choice pending any more, kept with the session's state (a guest's only on the page). */
  const clearPendingChoices = useCallback(async () => {
    const id = sessionRef.current;
    if (!id) return;
    setData((d) => (d && d.session.id === id ? { ...d, session: { ...d.session, state: { ...d.session.state, pendingChoices: [] } } } : d));
    if (!guestRef.current) await dispatch(['choices'], 'DELETE', undefined);
  }, [dispatch]);
  /** What the interface's clearPendingChoices calls: choices come only from replies, so the one change is to none. */
  const setPendingChoices = useCallback((_none: []) => clearPendingChoices(), [clearPendingChoices]);
  /** Choosing one sends it as the player's message; the reply to it replaces the choices. */
  const choose = useCallback((choice: string) => stream('messages', { content: choice }), [stream]);

  const switchSession = useCallback(
    async (id: string) => {
      await beforeChange.current?.();
      audioRef.current?.dispose();
      const url = new URL(window.location.href);
      url.searchParams.set('session', id);
      window.history.replaceState(window.history.state, '', url);
      await openSession(id, world);
    },
    [openSession, world],
  );

  return {
    account: info?.account ?? null,
    guest,
    world,
    data,
    checkpoints,
    sessions,
    prefs,
    persona,
    streaming,
    reasoning,
    busy,
    pendingUser,
    error,
    setError,
    toasts,
    notificationLog,
    toast,
    draft,
    setDraft,
    pendingChoices,
    setPendingChoices,
    clearPendingChoices,
    choose,
    canvasMode,
    setCanvasMode,
    volumes,
    setVolumes,
    nowPlaying,
    audio: audioRef,
    assetScope,
    stream,
    action,
    act,
    dispatch,
    refresh,
    loadSessions,
    loadPrefs,
    setPrefs,
    createSession,
    switchSession,
    setData,
    setBeforeChange,
  };
}

export type Player = ReturnType<typeof usePlayer>;
