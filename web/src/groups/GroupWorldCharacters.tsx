import { useEffect, useState } from 'react';
import { api, ApiError } from '../lib/api.ts';
import './groups.css';

interface Choice {
  id: string;
  name: string;
}

/**
 * The studio's "Group world" section (docs/GROUPS.md): the author names 2–8 characters (their own
 * worlds or published ones) that a player's group scene of this world brings together, or none.
 */
export function GroupWorldCharacters({ worldId }: { worldId: string }) {
  const [chosen, setChosen] = useState<string[] | null>(null);
  const [choices, setChoices] = useState<Choice[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    const path = `/api/worlds/${encodeURIComponent(worldId)}/characters`;
    void Promise.all([
      api<{ characters: Choice[] }>(path).catch(() => ({ characters: [] as Choice[] })),
      api<{ worlds: Choice[] }>('/api/worlds').catch(() => ({ worlds: [] as Choice[] })),
      api<{ worlds: Choice[] }>('/api/library?pageSize=24&sort=popular').catch(() => ({ worlds: [] as Choice[] })),
    ]).then(([current, mine, library]) => {
      const all = new Map<string, Choice>();
      for (const w of [...current.characters, ...mine.worlds, ...library.worlds]) if (w.id !== worldId && !all.has(w.id)) all.set(w.id, { id: w.id, name: w.name });
      setChoices([...all.values()]);
      setChosen(current.characters.map((c) => c.id));
    });
  }, [worldId]);

  if (chosen === null) return null;
  const toggle = (id: string) => setChosen((now) => (now!.includes(id) ? now!.filter((x) => x !== id) : now!.length >= 8 ? now : [...now!, id]));
  const save = async (characters: string[]) => {
    setSaving(true);
    setMessage(null);
    try {
      await api(`/api/worlds/${encodeURIComponent(worldId)}/characters`, { method: 'PUT', json: { characters } });
      setChosen(characters);
      setMessage(characters.length ? `A group world of ${characters.length} characters: players start its scene from its page.` : 'No longer a group world.');
    } catch (err) {
      setMessage(err instanceof ApiError ? err.message : 'Not saved.');
    } finally {
      setSaving(false);
    }
  };
  return (
    <fieldset className="group-world" data-testid="group-world">
      <legend>Group world</legend>
      <p className="hint">Name 2–8 characters (your worlds or published ones): players start a group scene of them from this world's page, played in this world.</p>
      <ul className="choice-list">
        {choices.map((c) => (
          <li key={c.id}>
            <label>
              <input type="checkbox" checked={chosen.includes(c.id)} onChange={() => toggle(c.id)} disabled={saving} /> {c.name}
            </label>
          </li>
        ))}
      </ul>
      <div className="row">
        <button type="button" className="secondary" disabled={saving || chosen.length === 1} onClick={() => void save(chosen)}>
          Save the characters
        </button>
        {chosen.length === 1 && <span className="hint">Pick at least 2 (or none).</span>}
      </div>
      {message && <p role="status">{message}</p>}
    </fieldset>
  );
}
