/**
 * The faces of the chat (issue 30 B): the world's character — its name (the character entry's,
 * `characterName` of @yumina/world: "Mina Park", not "Rain on Willow Street") and its portrait
 * (the character's avatar, else the world's cover) — and the player, by the active persona's name
 * and avatar, else the account's.
 */
import { characterName } from '@yumina/world';
import type { Player } from './use-player.ts';

export interface ChatNames {
  world: string;
  worldAvatar: string | null;
  user: string;
  userAvatar: string | null;
}

/** A picture the page may show: an https link, or a picture uploaded to this platform (a same-origin path). */
export function shownPicture(url: string | null | undefined): string | null {
  if (!url) return null;
  return url.startsWith('https://') || url.startsWith('/api/') ? url : null;
}

export function chatNames(p: Pick<Player, 'world' | 'persona' | 'account'>): ChatNames {
  const world = p.world;
  return {
    world: world ? characterName(world.world) : 'World',
    worldAvatar: shownPicture(world?.avatarUrl) ?? shownPicture(world?.coverUrl),
    user: p.persona?.name ?? p.account?.displayName ?? p.account?.username ?? 'You',
    userAvatar: shownPicture(p.persona?.avatar) ?? p.account?.picture ?? null,
  };
}
