import { z } from 'zod';
import { CompanionNotebookInvalidError } from './errors.ts';
import { CHAPTERS, type ChapterId } from './levels.ts';
import { COMPANION_LIMITS, NOTEBOOK_BOUNDS } from './limits.ts';
import { cleanText, storedJsonBytes, truncateUtf8 } from './text.ts';

/**
 * The per-account companion notebook (seed §2.1) as a pure value: bounds, UTF-8 byte budgeting,
 * revision handling. The database layer stores `Notebook` as JSON and compares `revision` on write.
 * Entries carry the level and campaign cycle they belong to so the prompt can be scoped.
 */

export interface NotebookTurn {
  role: 'player' | 'companion';
  text: string;
  level: number;
  cycle: number;
  /** Wall time (ms since epoch) supplied by the caller. */
  at: number;
}

/** Something the game observed: a visit, a tin outcome, an offer action, a lost attempt… */
export interface Milestone {
  /** Idempotency key: recording the same key again is a no-op. */
  key: string;
  kind: string;
  level: number;
  cycle: number;
  at: number;
  detail?: string;
}

export interface PinnedNote {
  id: string;
  text: string;
  at: number;
}

/** A verbatim player statement, accepted from a model quote (see quote.ts). Never a game event. */
export interface PlayerStatement {
  text: string;
  level: number;
  cycle: number;
  at: number;
}

export type IntroductionKind = 'first' | 'replay' | 'imported';

export interface ChapterMarker {
  chapter: ChapterId;
  cycle: number;
  kind: IntroductionKind;
  at: number;
}

export interface Notebook {
  version: 1;
  /** Increases with every applied write. */
  revision: number;
  /** Increases with every reset; a write based on an older epoch is never applied. */
  epoch: number;
  /** Highest campaign cycle the player has completed (0: none); enables the replay greeting. */
  completedCycles: number;
  turns: NotebookTurn[];
  milestones: Milestone[];
  notes: PinnedNote[];
  statements: PlayerStatement[];
  chapters: ChapterMarker[];
}

export function emptyNotebook(): Notebook {
  return { version: 1, revision: 0, epoch: 0, completedCycles: 0, turns: [], milestones: [], notes: [], statements: [], chapters: [] };
}

const int = z.number().int().min(0);
const level = z.number().int().min(1).max(10_000);
const storedSchema = z.object({
  version: z.literal(1),
  revision: int,
  epoch: int,
  completedCycles: int,
  turns: z.array(z.object({ role: z.enum(['player', 'companion']), text: z.string(), level, cycle: level, at: int })),
  milestones: z.array(
    z.object({ key: z.string(), kind: z.string(), level, cycle: level, at: int, detail: z.string().optional() }),
  ),
  notes: z.array(z.object({ id: z.string(), text: z.string(), at: int })),
  statements: z.array(z.object({ text: z.string(), level, cycle: level, at: int })),
  chapters: z.array(z.object({ chapter: z.enum(CHAPTERS), cycle: level, kind: z.enum(['first', 'replay', 'imported']), at: int })),
});

/** Read a stored notebook (null or undefined: none yet). Throws CompanionNotebookInvalidError on a bad shape. */
export function parseNotebook(stored: unknown): Notebook {
  if (stored === null || stored === undefined) return emptyNotebook();
  const parsed = storedSchema.safeParse(typeof stored === 'string' ? JSON.parse(stored) : stored);
  if (!parsed.success) throw new CompanionNotebookInvalidError(parsed.error.issues[0]?.message ?? 'bad shape');
  return parsed.data;
}

/** Stored size as the database measures it (jsonb text form). */
export function notebookStoredBytes(notebook: Notebook): number {
  return storedJsonBytes(notebook);
}

const newest = <T>(items: T[], max: number): T[] => (items.length > max ? items.slice(items.length - max) : items);

/**
 * Apply the count bounds, then the 64 KiB byte budget: old turns are trimmed first, then (only if a
 * notebook could still not fit) old milestones, statements and markers. The result always fits.
 */
export function fitNotebook(notebook: Notebook, maxBytes: number = COMPANION_LIMITS.notebookStoredMaxBytes): Notebook {
  const nb: Notebook = {
    ...notebook,
    turns: newest(notebook.turns, NOTEBOOK_BOUNDS.turns),
    milestones: newest(notebook.milestones, NOTEBOOK_BOUNDS.milestones),
    notes: newest(notebook.notes, NOTEBOOK_BOUNDS.pinnedNotes),
    statements: newest(notebook.statements, NOTEBOOK_BOUNDS.statements),
    chapters: newest(notebook.chapters, NOTEBOOK_BOUNDS.chapterMarkers),
  };
  let size = notebookStoredBytes(nb);
  const order: (keyof Pick<Notebook, 'turns' | 'milestones' | 'statements' | 'chapters' | 'notes'>)[] = [
    'turns',
    'milestones',
    'statements',
    'chapters',
    'notes',
  ];
  for (const field of order) {
    const list: unknown[] = [...nb[field]];
    let drop = 0;
    while (size > maxBytes && drop < list.length) {
      // Removing one element removes its bytes and one ", " separator (none for the last one).
      size -= storedJsonBytes(list[drop]) + (drop < list.length - 1 ? 2 : 0);
      drop++;
    }
    if (drop > 0) (nb as unknown as Record<string, unknown[]>)[field] = list.slice(drop);
  }
  return nb;
}

export type TurnInput = Omit<NotebookTurn, 'at'>;
export type MilestoneInput = Omit<Milestone, 'at'>;

/**
 * Notebook mutations. Every one of them needs the exact revision it was based on (seed 001 §7:
 * "notebook write with outdated revision: not applied"). Additive ones may be re-applied by the
 * writer on the fresh notebook after a conflict; destructive ones are re-decided by the player.
 */
export type NotebookMutation =
  | { op: 'turns'; turns: TurnInput[] }
  | { op: 'record'; milestones: MilestoneInput[] }
  | { op: 'statement'; text: string; level: number; cycle: number }
  | { op: 'introduction'; chapter: ChapterId; cycle: number; kind: IntroductionKind }
  | { op: 'complete'; cycle: number }
  | { op: 'note-add'; id: string; text: string }
  | { op: 'note-remove'; id: string }
  | { op: 'reset' };

const DESTRUCTIVE = new Set<NotebookMutation['op']>(['note-remove', 'reset']);

/** Whether a client may re-apply this mutation by itself on a fresher notebook after a conflict. */
export function reapplicableMutation(mutation: NotebookMutation): boolean {
  return !DESTRUCTIVE.has(mutation.op);
}

/** The revision and epoch the writer last saw (from the read or the config/notebook response). */
export interface WriteBase {
  revision: number;
  epoch: number;
}

export type NotebookWrite =
  | { status: 'applied'; notebook: Notebook; changed: boolean }
  /** `revision`: based on an outdated revision. `reset`: the notebook was reset since. Nothing was applied. */
  | { status: 'conflict'; reason: 'revision' | 'reset'; notebook: Notebook }
  | { status: 'invalid'; reason: 'notes-full' | 'empty-text' | 'unknown-note'; notebook: Notebook };

/**
 * Apply one mutation to the current stored notebook. An old in-flight reply, another tab or a reset
 * is never overwritten: after a reset (epoch changed) nothing based on the old epoch is applied, and
 * any write based on an outdated revision is refused whole, nothing of it merged (seed 001 §7). The
 * caller persists with `UPDATE … WHERE revision = $read`; when that matches no row the write is a
 * conflict too. The writer re-reads and re-applies (see `reapplicableMutation`).
 */
export function applyNotebookMutation(current: Notebook, mutation: NotebookMutation, base: WriteBase, wallMs: number): NotebookWrite {
  if (base.epoch !== current.epoch) return { status: 'conflict', reason: 'reset', notebook: current };
  if (base.revision !== current.revision) return { status: 'conflict', reason: 'revision', notebook: current };
  const at = Math.max(0, Math.trunc(wallMs));
  let next: Notebook = current;
  switch (mutation.op) {
    case 'reset':
      next = { ...emptyNotebook(), epoch: current.epoch + 1 };
      break;
    case 'turns': {
      const turns = mutation.turns
        .map((t) => ({ ...t, text: truncateUtf8(cleanText(t.text), NOTEBOOK_BOUNDS.turnTextMaxBytes), at }))
        .filter((t) => t.text.length > 0);
      if (turns.length === 0) return { status: 'invalid', reason: 'empty-text', notebook: current };
      next = { ...current, turns: [...current.turns, ...turns] };
      break;
    }
    case 'record': {
      const known = new Set(current.milestones.map((m) => m.key));
      const added: Milestone[] = [];
      for (const m of mutation.milestones) {
        if (known.has(m.key)) continue;
        known.add(m.key);
        const detail = m.detail === undefined ? undefined : truncateUtf8(cleanText(m.detail), NOTEBOOK_BOUNDS.milestoneDetailMaxBytes);
        added.push({
          key: truncateUtf8(cleanText(m.key), 128),
          kind: truncateUtf8(cleanText(m.kind), 64),
          level: m.level,
          cycle: m.cycle,
          at,
          ...(detail ? { detail } : {}),
        });
      }
      if (added.length === 0) return { status: 'applied', notebook: current, changed: false };
      next = { ...current, milestones: [...current.milestones, ...added] };
      break;
    }
    case 'statement': {
      const text = Array.from(cleanText(mutation.text)).slice(0, NOTEBOOK_BOUNDS.statementMaxChars).join('');
      if (!text) return { status: 'invalid', reason: 'empty-text', notebook: current };
      if (current.statements.some((s) => s.text === text && s.cycle === mutation.cycle)) {
        return { status: 'applied', notebook: current, changed: false };
      }
      next = { ...current, statements: [...current.statements, { text, level: mutation.level, cycle: mutation.cycle, at }] };
      break;
    }
    case 'introduction': {
      if (current.chapters.some((c) => c.chapter === mutation.chapter && c.cycle === mutation.cycle)) {
        return { status: 'applied', notebook: current, changed: false };
      }
      const marker = { chapter: mutation.chapter, cycle: mutation.cycle, kind: mutation.kind, at };
      next = { ...current, chapters: [...current.chapters, marker] };
      break;
    }
    case 'complete':
      if (mutation.cycle <= current.completedCycles) return { status: 'applied', notebook: current, changed: false };
      next = { ...current, completedCycles: mutation.cycle };
      break;
    case 'note-add': {
      const text = truncateUtf8(cleanText(mutation.text), NOTEBOOK_BOUNDS.noteTextMaxBytes);
      if (!text) return { status: 'invalid', reason: 'empty-text', notebook: current };
      if (current.notes.some((n) => n.id === mutation.id)) return { status: 'applied', notebook: current, changed: false };
      if (current.notes.length >= NOTEBOOK_BOUNDS.pinnedNotes) return { status: 'invalid', reason: 'notes-full', notebook: current };
      next = { ...current, notes: [...current.notes, { id: mutation.id, text, at }] };
      break;
    }
    case 'note-remove':
      if (!current.notes.some((n) => n.id === mutation.id)) return { status: 'invalid', reason: 'unknown-note', notebook: current };
      next = { ...current, notes: current.notes.filter((n) => n.id !== mutation.id) };
      break;
  }
  return { status: 'applied', notebook: fitNotebook({ ...next, revision: current.revision + 1 }), changed: true };
}

/** Facts the prompt may use: this campaign cycle, this level or earlier; pinned notes account-wide. */
export interface ScopedNotebook {
  turns: NotebookTurn[];
  milestones: Milestone[];
  statements: PlayerStatement[];
  notes: PinnedNote[];
  chapters: ChapterMarker[];
}

export function scopeNotebook(notebook: Notebook, level: number, cycle: number): ScopedNotebook {
  const inScope = (e: { level: number; cycle: number }) => e.cycle === cycle && e.level <= level;
  return {
    turns: notebook.turns.filter(inScope).slice(-COMPANION_LIMITS.promptDialogueMessages),
    milestones: notebook.milestones.filter(inScope),
    statements: notebook.statements.filter(inScope),
    notes: notebook.notes,
    chapters: notebook.chapters.filter((c) => c.cycle === cycle),
  };
}
