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

/** An asset the imported world names that must be uploaded to this platform. */
export interface ImportAsset {
  /** The id as the source named it (`@asset:<id>`, or a card asset's name). */
  readonly id: string;
  /** What the world now says in its place (`asset://<id>`), or the source's URI for a card asset. */
  readonly reference: string;
  /** Every path that names it. */
  readonly paths: string[];
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
}

/** Collects changes while a converter walks its input. */
export class ReportBuilder {
  readonly changes: ImportChange[] = [];

  add(kind: ImportChangeKind, path: readonly PathSegment[], message: string): void {
    this.changes.push({ kind, path: formatIssuePath(path), message });
  }
  renamed(path: readonly PathSegment[], message: string): void {
    this.add('renamed', path, message);
  }
  converted(path: readonly PathSegment[], message: string): void {
    this.add('converted', path, message);
  }
  defaulted(path: readonly PathSegment[], message: string): void {
    this.add('defaulted', path, message);
  }
  dropped(path: readonly PathSegment[], message: string): void {
    this.add('dropped', path, message);
  }
}

/** One line per change, as the CLI prints them. */
export function reportLines(report: ImportReport): string[] {
  const lines = [`import: ${report.format} ${report.sourceVersion} → WorldDefinition 20.0.0`];
  for (const change of report.changes) lines.push(`${change.kind} ${change.path || '(world)'}: ${change.message}`);
  for (const asset of report.assets) lines.push(`upload asset ${asset.id} (${asset.reference}), named at ${asset.paths.join(', ')}`);
  for (const warning of report.warnings) lines.push(`warning ${warning.path || '(world)'}: ${warning.message}`);
  return lines;
}
