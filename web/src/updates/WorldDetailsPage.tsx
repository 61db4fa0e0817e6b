import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';
import { useSession } from '../lib/session.tsx';
import { FavoriteButton } from './FavoriteButton.tsx';
import { UpdateHistory } from './UpdateHistory.tsx';

interface WorldView {
  id: string;
  status: string;
  canEdit: boolean;
  world: { name?: string; description?: string };
}

/**
 * /worlds/<id>: a simple details view of a world with its favorite button and update history.
 * `?inspect=1` is read-only inspection: no editing even for the author.
 */
export function WorldDetailsPage({ id }: { id: string }) {
  const { loading, info } = useSession();
  const [world, setWorld] = useState<WorldView | null>(null);
  const [missing, setMissing] = useState(false);
  useEffect(() => {
    if (loading) return; // fetched once the session is known: the author gets the working copy
    setWorld(null);
    setMissing(false);
    api<WorldView>(`/api/worlds/${encodeURIComponent(id)}`).then(setWorld, () => setMissing(true));
  }, [id, loading]);
  if (missing) return <p role="alert">No such world.</p>;
  if (loading || !world) return <p>…</p>;
  const inspecting = new URLSearchParams(window.location.search).get('inspect') === '1';
  const signedIn = !!info?.account;
  return (
    <div className="world-details">
      <section className="card">
        <h2 data-testid="world-name">{world.world.name ?? id}</h2>
        {world.world.description && <p>{world.world.description}</p>}
        <FavoriteButton worldId={id} signedIn={signedIn} />
      </section>
      <UpdateHistory worldId={id} surfaceCanEdit={signedIn && !inspecting} />
    </div>
  );
}
