/**
 * The player's access to the current world's assets: POST /api/worlds/<id>/asset-access gives a
 * short-lived signed token for a private world (null for a published one, whose assets are public).
 * The token goes into every URL `resolveAssetUrl` makes — on this page and, through SandboxHost's
 * `assetToken`, inside the sandbox frame — and is renewed before it expires.
 */
import type { AssetScope } from '@yumina/sandbox';
import { useEffect, useState } from 'react';
import { ApiError, api } from '../lib/api.ts';
import { playerUrls } from '../lib/player-reads.ts';

export interface AssetAccess {
  worldId: string;
  token: string | null;
  expiresAt: string | null;
  /** Seconds the token is valid for, by the server's clock (no client clock skew involved). */
  expiresInSeconds: number | null;
}

/** Renew when less than this is left; a token is valid 10 to 15 minutes. */
export const RENEW_BEFORE_SECONDS = 300;
const MIN_DELAY_MS = 15_000;
const RETRY_MS = 30_000;

/** Milliseconds until the token should be renewed, or null when there is nothing to renew. */
export function renewDelayMs(access: Pick<AssetAccess, 'token' | 'expiresInSeconds'>): number | null {
  if (!access.token || access.expiresInSeconds === null) return null;
  return Math.max(MIN_DELAY_MS, (access.expiresInSeconds - RENEW_BEFORE_SECONDS) * 1000);
}

/**
 * The asset scope of a world for `resolveAssetUrl`: null until the first answer (so nothing renders
 * with a URL that will not load); if the request fails the scope has no token and it is retried.
 */
export function useAssetScope(worldId: string | null, origin: string = window.location.origin): AssetScope | null {
  const [scope, setScope] = useState<AssetScope | null>(null);
  useEffect(() => {
    setScope(null);
    if (!worldId) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      let delay: number | null;
      try {
        const access = await api<AssetAccess>(playerUrls(worldId).assetAccess, { method: 'POST' });
        if (cancelled) return;
        setScope((prev) => (prev && prev.worldId === worldId && prev.token === access.token && prev.origin === origin ? prev : { origin, worldId, token: access.token }));
        delay = renewDelayMs(access);
      } catch (error) {
        if (cancelled) return;
        // Keep a token we still have (it may be valid a while longer); otherwise plain URLs.
        setScope((prev) => prev ?? { origin, worldId, token: null });
        // Not allowed (or no such world) stays so; a network or server failure is retried.
        delay = error instanceof ApiError && error.status >= 400 && error.status < 500 ? null : RETRY_MS;
      }
      if (delay !== null) timer = setTimeout(() => void load(), delay);
    };
    void load();
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [worldId, origin]);
  return scope;
}
