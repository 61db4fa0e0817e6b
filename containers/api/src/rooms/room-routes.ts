import { newId } from '@yumina/accounts';
import { balance } from '@yumina/billing';
import {
  createRoom,
  endRoom,
  roomOfSession,
  roomQueue,
  sessionMembers,
  SPEECH_MODES,
  TRIGGER_MODES,
  updateRoomSettings,
} from '@yumina/conversations';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { effectivePreference } from '../ai/metering.ts';
import type { AppContext } from '../context.ts';
import { parseHistoryPageQuery, sessionMessage, sessionPage } from '../conversations/history-page.ts';
import { playableWorld } from '../conversations/model.ts';
import { startNewSession } from '../conversations/new-session.ts';
import { versionOf } from '../worlds/version.ts';
import { ownerView, readerView, type WorldRow } from '../worlds/routes.ts';
import { lastRoomEventId } from './room-bus.ts';
import { assertOpen, roomAccess } from './room-access.ts';
import { roomRuntimeOf } from './room-runtime.ts';
import { memberView, queueView, roomStatusView } from './room-views.ts';

const modes = {
  triggerMode: z.enum(TRIGGER_MODES),
  timerSeconds: z.number().int().min(2).max(600),
  speechMode: z.enum(SPEECH_MODES),
};
const createBody = z.strictObject({ triggerMode: modes.triggerMode, speechMode: modes.speechMode, timerSeconds: modes.timerSeconds.default(30) });
const settingsBody = z
  .strictObject({ triggerMode: modes.triggerMode.optional(), speechMode: modes.speechMode.optional(), timerSeconds: modes.timerSeconds.optional() })
  .refine((b) => Object.keys(b).length > 0, 'say what to change: triggerMode, speechMode or timerSeconds');

/** Rooms an account may open per hour. */
const ROOMS_PER_HOUR = 30;

/**
 * Who pays for a room's replies (shown to the host before the room opens, and to every member):
 * always the host, through the host's own AI connection or the host's platform credits, as the
 * host's billing preference chooses; a player's credits are never spent by someone else's room.
 */
export async function payerOf(ctx: AppContext, hostAccountId: string) {
  const [billing, connection] = await Promise.all([
    balance(ctx.db.primary, hostAccountId),
    ctx.db.primary.query<{ default_model: string | null; private_enabled: boolean }>('select default_model, private_enabled from ai_connections where account_id = $1', [hostAccountId]),
  ]);
  const own = connection.rows[0];
  const official = ctx.config.ai.official;
  const preference = effectivePreference(billing.preference, own?.private_enabled === true, !!official);
  if (preference === 'official') return { source: official ? 'credits' : 'none', model: official?.defaultModel ?? null } as const;
  if (preference === 'private') return { source: own?.private_enabled ? 'connection' : 'none', model: own?.default_model ?? null } as const;
  return { source: 'mixed', model: own?.default_model ?? official?.defaultModel ?? null } as const;
}

export async function roomRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const rooms = roomRuntimeOf(ctx);

  /**
   * Everything a member's room page needs, read after the id of the room's newest event: the page
   * opens its live stream after that id, so nothing between this read and the stream is missed.
   */
  async function snapshot(sessionId: string, accountId: string, query?: unknown) {
    const eventId = await lastRoomEventId(ctx.store, sessionId).catch(() => '0-0');
    await rooms.recover(sessionId).catch(() => false);
    const access = await roomAccess(db, sessionId, accountId, 'member');
    const [room, queue, members, online, page, payer] = await Promise.all([
      roomOfSession(db, sessionId),
      roomQueue(db, sessionId),
      sessionMembers(db, sessionId),
      rooms.presence.online(sessionId),
      sessionPage(db, sessionId, accountId, parseHistoryPageQuery(query ?? {}), true),
      payerOf(ctx, access.room.hostAccountId),
    ]);
    return {
      room: roomStatusView(room!, queue.length),
      queue: queue.map(queueView),
      members: members.map((m) => memberView(m, online)),
      me: { participantId: access.participant?.id ?? null, role: access.role === 'owner' ? 'host' : access.role, accountId },
      payer,
      ...page,
      eventId,
    };
  }

  /** What opening a room on this world would cost the host: who pays, and whether the world allows rooms. */
  app.get<{ Params: { worldId: string } }>('/api/worlds/:worldId/rooms/terms', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    await playableWorld(db, request.params.worldId, auth.account.id);
    const { rows } = await db.query<{ rooms_allowed: boolean }>('select rooms_allowed from worlds where id = $1', [request.params.worldId]);
    return { allowed: rows[0]?.rooms_allowed === true, payer: await payerOf(ctx, auth.account.id), limits: { maxPlayers: ctx.config.rooms.maxPlayers, maxSpectators: ctx.config.rooms.maxSpectators } };
  });

  /** Opens a room on a world that allows rooms; the caller is its host. */
  app.post<{ Params: { worldId: string } }>('/api/worlds/:worldId/rooms', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(createBody, request.body);
    const world = await playableWorld(db, request.params.worldId, auth.account.id);
    const { rows } = await db.query<{ rooms_allowed: boolean }>('select rooms_allowed from worlds where id = $1', [request.params.worldId]);
    if (!rows[0]?.rooms_allowed) throw new HttpError(403, 'ROOMS_NOT_ALLOWED', "This world's author has not opened it to rooms.");
    const limit = await ctx.store.rateLimit(`rooms-opened:${auth.account.id}`, ROOMS_PER_HOUR, 3600);
    if (!limit.allowed) throw new HttpError(429, 'RATE_LIMITED', 'You opened many rooms in the last hour. Try again later.', { 'retry-after': String(limit.retryAfter) });
    const { id } = await startNewSession(ctx, auth, request.params.worldId, world, {
      alsoWrite: (tx, sessionId) =>
        createRoom(tx, {
          sessionId,
          hostAccountId: auth.account.id,
          hostParticipantId: newId('ptc'),
          settings: body,
          maxPlayers: ctx.config.rooms.maxPlayers,
          maxSpectators: ctx.config.rooms.maxSpectators,
        }),
    });
    reply.code(201);
    return snapshot(id, auth.account.id);
  });

  /** The rooms the account is in (open ones first), optionally of one world. */
  app.get('/api/rooms', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const query = parseWith(z.object({ worldId: z.string().max(100).optional() }), request.query, 'query');
    const { rows } = await db.query<{ id: string; world_id: string; title: string; role: string; ended_at: Date | null; updated_at: Date; host: string }>(
      `select s.id, s.world_id, s.title, p.role, r.ended_at, s.updated_at, a.display_name as host
         from session_participants p
         join chat_rooms r on r.session_id = p.session_id
         join chat_sessions s on s.id = p.session_id
         join accounts a on a.id = s.account_id
        where p.account_id = $1 and p.left_at is null and ($2::text is null or s.world_id = $2)
        order by (r.ended_at is null) desc, s.updated_at desc limit 100`,
      [auth.account.id, query.worldId ?? null],
    );
    return {
      rooms: rows.map((r) => ({ id: r.id, worldId: r.world_id, title: r.title, role: r.role, hostName: r.host, endedAt: r.ended_at?.toISOString() ?? null, updatedAt: r.updated_at.toISOString() })),
    };
  });

  app.get<{ Params: { id: string } }>('/api/rooms/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    return snapshot(request.params.id, auth.account.id, request.query);
  });

  /**
   * The world as the room plays it, for every member: the version its host gets (the live one, or
   * the host's own working copy when the host is its author: friends can playtest a draft together).
   */
  app.get<{ Params: { id: string } }>('/api/rooms/:id/world', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'member');
    const { rows } = await db.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1', [room.worldId]);
    const row = rows[0];
    const version = row ? versionOf(row as never, { accountId: room.hostAccountId }) : null;
    if (!row || !version) throw new HttpError(404, 'NOT_FOUND', 'The world of this room is no longer available.');
    return version.kind === 'working' ? ownerView(row) : readerView(row, version);
  });

  /** One message in full (its alternatives), for a member. */
  app.get<{ Params: { id: string; messageId: string } }>('/api/rooms/:id/messages/:messageId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    return sessionMessage(db, request.params.id, request.params.messageId, auth.account.id, true);
  });

  /** The host changes the room's modes; every member sees it. */
  app.patch<{ Params: { id: string } }>('/api/rooms/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(settingsBody, request.body);
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    assertOpen(room);
    await updateRoomSettings(db, room.sessionId, body);
    await rooms.announce(room.sessionId);
    await rooms.evaluate(room.sessionId);
    return snapshot(room.sessionId, auth.account.id);
  });

  /** The host ends the room: nothing new is written, invite links stop working; the conversation stays readable. */
  app.post<{ Params: { id: string } }>('/api/rooms/:id/end', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    await rooms.stop(room.sessionId);
    await db.transaction((tx) => endRoom(tx, room.sessionId));
    await rooms.announce(room.sessionId);
    return { ok: true };
  });
}
