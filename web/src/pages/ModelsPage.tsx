import { useCallback, useEffect, useMemo, useState } from 'react';
import { publishModelChoice } from '../companion/model-channel.ts';
import { api } from '../lib/api.ts';
import { type Catalogue, loadCatalogue } from '../lib/models.ts';
import { useTitle } from '../lib/title.ts';

/**
 * The shared model browser (/app/models): search and filter the catalogue, pin and unpin,
 * recently used, context length. Opened by the player's model picker and the companion's picker,
 * which pass `?pick=<channel>&account=<id>`: choosing a model answers them over that channel.
 */
export function ModelsPage() {
  useTitle(['Models']);
  const [catalogue, setCatalogue] = useState<Catalogue | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [query, setQuery] = useState('');
  const [source, setSource] = useState<'all' | 'official' | 'private'>('all');
  const [chosen, setChosen] = useState<string | null>(null);
  const params = new URLSearchParams(window.location.search);
  const picking = params.has('pick');
  const companionOnly = params.get('surface') === 'companion';

  const load = useCallback(() => loadCatalogue().then(setCatalogue, (e: Error) => setError(e.message)), []);
  useEffect(() => {
    void load();
  }, [load]);

  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return (catalogue?.models ?? []).filter(
      (m) =>
        (source === 'all' || m.provider === source) &&
        (!companionOnly || m.provider === 'private') &&
        (!q || m.id.toLowerCase().includes(q) || m.name.toLowerCase().includes(q)),
    );
  }, [catalogue, query, source, companionOnly]);

  const pinned = new Set(catalogue?.pinned ?? []);
  const toggle = async (id: string) => {
    await api(`/api/models/pins/${encodeURIComponent(id)}`, { method: pinned.has(id) ? 'DELETE' : 'PUT' });
    await load();
  };

  return (
    <section className="card">
      <h2>Models</h2>
      {error && <p role="alert">{error}</p>}
      {catalogue?.errors.map((e) => (
        <p key={e} className="hint">
          Could not list some models: {e}
        </p>
      ))}
      <div className="row">
        <input aria-label="Search models" placeholder="Search" value={query} onChange={(e) => setQuery(e.target.value)} />
        {!companionOnly && (
          <select aria-label="Provider" value={source} onChange={(e) => setSource(e.target.value as typeof source)}>
            <option value="all">All providers</option>
            <option value="private">My connection</option>
            <option value="official">Platform (credits)</option>
          </select>
        )}
      </div>
      {catalogue && catalogue.recent.length > 0 && <p className="hint">Recently used: {catalogue.recent.join(', ')}</p>}
      <ul className="list" aria-label="Models">
        {[...shown]
          .sort((a, b) => Number(pinned.has(b.id)) - Number(pinned.has(a.id)))
          .map((m) => (
            <li key={`${m.provider}:${m.id}`} data-model={m.id}>
              <strong>{m.name}</strong> <span className="hint">{m.id}</span> <span className="badge">{m.provider === 'private' ? 'my connection' : 'platform'}</span>{' '}
              <span className="hint">{m.contextLength ? `${m.contextLength.toLocaleString('en')} tokens` : 'context unknown'}</span>
              <button type="button" className="link" aria-pressed={pinned.has(m.id)} onClick={() => void toggle(m.id)}>
                {pinned.has(m.id) ? 'Unpin' : 'Pin'}
              </button>
              {picking && (
                <button
                  type="button"
                  className="link"
                  onClick={() => {
                    if (publishModelChoice(window.location.search, m.id)) setChosen(m.id);
                  }}
                >
                  Use
                </button>
              )}
            </li>
          ))}
      </ul>
      {catalogue && shown.length === 0 && <p className="hint">No models match. Set up your AI connection in settings.</p>}
      {chosen && <p role="status">Chosen: {chosen}. You can close this tab.</p>}
    </section>
  );
}
