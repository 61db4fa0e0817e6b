import { leaveSession, nextInTurn, passTurn } from '@yumina/conversations';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { signalRoom } from './room-bus.ts';
import { assertOpen, roomAccess } from './room-access.ts';
import { roomRuntimeOf } from './room-runtime.ts';

const participantId = z.string().regex(/^ptc_[A-Za-z0-9_-]{1,64}$/, 'is not a member of a room');
const kickQuery = z.object({ bar: z.enum(['true', 'false']).default('false') });
const roleBody = z.strictObject({ role: z.enum(['player', 'spectator']) });
const turnBody = z.strictObject({ participantId: participantId.optional() });

/** "Is writing" signals per member per 10 s (a client sends one every few seconds while typing). */
const TYPING_PER_10S = 5;

/**
 * Who is in a room (docs/ROOMS.md): the host removes a member (and may bar them: no link lets them
 * back), changes a member between player and spectator, and passes the turn in turn-based speech;
 * a member leaves; a player says they are writing.
 */
export async function memberRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const rooms = roomRuntimeOf(ctx);

  app.delete<{ Params: { id: string; participantId: string } }>('/api/rooms/:id/members/:participantId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { bar } = parseWith(kickQuery, request.query, 'query');
    const { room, participant } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    if (participant?.id === request.params.participantId) throw new HttpError(409, 'HOST_STAYS', 'The host cannot remove themselves; end the room instead.');
    if (!(await leaveSession(db, { sessionId: room.sessionId, participantId: request.params.participantId, bar: bar === 'true' }))) {
      throw new HttpError(404, 'NOT_FOUND', 'No such member in this room.');
    }
    await afterLeave(room.sessionId, request.params.participantId, room.turnParticipantId);
    return { ok: true };
  });

  app.post<{ Params: { id: string } }>('/api/rooms/:id/leave', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { room, participant } = await roomAccess(db, request.params.id, auth.account.id, 'member');
    if (!participant || participant.role === 'host') throw new HttpError(409, 'HOST_STAYS', 'The host cannot leave the room; end it instead.');
    await leaveSession(db, { sessionId: room.sessionId, participantId: participant.id });
    await afterLeave(room.sessionId, participant.id, room.turnParticipantId);
    return { ok: true };
  });

  /** A member's messages waiting for the reply go with them; the turn moves on if they held it. */
  async function afterLeave(sessionId: string, leaving: string, turnHolder: string | null) {
    await db.query('delete from room_queue where session_id = $1 and participant_id = $2', [sessionId, leaving]);
    if (turnHolder === leaving) {
      const next = await nextInTurn(db, sessionId, leaving);
      if (next) await passTurn(db, sessionId, next);
    }
    await rooms.announceMembers(sessionId);
    await rooms.announce(sessionId);
    await rooms.evaluate(sessionId);
  }

  app.patch<{ Params: { id: string; participantId: string } }>('/api/rooms/:id/members/:participantId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(roleBody, request.body);
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    assertOpen(room);
    const counted = body.role === 'spectator' ? ['spectator'] : ['host', 'player'];
    const max = body.role === 'spectator' ? room.maxSpectators : room.maxPlayers;
    const changed = await db.transaction(async (tx) => {
      await tx.query('select 1 from chat_rooms where session_id = $1 for update', [room.sessionId]);
      const { rows } = await tx.query<{ n: number }>(
        'select count(*)::int as n from session_participants where session_id = $1 and left_at is null and role = any($2) and id <> $3',
        [room.sessionId, counted, request.params.participantId],
      );
      if ((rows[0]?.n ?? 0) >= max) throw new HttpError(409, 'ROOM_FULL', body.role === 'spectator' ? 'The room has as many spectators as it takes.' : 'The room has as many players as it takes.');
      const { rowCount } = await tx.query(
        `update session_participants set role = $3 where session_id = $1 and id = $2 and left_at is null and kind = 'human' and role in ('player', 'spectator')`,
        [room.sessionId, request.params.participantId, body.role],
      );
      return (rowCount ?? 0) > 0;
    });
    if (!changed) throw new HttpError(404, 'NOT_FOUND', 'No such player or spectator in this room.');
    if (body.role === 'spectator') await db.query('delete from room_queue where session_id = $1 and participant_id = $2', [room.sessionId, request.params.participantId]);
    await rooms.announceMembers(room.sessionId);
    await rooms.announce(room.sessionId);
    return { ok: true };
  });

  /**
   * Turn-based speech: the host hands the turn to a player (or, without one named, to the next in
   * the list); the player holding the turn may pass it on to the next.
   */
  app.post<{ Params: { id: string } }>('/api/rooms/:id/turn', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(turnBody, request.body ?? {});
    const { room, role, participant } = await roomAccess(db, request.params.id, auth.account.id, 'play');
    assertOpen(room);
    if (room.speechMode !== 'turns') throw new HttpError(409, 'NOT_TURN_BASED', 'Everyone may write in this room; there is no turn to pass.');
    const host = role === 'host' || role === 'owner';
    if (!host && (room.turnParticipantId !== participant?.id || body.participantId)) throw new HttpError(403, 'HOST_ONLY', 'Only the host hands the turn to someone; you can pass your own turn on.');
    const target = body.participantId ?? (await nextInTurn(db, room.sessionId, room.turnParticipantId));
    if (!target || !(await passTurn(db, room.sessionId, target))) throw new HttpError(404, 'NOT_FOUND', 'No such player in this room.');
    await rooms.announce(room.sessionId);
    return { ok: true, turnParticipantId: target };
  });

  app.post<{ Params: { id: string } }>('/api/rooms/:id/typing', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { room, participant } = await roomAccess(db, request.params.id, auth.account.id, 'play');
    if (room.endedAt || !participant) return { ok: true };
    const limit = await ctx.store.rateLimit(`room-typing:${room.sessionId}:${participant.id}`, TYPING_PER_10S, 10);
    if (limit.allowed) await signalRoom(ctx.store, room.sessionId, 'typing', { participantId: participant.id });
    return { ok: true };
  });
}
