/**
 * The character editor's data (issue 30 D): the saved world, the character sheet being edited
 * (kept in this browser until it is saved, like the studio's draft), the portrait chosen for the
 * next save, and the world the sheet makes — through the card mapping of @yumina/world
 * (`applyCharacterSheet`), validated as any edit is.
 */
import { applyCharacterSheet, type CharacterSheet, emptySheet, readCharacterSheet, validateWorld, type WorldDefinition } from '@yumina/world';
import { useEffect, useMemo, useRef, useState } from 'react';
import { PORTRAIT_BYTES, type ServerWorld, send, uploadPortrait } from './server.ts';

const DRAFT_PREFIX = 'yumina.character.draft.';
interface SheetDraft {
  sheet: CharacterSheet;
  savedAt: string;
}
const draftKey = (worldId: string | null) => DRAFT_PREFIX + (worldId ?? 'new');
function readDraft(worldId: string | null): SheetDraft | null {
  try {
    const draft = JSON.parse(window.localStorage.getItem(draftKey(worldId)) ?? 'null') as SheetDraft | null;
    return draft && typeof draft.sheet === 'object' && Array.isArray(draft.sheet?.greetings) && Array.isArray(draft.sheet?.lore) ? draft : null;
  } catch {
    return null;
  }
}
function writeDraft(worldId: string | null, sheet: CharacterSheet): void {
  try {
    window.localStorage.setItem(draftKey(worldId), JSON.stringify({ sheet, savedAt: new Date().toISOString() }));
  } catch {
    // Storage full or disabled: the sheet stays in memory only.
  }
}
function clearDraft(worldId: string | null): void {
  try {
    window.localStorage.removeItem(draftKey(worldId));
  } catch {}
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Which of the sheet's fields a validator path of the derived world belongs to. */
export type SheetField = 'name' | 'tagline' | 'description' | 'personality' | 'scenario' | 'greetings' | 'exampleDialogue' | 'lore' | 'tags' | 'other';
export interface SheetIssue {
  field: SheetField;
  message: string;
}
function fieldOf(world: Record<string, unknown>, path: string): SheetField {
  if (path === 'name') return 'name';
  if (path === 'description') return 'tagline';
  if (path.startsWith('customTags')) return 'tags';
  const match = /^entries\[(\d+)\](?:\.(\w+))?/.exec(path);
  const entry = match ? ((world.entries as Record<string, unknown>[] | undefined)?.[Number(match[1])] ?? null) : null;
  if (!entry) return 'other';
  if (entry.role === 'greeting') return 'greetings';
  if (entry.role === 'character') return match?.[2] === 'name' ? 'name' : 'description';
  if (entry.role === 'personality') return 'personality';
  if (entry.role === 'scenario') return 'scenario';
  if (entry.section === 'examples') return 'exampleDialogue';
  return 'lore';
}

function valid(world: unknown): WorldDefinition | null {
  const result = validateWorld(world);
  return result.ok ? result.world : null;
}

export function useCharacter(worldId: string | null, author: string) {
  const [server, setServer] = useState<ServerWorld | null>(null);
  const [base, setBase] = useState<WorldDefinition | null>(null);
  const [saved, setSaved] = useState<CharacterSheet | null>(null);
  const [sheet, setSheetState] = useState<CharacterSheet | null>(null);
  const [portrait, setPortrait] = useState<File | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [restoredAt, setRestoredAt] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const loaded = useRef(false);

  useEffect(() => {
    if (loaded.current) return;
    loaded.current = true;
    void (async () => {
      const draft = readDraft(worldId);
      if (!worldId) {
        setSheetState(draft?.sheet ?? emptySheet());
        if (draft) setRestoredAt(draft.savedAt);
        return;
      }
      const res = await send<ServerWorld & { canEdit?: boolean }>(`/api/worlds/${encodeURIComponent(worldId)}`, 'GET');
      if (res.status !== 200) return setLoadError(res.body.error?.message ?? `Could not load this world (${res.status}).`);
      if (res.body.canEdit === false) return setLoadError('Only the author of this world can edit it.');
      const world = valid(res.body.world);
      if (!world) return setLoadError('This world does not validate as it is stored: open it in the full studio, which shows what to fix.');
      const sheetOfWorld = readCharacterSheet(world);
      setServer(res.body);
      setBase(world);
      setSaved(sheetOfWorld);
      if (draft && !same(draft.sheet, sheetOfWorld)) {
        setSheetState(draft.sheet);
        setRestoredAt(draft.savedAt);
      } else setSheetState(sheetOfWorld);
    })();
  }, [worldId]);

  // The chosen portrait is shown from this browser until it is uploaded.
  useEffect(() => {
    if (!portrait) return setPreview(null);
    const url = URL.createObjectURL(portrait);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [portrait]);

  const world = useMemo(() => (sheet ? { ...applyCharacterSheet(base, sheet), ...(base ? {} : { author }) } : null), [base, sheet, author]);
  const issues = useMemo((): SheetIssue[] => {
    if (!world || !sheet) return [];
    const found: SheetIssue[] = sheet.name.trim() === '' ? [{ field: 'name', message: 'Give the character a name.' }] : [];
    sheet.lore.forEach((entry, i) => {
      if (!entry.keywords.some((keyword) => keyword.trim() !== '')) found.push({ field: 'lore', message: `${entry.name.trim() || `Lore entry ${i + 1}`} needs a keyword: without one it is never sent.` });
    });
    const result = validateWorld(world);
    if (!result.ok) for (const issue of result.issues) found.push({ field: fieldOf(world, issue.path), message: issue.message });
    return found;
  }, [world, sheet]);
  const changed = sheet !== null && !same(sheet, saved);
  const dirty = !server || changed || portrait !== null;

  const setSheet = (next: CharacterSheet) => {
    setSheetState(next);
    setMessage(null);
    // A new character keeps its draft under its id once it is saved.
    writeDraft(server?.id ?? worldId, next);
  };

  const choosePortrait = (file: File) => {
    if (!/^image\/(png|jpeg|gif|webp|avif)$/.test(file.type)) return setMessage({ ok: false, text: 'A portrait must be a PNG, JPEG, GIF, WebP or AVIF image.' });
    if (file.size > PORTRAIT_BYTES) return setMessage({ ok: false, text: `A portrait may be at most 8 MB; this file is ${(file.size / 1024 / 1024).toFixed(1)} MB.` });
    setMessage(null);
    setPortrait(file);
  };

  const removePortrait = async () => {
    if (portrait) return setPortrait(null);
    if (!server?.avatarUrl || !window.confirm('Remove the portrait?')) return;
    const res = await send<ServerWorld>(`/api/worlds/${encodeURIComponent(server.id)}/portrait`, 'DELETE');
    if (res.status === 200) setServer(res.body);
    else setMessage({ ok: false, text: res.body.error?.message ?? `Could not remove the portrait (${res.status}).` });
  };

  /** Saves the world the sheet makes (and the chosen portrait); the world's id, or null when it did not save. */
  async function save(): Promise<string | null> {
    if (!world || !sheet || issues.length > 0 || busy) return null;
    setBusy(true);
    setMessage(null);
    try {
      let current = server;
      if (!current || changed) {
        const res = current
          ? await send<ServerWorld>(`/api/worlds/${encodeURIComponent(current.id)}`, 'PUT', { world, revision: current.revision })
          : await send<ServerWorld>('/api/worlds', 'POST', { world });
        if (res.status === 409 && res.body.current) {
          // Saved elsewhere meanwhile: the sheet now applies to that version (its other parts are kept).
          const theirs = valid(res.body.current.world);
          setServer(res.body.current);
          if (theirs) {
            setBase(theirs);
            setSaved(readCharacterSheet(theirs));
          }
          setMessage({ ok: false, text: `This world was saved elsewhere meanwhile (revision ${res.body.current.revision}). Your edits now apply to that version: check them and save again.` });
          return null;
        }
        if (res.status !== 200 && res.status !== 201) {
          const detail = res.body.issues?.map((issue) => `${issue.path || 'world'}: ${issue.message}`).join('; ');
          setMessage({ ok: false, text: `${res.body.error?.message ?? `Save failed (${res.status})`}${detail ? ` ${detail}` : ''} Your edits are kept in this browser.` });
          return null;
        }
        current = res.body;
        const stored = valid(current.world);
        setServer(current);
        if (stored) {
          setBase(stored);
          setSaved(readCharacterSheet(stored));
        }
        clearDraft(worldId);
        clearDraft(current.id);
        setRestoredAt(null);
      }
      if (portrait) {
        const answer = await uploadPortrait(current.id, portrait);
        if ('error' in answer) {
          setMessage({ ok: false, text: `Saved, but the portrait was not: ${answer.error}` });
          return null;
        }
        setServer(answer.world);
        setPortrait(null);
      }
      setMessage({ ok: true, text: current.status === 'published' && current.liveRevision !== current.revision ? 'Saved; this edit is held for review.' : 'Saved.' });
      return current.id;
    } catch {
      setMessage({ ok: false, text: 'Save failed (network); your edits are kept in this browser.' });
      return null;
    } finally {
      setBusy(false);
    }
  }

  const discardDraft = () => {
    clearDraft(server?.id ?? worldId);
    setRestoredAt(null);
    setSheetState(saved ?? emptySheet());
  };

  return { server, sheet, setSheet, world, issues, dirty, busy, message, loadError, restoredAt, discardDraft, portrait: preview ?? server?.avatarUrl ?? server?.coverUrl ?? null, choosePortrait, removePortrait, hasPortraitToRemove: portrait !== null || !!server?.avatarUrl, save };
}
