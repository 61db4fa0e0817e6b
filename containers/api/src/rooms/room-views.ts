import { type Member, type QueuedMessage, type Room, roundStateOf } from '@yumina/conversations';

/** What every member sees of a room: its modes, the round's state, whose turn it is. */
export function roomStatusView(room: Room, queued: number) {
  return {
    id: room.sessionId,
    worldId: room.worldId,
    title: room.title,
    triggerMode: room.triggerMode,
    timerSeconds: room.timerSeconds,
    speechMode: room.speechMode,
    turnParticipantId: room.turnParticipantId,
    roundState: roundStateOf(room, queued),
    collectUntil: room.collectUntil?.toISOString() ?? null,
    endedAt: room.endedAt?.toISOString() ?? null,
    maxPlayers: room.maxPlayers,
    maxSpectators: room.maxSpectators,
    /** A page applies a room status only when its version is newer than the one it shows. */
    version: room.version,
  };
}

export const queueView = (q: QueuedMessage) => ({
  id: q.id,
  participantId: q.participantId,
  authorName: q.authorName,
  content: q.content,
  createdAt: q.createdAt.toISOString(),
});

export const memberView = (m: Member, online: ReadonlySet<string>) => ({
  id: m.id,
  kind: m.kind,
  role: m.role,
  accountId: m.accountId,
  name: m.name,
  picture: m.picture,
  online: online.has(m.id),
});
