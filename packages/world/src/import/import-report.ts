import type { PathSegment } from '../schema/issue-path.ts';
import { formatIssuePath } from '../schema/issue-path.ts';

/**
 * What an import changed, each with the path it happened at (in the imported input's terms for
 * `dropped`/`renamed`, in the result's terms for `converted`/`defaulted`):
 *  - renamed: the same value under another name (`when.type` → `when.eventType`)
 *  - converted: a value rewritten into the v20 form (a position keyword into a section)
 *  - defaulted: a missing value filled in (a world id, an entry's `enabled`)
 *  - dropped: a value with no place in WorldDefinition 20.0.0, with the reason
 */
export type ImportChangeKind = 'renamed' | 'converted' | 'defaulted' | 'dropped';

export interface ImportChange {
  readonly kind: ImportChangeKind;
  readonly path: string;
  readonly message: string;
}

/**
 * A file the imported world names or carries. Without `embedded` it is a link whose file must be
 * uploaded to this platform by hand; with it, the file is inside the import and is stored as an
 * asset of the new world when it is saved (then `storedAs` says where, and `role` what for).
 */
export interface ImportAsset {
  /** The id as the source named it (`@asset:<id>`, or a card asset's name). */
  readonly id: string;
  /** What the world now says in its place (`asset://<id>`), or the source's URI for a card asset. */
  readonly reference: string;
  /** Every path that names it. */
  readonly paths: string[];
  /** `picture`: the PNG card's own image (the cover and the character's avatar); `data`: a `data:` URI inside the file. */
  readonly embedded?: 'picture' | 'data';
  /** After saving: the stored asset (`asset://ast_…`), or why it was not stored. */
  storedAs?: string;
  /** After saving: `cover and avatar` for the picture, `asset` for the others. */
  role?: string;
  /** After saving: why an embedded file was not kept (not an image, audio or font; over a limit). */
  notKept?: string;
}

/** The bytes of an embedded asset (`ImportAsset.embedded`), to be stored when the world is saved. */
export interface ImportMedia {
  /** The ImportAsset's id. */
  readonly id: string;
  readonly embedded: 'picture' | 'data';
  readonly bytes: Uint8Array;
  /** A V3 asset's type (`icon`, `background`, `emotion`, …), when the card said. */
  readonly type?: string;
}

/**
 * A card exported from here and edited elsewhere in a field this world makes of several entries
 * (issue 49 point 8): the world keeps its own text; the author may take the card's instead
 * (takeCardText puts it into the first entry and removes the others).
 */
export interface CardConflict {
  readonly path: string;
  /** The card field (`mes_example`, …). */
  readonly field: string;
  readonly card: string;
  readonly world: string;
  readonly entryIds: string[];
}

export type ImportFormat = 'world' | 'sillytavern-card' | 'sillytavern-world-info';

export interface ImportReport {
  readonly format: ImportFormat;
  /** `5.0.0` for a world, `chara_card_v2`/`chara_card_v3` for a card (`png` when read from one), `world-info` for a lorebook. */
  readonly sourceVersion: string;
  readonly changes: ImportChange[];
  readonly assets: ImportAsset[];
  /** The validator's warnings about the imported world (unused variables, orphaned references). */
  readonly warnings: { path: string; message: string }[];
  /** A card exported from here and edited elsewhere where the edit could not be placed: the author chooses. */
  readonly conflicts?: CardConflict[];
}

/** Collects changes while a converter walks its input. */
export class ReportBuilder {
  readonly changes: ImportChange[] = [];
  /** The importer's own warnings (what a SillyTavern extension would have done), before the validator's. */
  readonly warnings: { path: string; message: string }[] = [];

  warn(path: readonly PathSegment[] | string, message: string): void {
    this.warnings.push({ path: typeof path === 'string' ? path : formatIssuePath(path), message });
  }

  /** `path` as segments, or already written out (`rules[2].actions[1]`). */
  add(kind: ImportChangeKind, path: readonly PathSegment[] | string, message: string): void {
    this.changes.push({ kind, path: typeof path === 'string' ? path : formatIssuePath(path), message });
  }
  renamed(path: readonly PathSegment[] | string, message: string): void {
    this.add('renamed', path, message);
  }
  converted(path: readonly PathSegment[] | string, message: string): void {
    this.add('converted', path, message);
  }
  defaulted(path: readonly PathSegment[] | string, message: string): void {
    this.add('defaulted', path, message);
  }
  dropped(path: readonly PathSegment[] | string, message: string): void {
    this.add('dropped', path, message);
  }
}

/** A change as shown: one line for the same change at many list items (`entries[*]`), with how many. */
export interface FoldedChange extends ImportChange {
  /** How many changes this line stands for (1 when not folded). */
  readonly count: number;
  /** The paths folded into it (just `path` when not folded). */
  readonly paths: string[];
}

/**
 * Folds repeated per-item lines (the same kind and message at `entries[0].probability`,
 * `entries[1].probability`, …) into one counted line `entries[*].probability (34×)`, so the real
 * losses stay readable. Keeps the order of first appearance.
 */
export function foldChanges(changes: readonly ImportChange[]): FoldedChange[] {
  const groups = new Map<string, { change: ImportChange; paths: string[] }>();
  for (const change of changes) {
    const pattern = change.path.replace(/\[(?:\d+|"\d+")\]/g, '[*]');
    const key = `${change.kind}\u0000${pattern}\u0000${change.message}`;
    const group = groups.get(key);
    if (group) group.paths.push(change.path);
    else groups.set(key, { change: { ...change, path: pattern }, paths: [change.path] });
  }
  return [...groups.values()].map(({ change, paths }) => ({ ...change, path: paths.length === 1 ? paths[0]! : change.path, count: paths.length, paths }));
}

/** One line per (folded) change, as the CLI prints them. */
export function reportLines(report: ImportReport): string[] {
  const lines = [`import: ${report.format} ${report.sourceVersion} → WorldDefinition 20.0.0`];
  for (const change of foldChanges(report.changes)) lines.push(`${change.kind} ${change.path || '(world)'}${change.count > 1 ? ` (${change.count}×)` : ''}: ${change.message}`);
  for (const asset of report.assets) {
    if (asset.storedAs) lines.push(`kept asset ${asset.id} → ${asset.storedAs}${asset.role ? ` (${asset.role})` : ''}`);
    else if (asset.notKept) lines.push(`not kept asset ${asset.id}: ${asset.notKept}`);
    else if (asset.embedded === 'picture') lines.push(`keep ${asset.id}: the card's image becomes the world's cover and the character's avatar when saved`);
    else if (asset.embedded === 'data') lines.push(`keep asset ${asset.id} (embedded in the file, ${asset.paths.join(', ')}): stored as an asset of the world when saved`);
    else lines.push(`upload asset ${asset.id} (${asset.reference}), named at ${asset.paths.join(', ')}`);
  }
  for (const warning of report.warnings) lines.push(`warning ${warning.path || '(world)'}: ${warning.message}`);
  return lines;
}
