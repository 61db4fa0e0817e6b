import { type AssetScope, resolveAssetUrl } from '@yumina/sandbox';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api } from '../lib/api.ts';
import { navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useAssetScope } from '../player/asset-access.ts';
import { AudioDirector, type AudioCommand, type AudioTrackDef, browserAudio } from '../player/audio.ts';
import { MessageText } from '../player/MessageText.tsx';
import { type SandboxHandlers, SandboxHost, type SandboxWorld } from '../sandbox/SandboxHost.tsx';

interface Message {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  status: 'complete' | 'streaming' | 'failed';
  errorMessage: string | null;
  swipes: unknown[];
  activeSwipeIndex: number;
  stateSnapshot: { variables?: Record<string, unknown> } | null;
}

interface SessionData {
  session: { id: string; state: { variables: Record<string, unknown> }; messageCount: number };
  messages: Message[];
}

interface Checkpoint {
  id: string;
  name: string;
  messageCount: number;
}

interface WorldData {
  id: string;
  world: { name: string; variables?: { id: string; name?: string }[]; rootComponent?: SandboxWorld['rootComponent']; audioTracks?: AudioTrackDef[] };
}

/** Reads a text/event-stream response, calling `on` for each event. */
async function readEvents(res: Response, on: (event: string, data: Record<string, unknown>) => void): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.+)$/m.exec(block)?.[1];
      if (data) on(event, JSON.parse(data) as Record<string, unknown>);
      cut = buffer.indexOf('\n\n');
    }
  }
}

/**
 * The world player: the conversation with streaming replies, swipes, checkpoints and the world's
 * variables; a world with a custom interface runs it in the sandbox frame, wired to the same actions.
 */
export function PlayerPage({ worldId }: { worldId: string }) {
  const { loading, info } = useSession();
  const [world, setWorld] = useState<WorldData | null>(null);
  const [data, setData] = useState<SessionData | null>(null);
  const [checkpoints, setCheckpoints] = useState<Checkpoint[]>([]);
  const [streaming, setStreaming] = useState('');
  const [reasoning, setReasoning] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notes, setNotes] = useState<string[]>([]);
  const [draft, setDraft] = useState('');
  const sessionId = data?.session.id;
  const sessionRef = useRef<string | undefined>(undefined);
  sessionRef.current = sessionId;
  const audioRef = useRef<AudioDirector | null>(null);
  const [volumes, setVolumes] = useState({ bgm: 0.8, sfx: 1 });
  // Where this world's `asset://<id>` references resolve (signed while the world is private), here and in the sandbox.
  const assetScope = useAssetScope(world?.id ?? null);
  const assetScopeRef = useRef<AssetScope | null>(null);
  assetScopeRef.current = assetScope;

  // The world's music and sounds, driven by the engine's audio commands after each turn.
  useEffect(() => {
    if (!world) return;
    const director = new AudioDirector(
      world.world.audioTracks ?? [],
      (url) => resolveAssetUrl(url, assetScopeRef.current ?? { origin: window.location.origin, worldId: world.id, token: null }),
      browserAudio,
    );
    audioRef.current = director;
    return () => {
      director.dispose();
      audioRef.current = null;
    };
  }, [world]);
  useEffect(() => {
    audioRef.current?.setChannelVolume('bgm', volumes.bgm);
    audioRef.current?.setChannelVolume('sfx', volumes.sfx);
  }, [volumes, world]);

  useEffect(() => {
    if (!loading && !info?.account) navigate(`/login?returnTo=${encodeURIComponent(`/play/${worldId}`)}`);
  }, [loading, info, worldId]);

  const refresh = useCallback(async (id: string) => {
    setData(await api<SessionData>(`/api/sessions/${id}`));
    setCheckpoints((await api<{ checkpoints: Checkpoint[] }>(`/api/sessions/${id}/checkpoints`)).checkpoints);
  }, []);

  useEffect(() => {
    if (!info?.account) return;
    (async () => {
      setWorld(await api<WorldData>(`/api/worlds/${encodeURIComponent(worldId)}`));
      const list = await api<{ sessions: { id: string }[] }>(`/api/worlds/${encodeURIComponent(worldId)}/sessions`);
      const id = list.sessions[0]?.id ?? (await api<SessionData>(`/api/worlds/${encodeURIComponent(worldId)}/sessions`, { method: 'POST' })).session.id;
      await refresh(id);
    })().catch((e: Error) => setError(e.message));
  }, [info, worldId, refresh]);

  /** Streams one generation (send, regenerate or continue) and reloads the session when it ends. */
  const stream = useCallback(
    async (path: string, body?: unknown) => {
      const id = sessionRef.current;
      if (!id) return;
      setBusy(true);
      setError(null);
      setStreaming('');
      setReasoning('');
      try {
        const res = await fetch(`/api/sessions/${id}/${path}`, {
          method: 'POST',
          credentials: 'same-origin',
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        if (!res.ok) {
          const err = (await res.json().catch(() => null)) as { error?: { message: string } } | null;
          throw new Error(err?.error?.message ?? `Request failed (${res.status})`);
        }
        await readEvents(res, (event, payload) => {
          if (event === 'delta') setStreaming((s) => s + String(payload.text ?? ''));
          if (event === 'reasoning') setReasoning((s) => s + String(payload.text ?? ''));
          if (event === 'error') setError(String(payload.message ?? 'The reply failed.'));
          if (event === 'done') {
            const n = (payload.notifications as { message?: string; text?: string }[] | undefined) ?? [];
            setNotes(n.map((x) => x.message ?? x.text ?? JSON.stringify(x)));
            audioRef.current?.apply((payload.audioCommands as AudioCommand[] | undefined) ?? []);
          }
        });
      } catch (e) {
        setError((e as Error).message);
      } finally {
        setStreaming('');
        setBusy(false);
        await refresh(id);
      }
    },
    [refresh],
  );

  const action = useCallback(
    async (path: string, method = 'POST', json?: unknown) => {
      const id = sessionRef.current;
      if (!id) return;
      try {
        await api(`/api/sessions/${id}/${path}`, { method, json });
      } catch (e) {
        setError((e as Error).message);
      }
      await refresh(id);
    },
    [refresh],
  );

  const variables = data?.session.state.variables ?? {};
  const messages = data?.messages ?? [];
  const last = messages.at(-1);

  const handlers: SandboxHandlers = useMemo(
    () => ({
      sendMessage: (text: string) => void stream('messages', { content: text }),
      regenerateMessage: () => void stream('regenerate'),
      continueLastMessage: () => void stream('continue'),
      stopGeneration: () => void action('stop'),
      restartChat: () => void action('restart'),
      swipeMessage: (_id: string, direction: 'left' | 'right') => void action(`swipe/${direction}`),
      revertToMessage: (id: string) => void action(`revert/${id}`),
      deleteMessage: (id: string) => void action(`messages/${id}`, 'DELETE'),
      editMessage: (id: string, content: string) => void action(`messages/${id}`, 'PATCH', { content }),
      saveCheckpoint: async (name?: string) => {
        const cp = await api<Checkpoint>(`/api/sessions/${sessionRef.current}/checkpoints`, { json: { name: name || `Checkpoint ${checkpoints.length + 1}` } });
        await refresh(sessionRef.current!);
        return { id: cp.id, name: cp.name, messageCount: cp.messageCount, createdAt: new Date().toISOString() };
      },
      loadCheckpoints: async () => checkpoints.map((c) => ({ ...c, createdAt: '' })),
      restoreCheckpoint: (id: string) => void action(`checkpoints/${id}/restore`),
      deleteCheckpoint: (id: string) => void action(`checkpoints/${id}`, 'DELETE'),
      // World storage, audio and models, on the same routes and director the page uses.
      'storage.get': async (key: string) =>
        (await api<{ entries: Record<string, string> }>(`/api/worlds/${encodeURIComponent(worldId)}/storage`)).entries[key] ?? null,
      'storage.set': (key: string, value: string) => api(`/api/worlds/${encodeURIComponent(worldId)}/storage/${encodeURIComponent(key)}`, { method: 'PUT', json: { value } }),
      'storage.remove': (key: string) => api(`/api/worlds/${encodeURIComponent(worldId)}/storage/${encodeURIComponent(key)}`, { method: 'DELETE' }),
      playAudio: (trackId: string, options?: { volume?: number; fadeDuration?: number; chainTo?: string }) =>
        audioRef.current?.apply([{ action: 'play', trackId, trackType: 'sfx', volume: options?.volume, fadeInSeconds: options?.fadeDuration, chainTo: options?.chainTo }]),
      stopAudio: (trackId?: string, fadeDuration?: number) =>
        trackId ? audioRef.current?.apply([{ action: 'stop', trackId, fadeOutSeconds: fadeDuration }]) : audioRef.current?.dispose(),
      setAudioVolume: (type: 'bgm' | 'sfx', volume: number) => setVolumes((v) => ({ ...v, [type]: volume })),
      getModels: async () => {
        const c = await api<{ models: { id: string; name: string; provider: string; contextLength: number | null }[]; pinned: string[]; recent: string[] }>('/api/models');
        return { models: c.models.map((m) => ({ ...m, contextLength: m.contextLength ?? 0 })), pinnedModels: c.pinned, recentlyUsed: c.recent };
      },
      pinModel: (id: string) => api(`/api/models/pins/${encodeURIComponent(id)}`, { method: 'PUT' }),
      unpinModel: (id: string) => api(`/api/models/pins/${encodeURIComponent(id)}`, { method: 'DELETE' }),
      'ai.complete': async (options: object, onDelta: (text: string) => void) => {
        const res = await fetch(`/api/sessions/${sessionRef.current}/ai/complete`, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...options, stream: true }),
        });
        if (!res.ok) throw new Error(((await res.json().catch(() => null)) as { error?: { message: string } } | null)?.error?.message ?? `AI call failed (${res.status})`);
        let text = '';
        let failure: string | null = null;
        await readEvents(res, (event, payload) => {
          if (event === 'delta') {
            text += String(payload.text ?? '');
            onDelta(String(payload.text ?? ''));
          }
          if (event === 'error') failure = String(payload.message ?? 'AI call failed');
        });
        if (failure) throw new Error(failure);
        return text;
      },
    }) as SandboxHandlers,
    [stream, action, refresh, checkpoints, worldId],
  );

  if (error && !data) return <p role="alert">{error}</p>;
  if (!world || !data || !assetScope) return <p>Loading…</p>;

  const sandboxState = {
    variables,
    sessionId: data.session.id,
    messages: messages.map((m) => ({ id: m.id, role: m.role, content: m.content, stateSnapshot: m.stateSnapshot?.variables ?? null })),
    isStreaming: busy,
    streamingContent: streaming,
    streamingReasoning: reasoning,
    error,
  };

  return (
    <div className="player">
      <h2>{world.world.name}</h2>
      {world.world.rootComponent ? (
        <SandboxHost
          world={{ id: world.id, name: world.world.name, rootComponent: world.world.rootComponent }}
          state={sandboxState as never}
          handlers={handlers}
          assetToken={assetScope.token}
          title="World interface"
          className="sandbox-frame"
          style={{ width: '100%', height: 420, border: '1px solid #ddd', borderRadius: 8 }}
        />
      ) : null}
      <aside className="card" aria-label="Variables">
        <h3>Variables</h3>
        <dl data-testid="variables">
          {Object.entries(variables).map(([k, v]) => (
            <div key={k} data-variable={k}>
              <dt>{k}</dt>
              <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
            </div>
          ))}
        </dl>
      </aside>
      <section className="card" aria-label="Conversation">
        <ol className="list" data-testid="messages">
          {messages.map((m) => (
            <li key={m.id} data-role={m.role} data-status={m.status}>
              <strong>{m.role === 'user' ? 'You' : world.world.name}:</strong> {m.status === 'streaming' ? streaming : <MessageText text={m.content} scope={assetScope} />}
              {m.status === 'failed' && <span className="error"> ({m.errorMessage})</span>}
              {m === last && m.role === 'assistant' && m.swipes.length > 1 && (
                <span className="row">
                  <button type="button" className="link" aria-label="Previous reply" onClick={() => void action('swipe/left')}>
                    ‹
                  </button>
                  <span data-testid="swipe-index">
                    {m.activeSwipeIndex + 1}/{m.swipes.length}
                  </span>
                  <button type="button" className="link" aria-label="Next reply" onClick={() => void action('swipe/right')}>
                    ›
                  </button>
                </span>
              )}
            </li>
          ))}
          {busy && !messages.some((m) => m.status === 'streaming') && <li data-testid="streaming">{streaming}</li>}
          {busy && reasoning && (
            <li className="hint" data-testid="reasoning">
              Thinking: {reasoning}
            </li>
          )}
        </ol>
        {notes.map((n) => (
          <p key={n} role="status" className="hint">
            {n}
          </p>
        ))}
        {error && <p role="alert">{error}</p>}
        <form
          aria-label="Send a message"
          onSubmit={(e) => {
            e.preventDefault();
            if (!draft.trim()) return;
            const text = draft;
            setDraft('');
            void stream('messages', { content: text });
          }}
        >
          <textarea aria-label="Message" value={draft} onChange={(e) => setDraft(e.target.value)} />
          <div className="row">
            <button type="submit" disabled={busy}>
              Send
            </button>
            <button type="button" className="secondary" disabled={busy || last?.role !== 'assistant'} onClick={() => void stream('regenerate')}>
              Regenerate
            </button>
            <button type="button" className="secondary" disabled={!busy} onClick={() => void action('stop')}>
              Stop
            </button>
            <button
              type="button"
              className="secondary"
              disabled={busy}
              onClick={() => void api(`/api/sessions/${sessionId}/checkpoints`, { json: { name: `Checkpoint ${checkpoints.length + 1}` } }).then(() => refresh(sessionId!))}
            >
              Save checkpoint
            </button>
          </div>
        </form>
        <div className="row" aria-label="Volume">
          <label className="inline">
            Music
            <input type="range" min={0} max={1} step={0.05} value={volumes.bgm} onChange={(e) => setVolumes((v) => ({ ...v, bgm: Number(e.target.value) }))} />
          </label>
          <label className="inline">
            Sounds
            <input type="range" min={0} max={1} step={0.05} value={volumes.sfx} onChange={(e) => setVolumes((v) => ({ ...v, sfx: Number(e.target.value) }))} />
          </label>
        </div>
        <ul className="list" aria-label="Checkpoints">
          {checkpoints.map((c) => (
            <li key={c.id}>
              {c.name} ({c.messageCount} messages){' '}
              <button type="button" className="link" onClick={() => void action(`checkpoints/${c.id}/restore`)}>
                Restore
              </button>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
