/**
 * The asset reference form `asset://<id>` that authors write in tracks, entries and custom UI.
 * A reference resolves only within its own world (GET /api/worlds/<worldId>/assets/<id>), so a
 * world cannot reach another world's private asset by naming its id. Direct URLs pass through.
 * The player and the sandbox host implement the sandbox API's resolveAssetUrl(ref) with this.
 */
const ASSET_REF = /^asset:\/\/(ast_[A-Za-z0-9_-]{16,})$/;

export function isAssetRef(ref: string): boolean {
  return ASSET_REF.test(ref.trim());
}

export function resolveAssetUrl(ref: string, worldId: string): string {
  const m = ASSET_REF.exec(ref.trim());
  if (!m) return ref;
  return `/api/worlds/${encodeURIComponent(worldId)}/assets/${m[1]}`;
}
