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

/**
 * The stamp of a world's versions, read beside something else (a turn reads it with its session:
 * packages/conversations): which version a viewer gets and when that version last changed.
 */
export interface VersionStamp {
  owner_id: string;
  status: WorldVersion['status'];
  revision: number;
  updated_at: Date;
  live_revision: number | null;
  live_updated_at: Date | null;
  has_live: boolean;
}

/**
 * Parsed versions by world, kind and change time, per process (the turn path reads the world on
 * every send). Keyed so that nothing is served stale: the working copy by its revision and
 * `updated_at` (every save bumps both), the live version by its revision and `live_updated_at`
 * (every publication or approval sets it), so a held edit changes only the author's key. The
 * decision (owner, published, live snapshot present) is made from the stamp on every call; the
 * cached versions are frozen (readers share them).
 */
const PARSED_MAX = 256;
const parsed = new Map<string, WorldVersion>();

function parsedKey(worldId: string, kind: WorldVersionKind, revision: number | null, changedAt: Date | null): string {
  return `${worldId}|${kind}|${revision ?? ''}|${changedAt?.getTime() ?? ''}`;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function remember(key: string, version: WorldVersion): WorldVersion {
  if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value!);
  parsed.set(key, deepFreeze(version));
  return version;
}

/**
 * Reads a world and decides; 404 (never revealing that it exists) when the viewer gets no version.
 * With `stamp` (read in the caller's own query; null when the world is gone) the decision is made
 * on it and the parsed version comes from the per-process cache when it is current.
 */
export async function worldForViewer(db: Queryable, worldId: string, viewer: WorldViewer, stamp?: VersionStamp | null): Promise<WorldVersion> {
  if (stamp !== undefined) {
    if (stamp === null) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const own = viewer.accountId !== null && stamp.owner_id === viewer.accountId;
    if (!own && !(stamp.status === 'published' && stamp.has_live)) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const key = own ? parsedKey(worldId, 'working', stamp.revision, stamp.updated_at) : parsedKey(worldId, 'live', stamp.live_revision, stamp.live_updated_at);
    const hit = parsed.get(key);
    if (hit) return hit;
  }
  const { rows } = await db.query<VersionRow & { updated_at: Date; live_updated_at: Date | null } & Record<string, unknown>>(
    { name: 'worlds.version_of', text: `select ${VERSION_COLUMNS}, updated_at, live_updated_at from worlds where id = $1` },
    [worldId],
  );
  const row = rows[0];
  const version = row ? versionOf(row, viewer) : null;
  if (!version) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
  if (stamp === undefined) return version; // an unstamped read is the caller's own copy
  const key =
    version.kind === 'working'
      ? parsedKey(worldId, 'working', row!.revision, row!.updated_at)
      : parsedKey(worldId, 'live', row!.live_revision, row!.live_updated_at);
  return remember(key, version);
}

/**
 * Whether an asset of a world is public: the world is live and its live version names the asset.
 * An asset only a held edit uses stays private (its author, administrators, or a signed link).
 */
export function assetIsLive(
  row: { status: string; live_definition: string | null; live_cover_asset_id?: string | null; live_avatar_asset_id?: string | null },
  assetId: string,
): boolean {
  return isLive(row) && (row.live_definition!.includes(assetId) || row.live_cover_asset_id === assetId || row.live_avatar_asset_id === assetId);
}
