import { newId } from '@yumina/accounts';
import { breakTurn, queueMessage, withdrawQueued } from '@yumina/conversations';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { assertOpen, roomAccess } from './room-access.ts';
import { roomRuntimeOf } from './room-runtime.ts';
import { queueView, roomStatusView } from './room-views.ts';

/** A room message's length at most, and how many may wait for one reply. */
export const ROOM_MESSAGE_MAX = 8_000;
const MAX_QUEUED = 50;

const messageBody = z.strictObject({ content: z.string().trim().min(1, 'must not be empty').max(ROOM_MESSAGE_MAX) });

/**
 * A room's rounds (docs/ROOMS.md): players write (their messages wait in the queue, each under its
 * writer's name), the trigger mode or the host starts the reply that answers them together, and
 * the host regenerates, continues or stops it. Replies run on the replica that starts them and
 * reach every member through the room's events (./room-runtime.ts).
 */
export async function turnRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const rooms = roomRuntimeOf(ctx);

  app.post<{ Params: { id: string } }>('/api/rooms/:id/messages', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(messageBody, request.body);
    const { room, participant, name } = await roomAccess(db, request.params.id, auth.account.id, 'play');
    assertOpen(room);
    if (!participant) throw new HttpError(403, 'SPECTATOR', 'Join the room to write in it.');
    const limit = await ctx.store.rateLimit(`room-messages:${room.sessionId}:${participant.id}`, ctx.config.rooms.messagesPerMinute, 60);
    if (!limit.allowed) throw new HttpError(429, 'RATE_LIMITED', 'You are writing faster than this room takes messages. Wait a moment.', { 'retry-after': String(limit.retryAfter) });
    // the name the message goes under: the writer's persona now, else their display name (as {{user}})
    const result = await db.transaction((tx) =>
      queueMessage(tx, { id: newId('rqm'), sessionId: room.sessionId, participantId: participant.id, authorName: name || auth.account.displayName, content: body.content, maxQueued: MAX_QUEUED }),
    );
    if (result.status === 'ended') throw new HttpError(409, 'ROOM_ENDED', 'This room has ended.');
    if (result.status === 'not-your-turn') throw new HttpError(409, 'NOT_YOUR_TURN', 'It is not your turn to write. The host passes the turn.');
    if (result.status !== 'queued') throw new HttpError(429, 'QUEUE_FULL', `${MAX_QUEUED} messages are waiting for the reply already. Wait for it.`);
    // every member sees the queue at once (from what the write returned), then the mode decides
    await rooms.emit(room.sessionId, 'room', {
      room: roomStatusView({ ...room, collectUntil: result.collectUntil, version: result.version, replying: result.replying }, result.queue.length),
      queue: result.queue.map(queueView),
    });
    await rooms.evaluate(room.sessionId);
    reply.code(202);
    return { queued: queueView(result.message) };
  });

  /** A queued message taken back, by its writer or the host, before the reply answers it. */
  app.delete<{ Params: { id: string; queuedId: string } }>('/api/rooms/:id/queue/:queuedId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { room, role, participant } = await roomAccess(db, request.params.id, auth.account.id, 'play');
    const removed = await withdrawQueued(db, { sessionId: room.sessionId, queuedId: request.params.queuedId, participantId: participant?.id ?? '', anyAuthor: role === 'host' || role === 'owner' });
    if (!removed) throw new HttpError(404, 'NOT_FOUND', 'No such message waiting (it may have been answered already).');
    await rooms.announce(room.sessionId);
    return { ok: true };
  });

  /** The host's "reply now": the AI answers what waits, whatever the trigger mode. */
  app.post<{ Params: { id: string } }>('/api/rooms/:id/reply', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    assertOpen(room);
    const started = await rooms.trigger(room.sessionId);
    if (started === 'busy') throw new HttpError(409, 'SESSION_BUSY', 'A reply is being written already.');
    if (started === 'empty') throw new HttpError(409, 'NOTHING_QUEUED', 'No message is waiting for a reply.');
    if (started === 'ended') throw new HttpError(409, 'ROOM_ENDED', 'This room has ended.');
    reply.code(202);
    return { ok: true };
  });

  for (const kind of ['regenerate', 'continue'] as const) {
    app.post<{ Params: { id: string } }>(`/api/rooms/:id/${kind}`, async (request, reply) => {
      const auth = await requireAuth(ctx, request, reply);
      const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
      assertOpen(room);
      await rooms.redo(room, kind);
      reply.code(202);
      return { ok: true };
    });
  }

  /** The host stops the reply being written, wherever it runs; the lock goes with it. */
  app.post<{ Params: { id: string } }>('/api/rooms/:id/stop', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    await rooms.stop(room.sessionId);
    await breakTurn(db, { sessionId: room.sessionId, accountId: room.hostAccountId });
    await rooms.announce(room.sessionId);
    return { ok: true };
  });
}
