import { canHost, canPlay, type Room, type SessionAccess, sessionAccess } from '@yumina/conversations';
import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';

export type RoomAccess = SessionAccess & { room: Room };

/**
 * Who the account is in the room, checked for what a route needs: any `member` (spectators read),
 * one who may `play` (write, act through the interface), or the `host`. Anyone who is not a current
 * member gets 404, as for a room that does not exist (a room reveals nothing to outsiders).
 */
export async function roomAccess(db: Queryable, sessionId: string, accountId: string, need: 'member' | 'play' | 'host'): Promise<RoomAccess> {
  const access = await sessionAccess(db, sessionId, accountId);
  if (!access?.room) throw new HttpError(404, 'NOT_FOUND', 'No such room.');
  if (need === 'play' && !canPlay(access.role)) throw new HttpError(403, 'SPECTATOR', 'Spectators read along; they cannot write in the room.');
  if (need === 'host' && !canHost(access.role)) throw new HttpError(403, 'HOST_ONLY', 'Only the host can do that.');
  return access as RoomAccess;
}

/** A room that has ended takes nothing new. */
export function assertOpen(room: Room): void {
  if (room.endedAt) throw new HttpError(409, 'ROOM_ENDED', 'This room has ended.');
}
