import { excerpt } from '../lib/text.ts';
import type { ServerWorld } from './server.ts';

const short = (v: unknown) => excerpt(v === undefined ? '(none)' : JSON.stringify(v), 160);

/** What changed between the author's copy and the one saved elsewhere, field by field. */
export function differences(mine: Record<string, unknown>, theirs: Record<string, unknown>): { key: string; mine: unknown; theirs: unknown }[] {
  const keys = [...new Set([...Object.keys(theirs), ...Object.keys(mine)])];
  return keys.filter((k) => k !== 'editorMode' && JSON.stringify(mine[k]) !== JSON.stringify(theirs[k])).map((key) => ({ key, mine: mine[key], theirs: theirs[key] }));
}

/**
 * The 409 view: the world was saved elsewhere since this copy was loaded. Both versions stay
 * until the author chooses: keep mine (overwrite, knowingly), take theirs, or keep both (mine
 * saved as a new world). The local draft keeps "mine" meanwhile.
 */
export function ConflictView({
  mine,
  theirs,
  baseRevision,
  busy,
  onKeepMine,
  onTakeTheirs,
  onKeepBoth,
}: {
  mine: Record<string, unknown>;
  theirs: ServerWorld;
  baseRevision: number | null;
  busy: boolean;
  onKeepMine(): void;
  onTakeTheirs(): void;
  onKeepBoth(): void;
}) {
  const diff = differences(mine, theirs.world);
  return (
    <section className="card conflict" aria-label="Conflict">
      <h3>This world was saved elsewhere</h3>
      <p>
        Another tab or device saved revision {theirs.revision} after your copy (revision {baseRevision ?? '?'}) was loaded. Nothing was overwritten: choose
        which version to keep.
      </p>
      {diff.length === 0 ? (
        <p className="hint">Both versions have the same content.</p>
      ) : (
        <table className="diff">
          <thead>
            <tr>
              <th>Field</th>
              <th>Saved elsewhere (theirs)</th>
              <th>Your copy (mine)</th>
            </tr>
          </thead>
          <tbody>
            {diff.map((d) => (
              <tr key={d.key} data-testid={`conflict-${d.key}`}>
                <td>
                  <code>{d.key}</code>
                </td>
                <td className="theirs">{short(d.theirs)}</td>
                <td className="mine">{short(d.mine)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="row">
        <button type="button" disabled={busy} onClick={onKeepMine}>
          Keep mine
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={onTakeTheirs}>
          Take theirs
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={onKeepBoth}>
          Keep both (save mine as a copy)
        </button>
      </div>
    </section>
  );
}
