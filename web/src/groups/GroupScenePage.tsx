import { lazy, Suspense, useCallback, useEffect, useRef, useState } from 'react';
import { apiPath, type SandboxState } from '@yumina/sandbox';
import { api, ApiError } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { useTitle } from '../lib/title.ts';
import { chatHtml } from '../player/DefaultChat.tsx';
import { readEvents } from '../player/event-stream.ts';
import { PageLoading } from '../shell/PageLoading.tsx';
import { useAssetScope } from '../player/asset-access.ts';
import type { SandboxHandlers } from '../sandbox/SandboxHost.tsx';
import { sandboxMessage } from '../player/sandbox-bridge.ts';
import type { PlayerMessage } from '../player/player-types.ts';
import { CARD_MODES, type GroupCharacter, groupPath, type GroupView, REPLY_MODES, type ReplyMode } from './group-api.ts';
import '../player/player.css';
import './groups.css';

/** The sandbox host loads only for a scene whose world has an interface of its own. */
const SandboxHost = lazy(() => import('../sandbox/SandboxHost.tsx').then((m) => ({ default: m.SandboxHost })));

interface SceneWorld {
  id: string;
  world: { name: string; rootComponent: { id: string; name: string; entryFile: string; files: Record<string, string>; updatedAt: string } | null };
}

interface SceneMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  status: 'complete' | 'streaming' | 'failed';
  participantId?: string;
  authorName?: string;
  errorMessage?: string | null;
  swipes: { content: string }[];
  activeSwipeIndex: number;
}


function Face({ name, src }: { name: string; src: string | null }) {
  if (src) return <img className="chat-avatar" src={src} alt="" aria-hidden="true" />;
  return (
    <span className="chat-avatar" aria-hidden="true">
      {(name.trim()[0] ?? '?').toUpperCase()}
    </span>
  );
}

/**
 * /groups/:id: a group scene. Each reply under its character's face and name; the player writes,
 * picks who replies now, mutes characters, changes who answers, and stops the characters while
 * they carry on among themselves. Replies stream in one after another.
 */
export function GroupScenePage({ sessionId }: { sessionId: string }) {
  const [view, setView] = useState<GroupView | null>(null);
  const [title, setTitle] = useState('');
  const [messages, setMessages] = useState<SceneMessage[] | null>(null);
  const [draft, setDraft] = useState('');
  const [replyAs, setReplyAs] = useState('');
  const [busy, setBusy] = useState(false);
  const [speaking, setSpeaking] = useState<{ id: string; name: string } | null>(null);
  const [sceneWorld, setSceneWorld] = useState<SceneWorld | null>(null);
  const [variables, setVariables] = useState<Record<string, unknown>>({});
  const [error, setError] = useState<string | null>(null);
  const list = useRef<HTMLOListElement>(null);
  useTitle([title || 'Group scene']);

  const load = useCallback(async () => {
    try {
      const [scene, session] = await Promise.all([
        api<GroupView>(groupPath(sessionId)),
        api<{ session: { title: string; state?: { variables?: Record<string, unknown> } }; messages: SceneMessage[] }>(`/api/sessions/${encodeURIComponent(sessionId)}?limit=200`),
      ]);
      setView(scene);
      setTitle(session.session.title);
      setMessages(session.messages);
      setVariables(session.session.state?.variables ?? {});
      if (scene.sceneWorldId) {
        const id = scene.sceneWorldId;
        setSceneWorld((known) => known ?? null);
        void api<SceneWorld>(apiPath('worlds', id)).then((w) => setSceneWorld((known) => (known?.id === w.id ? known : w)), () => setSceneWorld(null));
      }
    } catch (err) {
      setError(err instanceof ApiError && err.status === 404 ? 'This scene does not exist, or it is not yours.' : 'The scene could not be loaded.');
    }
  }, [sessionId]);
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    list.current?.lastElementChild?.scrollIntoView({ block: 'end' });
  }, [messages]);

  /** Streams a request of the scene (`replies` or `regenerate`), showing each reply as it is written. */
  const run = async (path: 'replies' | 'regenerate', body?: unknown) => {
    setBusy(true);
    setError(null);
    try {
      const res = await fetch(`${groupPath(sessionId)}/${path}`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
      if (!res.ok) {
        const failure = (await res.json().catch(() => null)) as { error?: { message: string } } | null;
        throw new Error(failure?.error?.message ?? `The scene did not answer (${res.status}).`);
      }
      await readEvents(res, (event, data) => {
        if (event === 'message') setMessages((m) => [...(m ?? []), data.message as SceneMessage]);
        if (event === 'speaker') {
          setSpeaking({ id: String(data.participantId), name: String(data.name) });
          const placeholder: SceneMessage = { id: String(data.messageId), role: 'assistant', content: '', status: 'streaming', participantId: String(data.participantId), authorName: String(data.name), swipes: [], activeSwipeIndex: 0 };
          setMessages((m) => (m?.some((x) => x.id === placeholder.id) ? m.map((x) => (x.id === placeholder.id ? { ...x, content: '', status: 'streaming' } : x)) : [...(m ?? []), placeholder]));
        }
        if (event === 'delta') setMessages((m) => m?.map((x) => (x.id === data.messageId ? { ...x, content: x.content + String(data.text) } : x)) ?? m);
        if (event === 'reply' && data.message) {
          const done = data.message as SceneMessage;
          setMessages((m) => m?.map((x) => (x.id === done.id ? done : x)) ?? m);
          const state = data.state as { variables?: Record<string, unknown> } | undefined;
          if (state?.variables) setVariables(state.variables);
        }
        if (event === 'reply:error') {
          setMessages((m) => m?.map((x) => (x.id === data.messageId ? { ...x, status: 'failed', errorMessage: String(data.message) } : x)) ?? m);
          if (!data.stopped) setError(String(data.message));
        }
      });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      // what was stored (swipes, failures settled) is what stays on screen, before the composer is back
      await load();
      setBusy(false);
      setSpeaking(null);
    }
  };

  // Only the latest change's answer replaces the view: an earlier one, arriving after a later change
  // was shown (two characters muted in quick succession), would put the later one back as it was.
  const patches = useRef(0);
  const patch = async (path: string, json: unknown) => {
    const mine = ++patches.current;
    try {
      const answer = await api<GroupView>(path, { method: 'PATCH', json });
      if (mine === patches.current) setView(answer);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const assetScope = useAssetScope(sceneWorld?.world.rootComponent ? sceneWorld.id : null);

  if (error && !messages) return <p role="alert">{error}</p>;
  if (!view || !messages) return <PageLoading />;
  const root = sceneWorld?.world.rootComponent ?? null;
  const streamingText = messages.find((m) => m.status === 'streaming')?.content ?? '';
  // the scene as the world's interface reads it: the shared state, the messages, who is writing now, the cast
  const interfaceState: Partial<SandboxState> = {
    variables,
    worldName: sceneWorld?.world.name ?? title,
    worldId: sceneWorld?.id ?? '',
    sessionId,
    // the stored messages are the session's own (messageView), as the player's: shown the same way
    messages: messages.filter((m) => m.status !== 'streaming').map((m) => sandboxMessage(m as unknown as PlayerMessage, sessionId)),
    isStreaming: busy,
    streamingContent: streamingText,
    characters: view.characters.map((c) => ({ id: c.id, name: c.name, muted: c.muted })),
    speaker: speaking,
  };
  const interfaceHandlers: SandboxHandlers = {
    sendMessage: async (text) => {
      await run('replies', { content: String(text) });
    },
    stopGeneration: async () => {
      await api(`${groupPath(sessionId)}/stop`, { method: 'POST' });
    },
  } as SandboxHandlers;
  const byId = new Map(view.characters.map((c) => [c.id, c]));
  const last = messages.at(-1);
  const mode = view.group.replyMode;
  const send = () => {
    const content = draft.trim();
    if (!content && !replyAs) return;
    setDraft('');
    void run('replies', { ...(content ? { content } : {}), ...(replyAs ? { speaker: replyAs } : {}) });
  };

  return (
    <div className="group-scene">
      <div className="row player-head">
        <h1>{title}</h1>
        <Link to="/groups">All scenes</Link>
      </div>
      {root && sceneWorld && (
        <Suspense fallback={<div className="sandbox-frame group-frame" role="status">Loading the world&apos;s interface…</div>}>
          <SandboxHost
            world={{ id: sceneWorld.id, name: sceneWorld.world.name, rootComponent: root }}
            state={interfaceState}
            handlers={interfaceHandlers}
            assetToken={assetScope?.token ?? null}
            title="World interface"
            className="sandbox-frame group-frame"
          />
        </Suspense>
      )}
      <div className="group-layout">
        <section className="group-chat" aria-label="The scene">
          <ol className="chat-list" ref={list} data-testid="messages">
            {messages.map((m) => {
              const who = m.participantId ? byId.get(m.participantId) : undefined;
              const mine = m.role === 'user';
              const name = m.authorName || (mine ? 'You' : 'Narrator');
              return (
                <li key={m.id} className={`chat-row ${mine ? 'chat-row-user' : ''}`} data-role={m.role} data-status={m.status} data-speaker={name}>
                  <Face name={name} src={who?.picture ?? null} />
                  <div className={`chat-bubble ${mine ? 'chat-bubble-user' : ''}`}>
                    <div className="chat-name">{name}</div>
                    {m.status === 'streaming' && !m.content ? (
                      <span className="typing" role="status">
                        {name} is writing…
                      </span>
                    ) : (
                      <div className="chat-text" dangerouslySetInnerHTML={{ __html: chatHtml(m.content, null) }} />
                    )}
                    {m.status === 'failed' && <p className="hint">{m.errorMessage ?? 'This reply was not finished.'}</p>}
                    {m === last && m.role === 'assistant' && m.participantId && m.status !== 'streaming' && !busy && (
                      <div className="chat-tools">
                        {m.swipes.length > 1 && (
                          <span className="hint">
                            Version {m.activeSwipeIndex + 1} of {m.swipes.length}
                          </span>
                        )}
                        <button type="button" className="link" onClick={() => void run('regenerate')}>
                          Regenerate
                        </button>
                      </div>
                    )}
                  </div>
                </li>
              );
            })}
          </ol>
          {error && <p role="alert">{error}</p>}
          <form
            className="group-composer"
            onSubmit={(e) => {
              e.preventDefault();
              send();
            }}
          >
            <label className="visually-hidden" htmlFor="group-draft">
              Your message
            </label>
            <textarea id="group-draft" rows={2} value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="Write to the scene… (name a character to ask them)" disabled={busy} />
            <div className="row">
              <label>
                Reply as
                <select aria-label="Who replies" value={replyAs} onChange={(e) => setReplyAs(e.target.value)} disabled={busy}>
                  <option value="">{mode === 'choose' ? 'Pick a character…' : 'As the mode decides'}</option>
                  {view.characters.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name}
                    </option>
                  ))}
                </select>
              </label>
              {busy ? (
                <button type="button" className="secondary" onClick={() => void api(`${groupPath(sessionId)}/stop`, { method: 'POST' })}>
                  Stop{speaking ? ` (${speaking.name} is writing)` : ''}
                </button>
              ) : (
                <button type="submit" disabled={!draft.trim() && !replyAs}>
                  {replyAs && !draft.trim() ? 'Reply now' : 'Send'}
                </button>
              )}
            </div>
          </form>
        </section>
        <aside className="card group-cast" aria-label="Characters and modes">
          <h2>Characters</h2>
          <ul className="cast-list">
            {view.characters.map((c: GroupCharacter) => (
              <li key={c.id} className={c.muted ? 'muted' : ''}>
                <Face name={c.name} src={c.picture} />
                <span className="cast-name">
                  {c.name}
                  <span className="hint talkative" title="From the character's card: how likely they speak up unprompted">
                    talkative {Math.round(c.talkativeness * 100)} %
                  </span>
                </span>
                <label className="mute">
                  <input
                    type="checkbox"
                    checked={c.muted}
                    onChange={(e) => {
                      const muted = e.target.checked;
                      // shown at once; the scene's answer replaces it (or the error says why not)
                      setView((v) => (v ? { ...v, characters: v.characters.map((x) => (x.id === c.id ? { ...x, muted } : x)) } : v));
                      void patch(`${groupPath(sessionId)}/characters/${encodeURIComponent(c.id)}`, { muted });
                    }}
                  />
                  Muted
                </label>
              </li>
            ))}
          </ul>
          <label>
            Who answers
            <select
              aria-label="Who answers"
              value={mode}
              onChange={(e) => {
                const replyMode = e.target.value as ReplyMode;
                setView((v) => (v ? { ...v, group: { ...v.group, replyMode } } : v));
                void patch(groupPath(sessionId), { replyMode });
              }}
            >
              {REPLY_MODES.map((m) => (
                <option key={m.value} value={m.value}>
                  {m.label}
                </option>
              ))}
            </select>
          </label>
          <p className="hint">{REPLY_MODES.find((m) => m.value === mode)?.help}</p>
          <label>
            Each reply knows
            <select aria-label="What each reply knows" value={view.group.cardMode} onChange={(e) => void patch(groupPath(sessionId), { cardMode: e.target.value })}>
              {CARD_MODES.map((m) => (
                <option key={m.value} value={m.value}>
                  {m.label}
                </option>
              ))}
            </select>
          </label>
          <label className="auto-label">
            Carry on among themselves for up to
            <input
              type="number"
              className="auto-count"
              min={0}
              max={20}
              value={view.group.autoReplies}
              onChange={(e) => void patch(groupPath(sessionId), { autoReplies: Math.max(0, Math.min(20, Number(e.target.value) || 0)) })}
            />{' '}
            replies
          </label>
        </aside>
      </div>
    </div>
  );
}
