// The module itself, not the package's index: this file is in every page's first chunk.
import { apiPath } from '@yumina/sandbox/api-path';
import { prefetch, SESSION_INFO_URL, type SessionInfo } from './api.ts';

/**
 * The player's first reads, by the same paths the page reads them with (player/use-player.ts), so that
 * what `preloadPlayer` started is what the page takes (lib/api.ts `prefetch`).
 */
export const playerUrls = (worldId: string) => ({
  world: apiPath('worlds', worldId),
  sessions: apiPath('worlds', worldId, 'sessions'),
  preferences: apiPath('worlds', worldId, 'player'),
  personas: '/api/personas',
  /** POST: the token for the world's assets (player/asset-access.ts). */
  assetAccess: apiPath('worlds', worldId, 'asset-access'),
});
export const sessionUrls = (sessionId: string) => ({ session: apiPath('sessions', sessionId), checkpoints: apiPath('sessions', sessionId, 'checkpoints') });

/** The session the player opens: `?session=` when it is one of the account's, else the latest (null: a new one is started). */
export function chosenSession(sessions: readonly { id: string }[], wanted: string | null): string | null {
  return (wanted && sessions.some((s) => s.id === wanted) ? wanted : sessions[0]?.id) ?? null;
}

/**
 * Started with the player's chunk (routes.tsx), before React renders: who is signed in; for an
 * account, at once the world, its sessions, the preferences, the personas and the asset token (asked
 * for only once the world rendered otherwise: a round trip more before the chat shows); once the sessions
 * are known, the one the page will open and its checkpoints. A returning player's chat then waits
 * for those three round trips in parallel with the chunk, not for five after it. A guest (no
 * account) reads nothing more here: the guest preview has reads of its own.
 */
export function preloadPlayer(worldId: string, search: URLSearchParams): void {
  let urls: ReturnType<typeof playerUrls>;
  try {
    urls = playerUrls(worldId);
  } catch {
    return; // not a world id the page can read; it says so itself
  }
  prefetch<SessionInfo>(SESSION_INFO_URL)
    .then(async (info) => {
      if (!info.account) return;
      prefetch(urls.world);
      prefetch(urls.preferences);
      prefetch(urls.personas);
      prefetch(urls.assetAccess, 'POST');
      const { sessions } = await prefetch<{ sessions: { id: string }[] }>(urls.sessions);
      const id = chosenSession(sessions, search.get('session'));
      if (!id) return;
      const next = sessionUrls(id);
      prefetch(next.session);
      prefetch(next.checkpoints);
    })
    .catch(() => {}); // the page reads again and reports it
}
