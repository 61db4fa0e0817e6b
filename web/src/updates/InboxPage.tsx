import { useCallback, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { labelsFor, type UpdatesLanguage } from './labels.ts';
import { useTitle } from '../lib/title.ts';

interface InboxItem {
  id: string;
  worldId: string;
  updateId: string | null;
  snapshot: { worldName: string; title: string; content: string; isMajor: boolean; timestamp: string };
  createdAt: string;
  readAt: string | null;
}

/** /app/inbox: the notifications a player received for worlds they favorited, as they were sent. */
export function InboxPage({ language }: { language?: UpdatesLanguage }) {
  const t = labelsFor(language);
  useTitle([t.inbox]);
  const { loading, info } = useSession();
  const [items, setItems] = useState<InboxItem[] | null>(null);
  const load = useCallback(() => {
    api<{ items: InboxItem[] }>('/api/inbox').then((r) => setItems(r.items), () => setItems([]));
  }, []);
  useEffect(() => {
    if (info?.account) load();
  }, [info, load]);
  if (loading) return <p>…</p>;
  if (!info?.account) return <p>{t.signInToRead}</p>;
  async function read(id: string | null) {
    await api('/api/inbox/read', { method: 'POST', json: id ? { id } : {} });
    load();
  }
  return (
    <section className="card">
      <h2>{t.inbox}</h2>
      {items?.length === 0 && <p className="hint">{t.inboxEmpty}</p>}
      {!!items?.some((i) => !i.readAt) && (
        <button type="button" className="secondary" onClick={() => read(null)}>
          {t.markAllRead}
        </button>
      )}
      <ul className="list" data-testid="inbox">
        {items?.map((i) => (
          <li key={i.id} data-testid="inbox-item" data-read={i.readAt ? 'true' : 'false'}>
            <span className="hint">
              {t.from} <Link to={`/worlds/${encodeURIComponent(i.worldId)}`}>{i.snapshot.worldName}</Link>
            </span>
            <div>
              {i.readAt ? i.snapshot.title : <strong>{i.snapshot.title}</strong>} {i.snapshot.isMajor && <span className="badge">{t.major}</span>}
            </div>
            {i.snapshot.content && <p>{i.snapshot.content}</p>}
            {!i.readAt && (
              <button type="button" className="link" onClick={() => read(i.id)}>
                {t.markRead}
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
