import { useEffect, useRef, useState } from 'react';
import { api } from '../lib/api.ts';
import { useSearch } from '../lib/router.tsx';
import { PageLoading } from '../shell/PageLoading.tsx';
import { CardGrid, type WorldCardData } from './world-card.tsx';
import { LIBRARY_TAGS_URL, libraryPageUrl, librarySort } from './library-data.ts';
import { useTitle } from '../lib/title.ts';

interface Page {
  worlds: WorldCardData[];
  hasMore: boolean;
  nextCursor: string | null;
}

const SORTS = [
  ['new', 'Newest'],
  ['popular', 'Most played'],
  ['updated', 'Recently updated'],
  ['relevance', 'Best match'],
] as const;

/** Writes the filters into the address (so a filtered library can be linked and reloaded). */
function setFilters(next: { q: string; tag: string; sort: string }) {
  const p = new URLSearchParams();
  if (next.q) p.set('q', next.q);
  if (next.tag) p.set('tag', next.tag);
  if (next.sort !== (next.q ? 'relevance' : 'new')) p.set('sort', next.sort);
  const qs = p.toString();
  window.history.replaceState(null, '', `/library${qs ? `?${qs}` : ''}`);
  window.dispatchEvent(new Event('yumina:navigate'));
}

/** /library: published worlds as cards; search, tag filter, sort, and further pages by cursor. */
export function LibraryPage() {
  const search = useSearch();
  const tag = search.get('tag') ?? '';
  const urlQ = search.get('q') ?? '';
  // A search ranks by relevance unless the reader picks another order.
  const explicitSort = search.get('sort');
  const sort = librarySort(search);
  useTitle(['Library', tag && `#${tag}`, urlQ && `“${urlQ}”`]);
  const [q, setQ] = useState(urlQ);
  const [tags, setTags] = useState<{ tag: string; count: number }[]>([]);
  const [worlds, setWorlds] = useState<WorldCardData[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);

  useEffect(() => {
    api<{ tags: { tag: string; count: number }[] }>(LIBRARY_TAGS_URL).then((r) => setTags(r.tags), () => setTags([]));
  }, []);
  // Typing updates the address after a pause; the address drives the query. An address changed
  // from elsewhere (a tag link, back) resets the box to it.
  const written = useRef(urlQ);
  useEffect(() => {
    if (urlQ !== written.current) {
      written.current = urlQ;
      setQ(urlQ);
    }
  }, [urlQ]);
  useEffect(() => {
    if (q === written.current) return;
    const timer = setTimeout(() => {
      written.current = q;
      setFilters({ q, tag, sort: explicitSort ?? (q ? 'relevance' : 'new') });
    }, 250);
    return () => clearTimeout(timer);
  }, [q, tag, explicitSort]);

  const query = (cursor: string | null) => api<Page>(libraryPageUrl(search, cursor));
  useEffect(() => {
    let live = true;
    setWorlds(null);
    query(null).then(
      (r) => {
        if (!live) return;
        setWorlds(r.worlds);
        setNext(r.nextCursor);
      },
      () => live && setWorlds([]),
    );
    return () => {
      live = false;
    };
  }, [urlQ, tag, sort]);

  async function more() {
    if (!next) return;
    setLoadingMore(true);
    try {
      const r = await query(next);
      setWorlds((w) => [...(w ?? []), ...r.worlds]);
      setNext(r.nextCursor);
    } finally {
      setLoadingMore(false);
    }
  }

  return (
    <section>
      <h1>Library{tag ? ` · #${tag}` : ''}</h1>
      <form className="filters" role="search" aria-label="Filter worlds" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" aria-label="Search" placeholder="Name or description" value={q} onChange={(e) => setQ(e.target.value)} />
        </label>
        <label>
          Tag
          <select aria-label="Tag" value={tag} onChange={(e) => setFilters({ q, tag: e.target.value, sort })}>
            <option value="">All tags</option>
            {tag && !tags.some((t) => t.tag === tag) && <option value={tag}>#{tag}</option>}
            {tags.map((t) => (
              <option key={t.tag} value={t.tag}>
                #{t.tag} ({t.count})
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort
          <select aria-label="Sort" value={sort} onChange={(e) => setFilters({ q, tag, sort: e.target.value })}>
            {SORTS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <h2 className="visually-hidden">Worlds</h2>
      {worlds === null ? <PageLoading /> : <CardGrid worlds={worlds} label="Worlds" eager={3} />}
      {worlds?.length === 0 && <p className="hint">No published worlds match.</p>}
      {next && (
        <button type="button" className="secondary" onClick={more} disabled={loadingMore}>
          {loadingMore ? 'Loading…' : 'More worlds'}
        </button>
      )}
    </section>
  );
}
