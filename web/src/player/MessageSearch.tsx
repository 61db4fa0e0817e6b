/**
 * Search of the player's messages (issue 50), a dialog loaded only when opened: in this session
 * or across all the player's sessions (GET /api/search/messages, a page at a time); choosing a hit
 * jumps to the message, in its session and world.
 */
import { useEffect, useRef, useState } from 'react';
import { api } from '../lib/api.ts';
import { shortDate } from '../lib/dates.ts';

export interface SearchHit {
  messageId: string;
  sessionId: string;
  sessionTitle: string;
  worldId: string;
  worldName: string;
  role: 'user' | 'assistant';
  snippet: string;
  createdAt: string;
}

/** The snippet with the query's occurrences marked. */
function Marked({ text, q }: { text: string; q: string }) {
  const parts: React.ReactNode[] = [];
  const lower = text.toLowerCase();
  const needle = q.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(needle); needle && i >= 0; i = lower.indexOf(needle, i + needle.length)) {
    parts.push(text.slice(at, i), <mark key={i}>{text.slice(i, i + needle.length)}</mark>);
    at = i + needle.length;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

export function MessageSearch(props: { sessionId: string; onJump(hit: SearchHit): void; onClose(): void }) {
  const { sessionId, onJump, onClose } = props;
  const [q, setQ] = useState('');
  const [scope, setScope] = useState<'session' | 'all'>('session');
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [searched, setSearched] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const search = async (cursor: string | null) => {
    const text = cursor ? searched : q.trim();
    if (text.length < 2) return setError('Type at least 2 characters.');
    setBusy(true);
    setError(null);
    try {
      const params = new URLSearchParams({ q: text, limit: '20' });
      if (scope === 'session') params.set('sessionId', sessionId);
      if (cursor) params.set('cursor', cursor);
      const page = await api<{ results: SearchHit[]; nextCursor: string | null }>(`/api/search/messages?${params}`);
      setHits((before) => (cursor ? [...(before ?? []), ...page.results] : page.results));
      setNext(page.nextCursor);
      setSearched(text);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="confirm-backdrop" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div role="dialog" aria-modal="true" aria-labelledby="search-title" className="card message-search">
        <div className="row sent-prompt-head">
          <h3 id="search-title">Search messages</h3>
          <button type="button" className="secondary" onClick={onClose}>
            Close
          </button>
        </div>
        <form
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            void search(null);
          }}
        >
          <label>
            Words to find
            <input ref={input} type="search" value={q} maxLength={200} onChange={(e) => setQ(e.target.value)} />
          </label>
          <fieldset className="row">
            <legend className="visually-hidden">Where</legend>
            <label className="row">
              <input type="radio" name="search-scope" checked={scope === 'session'} onChange={() => setScope('session')} /> This session
            </label>
            <label className="row">
              <input type="radio" name="search-scope" checked={scope === 'all'} onChange={() => setScope('all')} /> All my sessions
            </label>
          </fieldset>
          <button type="submit" disabled={busy}>
            Search
          </button>
        </form>
        {error && <p role="alert">{error}</p>}
        <div aria-live="polite">
          {hits && (
            <p className="hint" data-testid="search-count">
              {hits.length === 0 ? `Nothing found for “${searched}”.` : `${hits.length}${next ? '+' : ''} found for “${searched}”.`}
            </p>
          )}
        </div>
        {hits && hits.length > 0 && (
          <ul className="message-search-results" data-testid="search-results">
            {hits.map((h) => (
              <li key={h.messageId}>
                <button type="button" className="secondary" onClick={() => onJump(h)}>
                  <span className="hint">
                    {h.role === 'user' ? 'You' : h.worldName} · {scope === 'all' ? `${h.worldName} — ${h.sessionTitle} · ` : ''}
                    {shortDate(h.createdAt)}
                  </span>
                  <br />
                  <Marked text={h.snippet} q={searched} />
                </button>
              </li>
            ))}
          </ul>
        )}
        {next && (
          <button type="button" className="secondary" disabled={busy} onClick={() => void search(next)}>
            More results
          </button>
        )}
      </div>
    </div>
  );
}
