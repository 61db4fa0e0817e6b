import { PlayerPage } from '../pages/PlayerPage.tsx';
import type { ServerWorld } from './server.ts';

/**
 * Playtest: the saved working copy played in the player, without publishing (an author plays
 * their own working copy; other players only ever get the live version).
 */
export function Playtest({ server, dirty }: { server: ServerWorld | null; dirty: boolean }) {
  if (!server) return <p className="card">Save the world once to playtest it.</p>;
  return (
    <section className="card playtest" aria-labelledby="playtest-heading" data-testid="playtest">
      <h2 id="playtest-heading">Playtest</h2>
      <p className="hint">
        Plays the saved working copy (revision {server.revision}), not the published version.
        {dirty && ' You have unsaved changes: save them to playtest them.'}
      </p>
      <PlayerPage key={server.revision} worldId={server.id} embedded />
    </section>
  );
}
