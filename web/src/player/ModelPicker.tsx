/**
 * The model the player's own AI connection writes with, chosen in the player: a list fetched from
 * that connection (the same catalogue as the model browser the companion opens, ../lib/models.ts),
 * saved as the connection's model (PUT /api/player/model), account-wide; on a world's page it
 * also replaces what that world's interface chose with setModel there. On platform credits the platform's model writes, and there is nothing to choose.
 */
import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { type CatalogueModel, connectionModels } from '../lib/models.ts';
import type { Player } from './use-player.ts';

export function ModelPicker({ p }: { p: Player }) {
  const [models, setModels] = useState<CatalogueModel[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const prefs = p.prefs;
  const own = prefs?.preferredProvider === 'private';
  useEffect(() => {
    if (!own) return;
    let live = true;
    connectionModels().then(
      (list) => {
        if (!live) return;
        setModels(list.models);
        setError(list.error);
      },
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [own]);
  if (!prefs) return null;
  if (!own) {
    return (
      <p className="hint" data-testid="model-picker">
        Model: the platform&apos;s ({prefs.selectedModel ?? 'default'}), paid with credits. <a href="/app/settings#ai-config">Use your own AI connection</a>
      </p>
    );
  }
  const selected = prefs.selectedModel ?? '';
  // the connection's model stays choosable even when the list lacks it (typed in Settings)
  const options = models && selected && !models.some((m) => m.id === selected) ? [{ id: selected, name: selected } as CatalogueModel, ...models] : (models ?? []);
  return (
    <div className="model-picker" data-testid="model-picker">
      {models && models.length > 0 ? (
        <label>
          Model
          <select
            aria-label="Model"
            value={selected}
            disabled={saving || p.busy}
            onChange={(e) => {
              const model = e.target.value;
              setSaving(true);
              api<{ selectedModel: string }>('/api/player/model', { method: 'PUT', json: { model, ...(p.world ? { worldId: p.world.id } : {}) } })
                .then((saved) => {
                  p.setPrefs({ ...prefs, selectedModel: saved.selectedModel });
                  p.toast(`Replies are now written by ${saved.selectedModel}.`, 'success');
                }, (err: Error) => setError(err.message))
                .finally(() => setSaving(false));
            }}
          >
            {options.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name && m.name !== m.id ? `${m.name} (${m.id})` : m.id}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <p className="hint">
          Model: {selected || 'none chosen'}
          {models === null && !error ? ' · loading the list…' : ''}
          {models?.length === 0 && !error && (
            <>
              {' '}
              · <a href="/app/settings#ai-config">Connect your own AI</a> to choose one
            </>
          )}
        </p>
      )}
      {error && (
        <p className="hint" role="status">
          Could not list your connection&apos;s models: {error}. <a href="/app/settings#ai-config">AI connection settings</a>
        </p>
      )}
    </div>
  );
}
