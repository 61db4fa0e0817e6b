import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';
import type { WorldDefinition } from '@yumina/world';

/**
 * Which version of a world a viewer gets — the one decision every reader goes through (new
 * sessions, turns and their prompt, `ai.complete`, guest preview and its turns, the library, a
 * world's details, asset reads).
 *
 * A world has a working copy (`worlds.definition`, what its author saves) and a live version
 * (`worlds.live_*`, the last published or approved snapshot; containers/api/src/studio/review.ts).
 * An edit held for review changes only the working copy, so:
 *  - players, guests and every other account get the live version, and only while the world is
 *    published; a world never published (or unpublished, or whose first publication is held) is
 *    not found for them;
 *  - the author (studio, and their own play) gets the working copy;
 *  - administrators read held snapshots through the review queue (world_reviews), not here.
 */

export interface WorldViewer {
  accountId: string | null;
}

export type WorldVersionKind = 'working' | 'live';

export interface WorldVersion {
  kind: WorldVersionKind;
  ownerId: string;
  status: 'saved' | 'unpublished' | 'published' | 'held';
  revision: number;
  name: string;
  description: string;
  tags: string[];
  language: string | null;
  definitionText: string;
  world: WorldDefinition;
}

interface VersionRow {
  owner_id: string;
  status: WorldVersion['status'];
  revision: number;
  name: string;
  description: string;
  tags: string[];
  language: string | null;
  definition: string;
  live_revision: number | null;
  live_definition: string | null;
  live_name: string | null;
  live_description: string | null;
  live_tags: string[] | null;
  live_language: string | null;
}

/** The columns a reader needs to decide (select them, then call `versionOf`). */
export const VERSION_COLUMNS =
  'owner_id, status, revision, name, description, tags, language, definition, live_revision, live_definition, live_name, live_description, live_tags, live_language';

/** True when the world is served to readers other than its author: published, with a live snapshot. */
export const isLive = (row: { status: string; live_definition: string | null }) => row.status === 'published' && row.live_definition !== null;

/** SQL condition (on alias `w`) of worlds that readers other than the author see (the library's cards read their live columns: worlds/library.ts). */
export const LIVE_WHERE = `w.status = 'published' and w.live_definition is not null`;

/** The decision on a row already read: the version `viewer` gets, or null when they get none. */
export function versionOf(row: VersionRow, viewer: WorldViewer): WorldVersion | null {
  if (viewer.accountId !== null && row.owner_id === viewer.accountId) {
    return {
      kind: 'working',
      ownerId: row.owner_id,
      status: row.status,
      revision: row.revision,
      name: row.name,
      description: row.description,
      tags: row.tags,
      language: row.language,
      definitionText: row.definition,
      world: JSON.parse(row.definition) as WorldDefinition,
    };
  }
  if (!isLive(row)) return null;
  return {
    kind: 'live',
    ownerId: row.owner_id,
    status: row.status,
    revision: row.live_revision ?? row.revision,
    name: row.live_name ?? row.name,
    description: row.live_description ?? row.description,
    tags: row.live_tags ?? row.tags,
    language: row.live_language,
    definitionText: row.live_definition!,
    world: JSON.parse(row.live_definition!) as WorldDefinition,
  };
}

/** Reads a world and decides; 404 (never revealing that it exists) when the viewer gets no version. */
export async function worldForViewer(db: Queryable, worldId: string, viewer: WorldViewer): Promise<WorldVersion> {
  const { rows } = await db.query<VersionRow & Record<string, unknown>>(`select ${VERSION_COLUMNS} from worlds where id = $1`, [worldId]);
  const version = rows[0] ? versionOf(rows[0], viewer) : null;
  if (!version) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
  return version;
}

/**
 * Whether an asset of a world is public: the world is live and its live version names the asset.
 * An asset only a held edit uses stays private (its author, administrators, or a signed link).
 */
export function assetIsLive(row: { status: string; live_definition: string | null; live_cover_asset_id?: string | null }, assetId: string): boolean {
  return isLive(row) && (row.live_definition!.includes(assetId) || row.live_cover_asset_id === assetId);
}
