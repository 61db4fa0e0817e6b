import { createHmac, timingSafeEqual } from 'node:crypto';
import { ASSET_TOKEN_PATTERN } from '@yumina/sandbox';

/**
 * Short-lived signed access to ONE world's assets: `<exp>.<mac>` where exp is a unix time in seconds
 * and mac = base64url(HMAC-SHA256(key, "asset-link\n<worldId>\n<exp>")). The player (which has the
 * session and may read the world) gets one and hands it to the sandbox frame, whose opaque origin
 * sends no session cookie; the asset read route accepts it for that world's assets only.
 *
 * Expiry falls on a 5-minute grid, 10 to 15 minutes ahead: grants within one window are the same
 * token (so the same URLs and browser cache); the player renews when less than 5 minutes are left.
 */
export const ASSET_LINK_TTL_SECONDS = 600;
export const ASSET_LINK_WINDOW_SECONDS = 300;

export type AssetLinkCheck = 'valid' | 'expired' | 'invalid';

export class AssetLinkSigner {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length < 32) throw new Error('The asset link key must be at least 32 bytes');
    this.#key = key;
  }

  #mac(worldId: string, exp: number): Buffer {
    return createHmac('sha256', this.#key).update(`asset-link\n${worldId}\n${exp}`).digest();
  }

  sign(worldId: string, nowMs = Date.now()): { token: string; expiresAt: Date } {
    const now = Math.floor(nowMs / 1000);
    const exp = Math.ceil((now + ASSET_LINK_TTL_SECONDS) / ASSET_LINK_WINDOW_SECONDS) * ASSET_LINK_WINDOW_SECONDS;
    return { token: `${exp}.${this.#mac(worldId, exp).toString('base64url')}`, expiresAt: new Date(exp * 1000) };
  }

  /** 'valid' only for a genuine, unexpired token of exactly this world. */
  check(worldId: string, token: unknown, nowMs = Date.now()): AssetLinkCheck {
    return this.verify(worldId, token, nowMs).check;
  }

  /** The check, and for a valid token the whole seconds it has left (0 otherwise). */
  verify(worldId: string, token: unknown, nowMs = Date.now()): { check: AssetLinkCheck; secondsLeft: number } {
    const invalid = { check: 'invalid' as const, secondsLeft: 0 };
    if (typeof token !== 'string' || !ASSET_TOKEN_PATTERN.test(token)) return invalid;
    const [expText, macText] = token.split('.') as [string, string];
    const exp = Number(expText);
    const given = Buffer.from(macText, 'base64url');
    const expected = this.#mac(worldId, exp);
    // The canonical encoding only (the last base64url character carries spare bits).
    if (given.length !== expected.length || given.toString('base64url') !== macText || !timingSafeEqual(given, expected)) return invalid;
    const now = Math.floor(nowMs / 1000);
    // No genuine token reaches further ahead than the server issues them (a minute of clock skew between replicas allowed).
    if (exp > now + ASSET_LINK_TTL_SECONDS + ASSET_LINK_WINDOW_SECONDS + 60) return invalid;
    return exp > now ? { check: 'valid', secondsLeft: exp - now } : { check: 'expired', secondsLeft: 0 };
  }
}
