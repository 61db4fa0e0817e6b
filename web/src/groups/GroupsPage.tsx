import { useEffect, useState } from 'react';
import { api, ApiError } from '../lib/api.ts';
import { shortDateTime } from '../lib/dates.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';
import { PageLoading } from '../shell/PageLoading.tsx';
import { CARD_MODES, type CardMode, type GroupView, REPLY_MODES, type ReplyMode, type SceneSummary } from './group-api.ts';
import './groups.css';

interface Choice {
  id: string;
  name: string;
  from: 'mine' | 'library';
}

const MIN = 2;
const MAX = 8;

/**
 * /groups: the player's group scenes, and a new one: 2–8 characters picked from their own worlds
 * and the library (imported cards included), who answers (the reply mode) and what each reply
 * knows of the others, explained in plain words.
 */
export function GroupsPage() {
  useTitle(['Group scenes']);
  const { info, loading } = useSession();
  const [scenes, setScenes] = useState<SceneSummary[] | null>(null);
  const [choices, setChoices] = useState<Choice[] | null>(null);
  const [query, setQuery] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const [replyMode, setReplyMode] = useState<ReplyMode>('natural');
  const [cardMode, setCardMode] = useState<CardMode>('swap');
  const [autoReplies, setAutoReplies] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  const account = info?.account ?? null;

  useEffect(() => {
    if (!account) return;
    api<{ scenes: SceneSummary[] }>('/api/groups').then((r) => setScenes(r.scenes), () => setScenes([]));
  }, [account]);
  useEffect(() => {
    if (!account) return;
    const q = query.trim();
    const library = `/api/library?pageSize=24&sort=${q ? 'relevance' : 'popular'}${q ? `&q=${encodeURIComponent(q)}` : ''}`;
    const timer = setTimeout(() => {
      void Promise.all([
        api<{ worlds: { id: string; name: string }[] }>('/api/worlds').catch(() => ({ worlds: [] })),
        api<{ worlds: { id: string; name: string }[] }>(library).catch(() => ({ worlds: [] })),
      ]).then(([mine, published]) => {
        const match = (name: string) => !q || name.toLowerCase().includes(q.toLowerCase());
        const own = mine.worlds.filter((w) => match(w.name)).map((w) => ({ id: w.id, name: w.name, from: 'mine' as const }));
        const others = published.worlds.filter((w) => !own.some((o) => o.id === w.id)).map((w) => ({ id: w.id, name: w.name, from: 'library' as const }));
        setChoices([...own, ...others]);
      });
    }, q ? 250 : 0);
    return () => clearTimeout(timer);
  }, [account, query]);

  if (loading) return <PageLoading />;
  if (!account)
    return (
      <div className="card narrow">
        <h1>Group scenes</h1>
        <p>
          <Link to="/login?next=/groups">Sign in</Link> to start a scene with several characters.
        </p>
      </div>
    );

  const toggle = (id: string) => setPicked((now) => (now.includes(id) ? now.filter((x) => x !== id) : now.length >= MAX ? now : [...now, id]));
  const start = async () => {
    setStarting(true);
    setError(null);
    try {
      const made = await api<GroupView & { session: { id: string } }>('/api/groups', { method: 'POST', json: { characters: picked, replyMode, cardMode, autoReplies } });
      navigate(`/groups/${made.session.id}`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The scene could not be started.');
      setStarting(false);
    }
  };
  const name = (id: string) => choices?.find((c) => c.id === id)?.name ?? id;

  return (
    <div className="groups">
      <h1>Group scenes</h1>
      <p className="hint">Several characters in one conversation: each answers with its own card, and they share the scene.</p>
      {scenes && scenes.length > 0 && (
        <section className="card" aria-labelledby="my-scenes">
          <h2 id="my-scenes">Your scenes</h2>
          <ul className="scene-list">
            {scenes.map((s) => (
              <li key={s.id}>
                <Link to={`/groups/${s.id}`}>{s.title}</Link>{' '}
                <span className="hint">
                  {s.messageCount} messages · {shortDateTime(s.updatedAt)}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section className="card" aria-labelledby="new-scene">
        <h2 id="new-scene">New scene</h2>
        <fieldset className="group-picker">
          <legend>
            Characters ({picked.length} of {MIN}–{MAX})
          </legend>
          {picked.length > 0 && (
            <p className="picked" data-testid="picked">
              {picked.map(name).join(' · ')}
            </p>
          )}
          <label>
            Find a character
            <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="A name from your worlds or the library" />
          </label>
          {choices === null ? (
            <p className="hint">Loading characters…</p>
          ) : choices.length === 0 ? (
            <p className="hint">No characters found. Import a card in My worlds, or search the library.</p>
          ) : (
            <ul className="choice-list">
              {choices.map((c) => (
                <li key={c.id}>
                  <label>
                    <input type="checkbox" checked={picked.includes(c.id)} disabled={!picked.includes(c.id) && picked.length >= MAX} onChange={() => toggle(c.id)} />
                    {c.name} <span className="hint">{c.from === 'mine' ? 'yours' : 'library'}</span>
                  </label>
                </li>
              ))}
            </ul>
          )}
        </fieldset>
        <fieldset>
          <legend>Who answers</legend>
          {REPLY_MODES.map((m) => (
            <label key={m.value} className="mode-choice">
              <input type="radio" name="reply-mode" value={m.value} checked={replyMode === m.value} onChange={() => setReplyMode(m.value)} />
              <span>
                <strong>{m.label}</strong> <span className="hint">{m.help}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>What each reply knows of the others</legend>
          {CARD_MODES.map((m) => (
            <label key={m.value} className="mode-choice">
              <input type="radio" name="card-mode" value={m.value} checked={cardMode === m.value} onChange={() => setCardMode(m.value)} />
              <span>
                <strong>{m.label}</strong> <span className="hint">{m.help}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <label className="auto-label">
          Let them carry on among themselves for up to
          <input type="number" min={0} max={20} value={autoReplies} onChange={(e) => setAutoReplies(Math.max(0, Math.min(20, Number(e.target.value) || 0)))} className="auto-count" /> replies
        </label>
        {error && <p role="alert">{error}</p>}
        <div className="row">
          <button type="button" disabled={picked.length < MIN || starting} onClick={() => void start()}>
            Start the scene
          </button>
          {picked.length < MIN && <span className="hint">Pick at least {MIN} characters.</span>}
        </div>
      </section>
    </div>
  );
}
