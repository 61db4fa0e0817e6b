import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { labelsFor, type UpdatesLanguage } from './labels.ts';

interface FavoriteState {
  favorited: boolean;
  count: number;
}

/** Favorites a world; players who favorited a world are the ones its author may notify. */
export function FavoriteButton({ worldId, signedIn, language }: { worldId: string; signedIn: boolean; language?: UpdatesLanguage }) {
  const t = labelsFor(language);
  const [state, setState] = useState<FavoriteState | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<FavoriteState>(`/api/worlds/${encodeURIComponent(worldId)}/favorite`).then(setState, () => setState(null));
  }, [worldId]);
  if (!state) return null;
  return (
    <span className="row">
      {signedIn && (
        <button
          type="button"
          className={state.favorited ? 'secondary' : undefined}
          aria-pressed={state.favorited}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            try {
              setState(await api<FavoriteState>(`/api/worlds/${encodeURIComponent(worldId)}/favorite`, { method: state.favorited ? 'DELETE' : 'PUT' }));
            } finally {
              setBusy(false);
            }
          }}
        >
          {state.favorited ? t.unfavorite : t.favorite}
        </button>
      )}
      <span className="hint" data-testid="favorite-count">
        {t.favorites(state.count)}
      </span>
    </span>
  );
}
