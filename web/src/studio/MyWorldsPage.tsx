import { useCallback, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { Cover, TagList } from '../library/world-card.tsx';
import { useTitle } from '../lib/title.ts';
import { shortDate } from '../lib/dates.ts';

export interface MyWorld {
  id: string;
  name: string;
  description: string;
  tags: string[];
  status: 'saved' | 'unpublished' | 'published' | 'held';
  revision: number;
  liveRevision: number | null;
  updatedAt: string;
  coverUrl: string | null;
  review: { state: string; kind: string; submittedAt: string | null; reason: string | null } | null;
}

type Group = 'draft' | 'review' | 'held-edit' | 'published' | 'rejected';

/** Which shelf a work belongs on: a draft, in review, published (with or without a held edit), or rejected. */
export function groupOf(w: MyWorld): Group {
  if (w.review?.state === 'pending') return w.status === 'published' ? 'held-edit' : 'review';
  if (w.status === 'published') return 'published';
  if (w.review?.state === 'rejected') return 'rejected';
  return 'draft';
}

const GROUPS: [Group, string][] = [
  ['draft', 'Drafts'],
  ['review', 'In review'],
  ['held-edit', 'Published, with an edit in review'],
  ['published', 'Published'],
  ['rejected', 'Not approved'],
];

/** /studio: the author's worlds by state, with open, duplicate and delete (confirmed). */
export function MyWorldsPage() {
  useTitle(['My worlds']);
  const { loading, info } = useSession();
  const [worlds, setWorlds] = useState<MyWorld[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const load = useCallback(() => {
    api<{ worlds: MyWorld[] }>('/api/worlds').then((r) => setWorlds(r.worlds), () => setWorlds([]));
  }, []);
  useEffect(() => {
    if (!loading && !info?.account) navigate(`/login?returnTo=${encodeURIComponent('/studio')}`);
    else if (info?.account) load();
  }, [loading, info, load]);
  if (!info?.account) return <p>Loading…</p>;

  async function duplicate(w: MyWorld) {
    const copy = await api<{ id: string }>(`/api/worlds/${encodeURIComponent(w.id)}/duplicate`, { method: 'POST' });
    setMessage(`Copied "${w.name}".`);
    load();
    return copy;
  }
  async function remove(w: MyWorld) {
    if (!window.confirm(`Delete "${w.name}" for good? Its sessions, assets and update history go with it.`)) return;
    await api(`/api/worlds/${encodeURIComponent(w.id)}`, { method: 'DELETE' });
    setMessage(`Deleted "${w.name}".`);
    load();
  }

  return (
    <section>
      <div className="spread">
        <h1>My worlds</h1>
        <div className="row">
          <Link to="/studio/new/character" className="button">
            New character
          </Link>
          <Link to="/studio/new" className="button secondary">
            New world
          </Link>
        </div>
      </div>
      {message && <p role="status">{message}</p>}
      {worlds === null && <p>Loading…</p>}
      {worlds?.length === 0 && (
        <div className="card">
          <p>You have no worlds yet. Make a character in plain words (New character), start a world from a blank page, or import a character card or world file in the studio.</p>
        </div>
      )}
      {GROUPS.map(([group, title]) => {
        const shelf = (worlds ?? []).filter((w) => groupOf(w) === group);
        if (!shelf.length) return null;
        return (
          <section key={group} className="state-group" aria-labelledby={`group-${group}`} data-testid={`group-${group}`}>
            <h2 id={`group-${group}`}>
              {title} <span className="badge muted">{shelf.length}</span>
            </h2>
            <ul className="cards">
              {shelf.map((w) => (
                <li key={w.id} className="world-card" data-testid="my-world" data-world-id={w.id}>
                  <Cover url={w.coverUrl} name={w.name} seed={w.id} />
                  <div className="body">
                    <h3>
                      <Link to={`/studio/${encodeURIComponent(w.id)}`}>{w.name}</Link>
                    </h3>
                    <span className="hint">Edited {shortDate(w.updatedAt)}</span>
                    {(group === 'review' || group === 'held-edit') && w.review?.submittedAt && (
                      <span className="badge warn">In review since {shortDate(w.review.submittedAt)}</span>
                    )}
                    {group === 'rejected' && (
                      <p className="error" data-testid="rejection-reason">
                        Not approved: {w.review?.reason}
                      </p>
                    )}
                    <TagList tags={w.tags} link={false} />
                    <div className="row">
                      <Link to={`/studio/${encodeURIComponent(w.id)}`} className="button secondary" aria-label={`Open ${w.name}`}>
                        Open
                      </Link>
                      <button type="button" className="secondary" onClick={() => void duplicate(w)} aria-label={`Duplicate ${w.name}`}>
                        Duplicate
                      </button>
                      <button type="button" className="danger" onClick={() => void remove(w)} aria-label={`Delete ${w.name}`}>
                        Delete
                      </button>
                    </div>
                  </div>
                </li>
              ))}
            </ul>
          </section>
        );
      })}
    </section>
  );
}
