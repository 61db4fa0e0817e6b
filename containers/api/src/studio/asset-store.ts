import { createHash, randomBytes } from 'node:crypto';
import type { ObjectStore } from '@yumina/assets';
import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';
import { sniffAssetType } from './asset-type.ts';

/** Per-file and per-world limits of world assets (413 beyond them; nothing is stored). */
export const ASSET_LIMITS = { fileBytes: 8 * 1024 * 1024, worldBytes: 64 * 1024 * 1024, worldFiles: 500 } as const;

export const assetKey = (worldId: string, assetId: string) => `assets/${worldId}/${assetId}`;

export interface AssetRow {
  id: string;
  world_id: string;
  kind: string;
  content_type: string;
  size: number;
  name: string;
  sha256: string;
  created_at: Date;
}

/**
 * Stores one asset of a world: its type by content (images, audio and fonts only), the per-file
 * and per-world limits, the row and the object. The one way in for uploads and imported pictures.
 * Run inside the caller's transaction after it locked the world's row (`for update`), so two
 * writers cannot both pass the per-world limit; a failed write rolls the row back.
 */
export async function storeWorldAsset(
  tx: Queryable,
  objects: ObjectStore,
  asset: { worldId: string; ownerId: string; bytes: Uint8Array; name: string; sha256?: string },
): Promise<AssetRow> {
  const { worldId, ownerId, bytes, name } = asset;
  if (bytes.length === 0) throw new HttpError(400, 'EMPTY_UPLOAD', 'Send the file as the request body.');
  if (bytes.length > ASSET_LIMITS.fileBytes) throw new HttpError(413, 'FST_ERR_CTP_BODY_TOO_LARGE', `An asset may be at most ${ASSET_LIMITS.fileBytes / 1024 / 1024} MiB.`);
  const type = sniffAssetType(bytes);
  if (!type) throw new HttpError(415, 'UNSUPPORTED_ASSET_TYPE', 'Only images (PNG, JPEG, GIF, WebP, AVIF), audio (MP3, AAC, OGG, WAV, FLAC, M4A) and fonts (WOFF, WOFF2, TTF, OTF) can be uploaded; the content of this file is none of these.');
  const { rows } = await tx.query<{ total: string; n: number }>(
    'select coalesce(sum(size), 0)::text as total, count(*)::int as n from world_assets where world_id = $1',
    [worldId],
  );
  const used = Number(rows[0]!.total);
  if (used + bytes.length > ASSET_LIMITS.worldBytes || rows[0]!.n >= ASSET_LIMITS.worldFiles) {
    throw new HttpError(413, 'WORLD_ASSETS_FULL', `This world's assets would exceed ${ASSET_LIMITS.worldBytes / 1024 / 1024} MiB or ${ASSET_LIMITS.worldFiles} files (in use: ${Math.ceil(used / 1024)} KiB, ${rows[0]!.n} files).`);
  }
  const id = `ast_${randomBytes(16).toString('base64url')}`;
  // A large file's hash may come from where its bytes were made (an import's worker thread), off the event loop.
  const sha256 = asset.sha256 ?? createHash('sha256').update(bytes).digest('hex');
  const inserted = await tx.query<AssetRow & Record<string, unknown>>(
    `insert into world_assets (id, world_id, owner_id, kind, content_type, size, name, sha256)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [id, worldId, ownerId, type.kind, type.contentType, bytes.length, name, sha256],
  );
  // Stored inside the transaction: a failed write rolls the row back, so nothing half-exists.
  await objects.put(assetKey(worldId, id), bytes, type.contentType);
  return inserted.rows[0]!;
}
