/**
 * The studio's local draft: per world, in this browser's localStorage, until the world is saved.
 * A reload or a failed save loses nothing; two tabs of the same world share it, so whichever tab
 * changed last is what a reload restores.
 */
export interface LocalDraft {
  /** The world being edited, as an object (the last text that parsed, in advanced mode). */
  world: Record<string, unknown>;
  /** Advanced mode's raw text, which may not parse yet. */
  text: string | null;
  /** The server revision this draft started from (null for a new world). */
  baseRevision: number | null;
  savedAt: string;
}

const PREFIX = 'yumina.studio.draft.';

export const draftKey = (worldId: string | null) => PREFIX + (worldId ?? 'new');

export function readDraft(worldId: string | null): LocalDraft | null {
  try {
    const raw = window.localStorage.getItem(draftKey(worldId));
    if (!raw) return null;
    const draft = JSON.parse(raw) as LocalDraft;
    return draft && typeof draft.world === 'object' && draft.world ? draft : null;
  } catch {
    return null;
  }
}

export function writeDraft(worldId: string | null, draft: Omit<LocalDraft, 'savedAt'>): void {
  try {
    window.localStorage.setItem(draftKey(worldId), JSON.stringify({ ...draft, savedAt: new Date().toISOString() }));
  } catch {
    // Storage full or disabled: the draft stays in memory only.
  }
}

export function clearDraft(worldId: string | null): void {
  try {
    window.localStorage.removeItem(draftKey(worldId));
  } catch {}
}
