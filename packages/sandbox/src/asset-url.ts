/**
 * The asset reference form `asset://<id>` (seed 002 §2.10) and the one resolver of it, used by the
 * player page and inside the sandbox frame (`resolveAssetUrl(ref)`, seed 002 §4), and the id syntax
 * the server checks. A reference resolves only within the CURRENT world's asset path, so naming
 * another world's asset id never reaches that world's asset. A private (unpublished) world's
 * assets are read with a short-lived signed token for that world (the frame has an opaque origin
 * and sends no session cookie); a published world's assets are public and get plain URLs.
 */

/** The asset ids the server issues: `ast_` and 22 base64url characters (16 random bytes). */
export const ASSET_ID_PATTERN = /^ast_[A-Za-z0-9_-]{22}$/;
const ASSET_REF_PATTERN = new RegExp(`^asset://(${ASSET_ID_PATTERN.source.slice(1, -1)})$`);
/** A signed asset token as the server issues it: `<expiry in unix seconds>.<base64url HMAC-SHA256>`. */
export const ASSET_TOKEN_PATTERN = /^[0-9]{1,12}\.[A-Za-z0-9_-]{43}$/;
/** The query parameter that carries the token on an asset URL. */
export const ASSET_TOKEN_PARAM = 'sig';

/** Where and how the current world's assets are read. */
export interface AssetScope {
  /** Origin that serves the assets (only the origin of this URL is used). */
  origin: string;
  /** The current world: references resolve under this world's asset path and no other. */
  worldId: string;
  /** Signed token of this world for a private world's assets; null for a published world (plain URLs). */
  token: string | null;
}

export function isAssetId(id: unknown): id is string {
  return typeof id === 'string' && ASSET_ID_PATTERN.test(id);
}

/** The asset id of an exact `asset://<id>` reference (surrounding whitespace allowed), else null. */
export function assetIdOf(ref: unknown): string | null {
  if (typeof ref !== 'string') return null;
  return ASSET_REF_PATTERN.exec(ref.trim())?.[1] ?? null;
}

/** The read path of one asset of one world. */
export function assetPath(worldId: string, assetId: string): string {
  return `/api/worlds/${encodeURIComponent(worldId)}/assets/${encodeURIComponent(assetId)}`;
}

/** Direct URLs that pass through unchanged: http(s), data:, blob: and root-relative paths. */
function isDirectUrl(text: string): boolean {
  if (/^\/(?![/\\])/.test(text)) return true;
  return /^(https?:\/\/[^\s]+|data:|blob:)/i.test(text);
}

/**
 * `asset://<id>` → the URL of that asset in the current world (signed for a private world).
 * A malformed reference (`asset://../x`, `asset://a/b`, encoded slashes, a different id syntax, a
 * non-string) and anything that is neither a reference nor a direct URL give ''.
 */
export function resolveAssetUrl(ref: unknown, scope: AssetScope): string {
  if (typeof ref !== 'string') return '';
  const text = ref.trim();
  if (/^asset:/i.test(text)) {
    const id = assetIdOf(text);
    if (!id || !scope.worldId) return '';
    let origin: string;
    try {
      origin = new URL(scope.origin).origin;
    } catch {
      return '';
    }
    if (origin === 'null') return '';
    const token = scope.token && ASSET_TOKEN_PATTERN.test(scope.token) ? scope.token : null;
    return `${origin}${assetPath(scope.worldId, id)}${token ? `?${ASSET_TOKEN_PARAM}=${token}` : ''}`;
  }
  return isDirectUrl(text) ? text : '';
}
