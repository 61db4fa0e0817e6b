import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { Link } from '../lib/router.tsx';

interface Card {
  id: string;
  name: string;
  description: string;
  tags: string[];
  language: string | null;
  author: string | null;
}

/** The library: published worlds with search; each opens its details (and from there the player). */
export function LibraryPage() {
  const [q, setQ] = useState('');
  const [worlds, setWorlds] = useState<Card[] | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => {
      api<{ worlds: Card[] }>(`/api/library?pageSize=50${q ? `&q=${encodeURIComponent(q)}` : ''}`).then((r) => setWorlds(r.worlds), () => setWorlds([]));
    }, 200);
    return () => clearTimeout(timer);
  }, [q]);
  return (
    <section>
      <h2>Library</h2>
      <input aria-label="Search worlds" placeholder="Search worlds" value={q} onChange={(e) => setQ(e.target.value)} />
      <ul className="list" aria-label="Worlds">
        {(worlds ?? []).map((w) => (
          <li key={w.id} className="card">
            <Link to={`/worlds/${encodeURIComponent(w.id)}`}>{w.name}</Link> <span className="hint">by {w.author ?? 'unknown'}</span>
            <p className="hint">{w.description.slice(0, 240)}</p>
            <Link to={`/play/${encodeURIComponent(w.id)}`}>Play</Link>
          </li>
        ))}
      </ul>
      {worlds?.length === 0 && <p className="hint">No published worlds match.</p>}
    </section>
  );
}
