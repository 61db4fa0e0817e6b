import { hashToken, newId, newSecret } from '@yumina/accounts';
import { joinSession } from '@yumina/conversations';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { assertOpen, roomAccess } from './room-access.ts';
import { roomRuntimeOf } from './room-runtime.ts';

const createBody = z.strictObject({
  role: z.enum(['player', 'spectator']).default('player'),
  /** How long the link works (hours); the server's default (ROOM_INVITE_HOURS) when absent. */
  hours: z.number().int().min(1).max(24 * 90).optional(),
});
/** An invite token as the server issues it (newSecret: 32 bytes, base64url). */
const tokenBody = z.strictObject({ token: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/, 'is not an invite link of this platform') });

/** Invite links a host may create per hour, and links that did not work per client address per 10 minutes (then it waits). */
const INVITES_PER_HOUR = 60;
const MISSES_PER_10_MINUTES = 20;

const inviteLink = (ctx: AppContext, token: string) => `${ctx.config.publicOrigin}/rooms/join#${token}`;

const invalidLink = () => new HttpError(404, 'INVITE_INVALID', 'This invite link does not work: it was revoked, it expired, or the room has ended. Ask the host for a new one.');

/**
 * Invite links (docs/ROOMS.md): unguessable (256 random bits; the server keeps only their SHA-256),
 * revocable, with an expiry, each for a role (player or spectator). The token travels in the
 * link's fragment (`/rooms/join#<token>`), which browsers never send to a server or a referrer,
 * and reaches the platform in a POST body; whoever opens it joins after signing in. An expired or
 * revoked link, or one of an ended room, joins nobody; a member the host barred cannot come back.
 */
export async function inviteRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const rooms = roomRuntimeOf(ctx);

  app.post<{ Params: { id: string } }>('/api/rooms/:id/invites', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(createBody, request.body);
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    assertOpen(room);
    const limit = await ctx.store.rateLimit(`room-invites:${auth.account.id}`, INVITES_PER_HOUR, 3600);
    if (!limit.allowed) throw new HttpError(429, 'RATE_LIMITED', 'You made many invite links in the last hour. Try again later.', { 'retry-after': String(limit.retryAfter) });
    const token = newSecret();
    const id = newId('inv');
    const hours = body.hours ?? ctx.config.rooms.inviteHours;
    const { rows } = await db.query<{ expires_at: Date; created_at: Date }>(
      `insert into room_invites (id, session_id, token_hash, role, expires_at) values ($1, $2, $3, $4, now() + make_interval(hours => $5)) returning expires_at, created_at`,
      [id, room.sessionId, hashToken(token), body.role, hours],
    );
    reply.code(201);
    return { invite: { id, role: body.role, expiresAt: rows[0]!.expires_at.toISOString(), createdAt: rows[0]!.created_at.toISOString(), revokedAt: null }, url: inviteLink(ctx, token) };
  });

  /** The room's invite links (without their tokens: those are shown once, when made). */
  app.get<{ Params: { id: string } }>('/api/rooms/:id/invites', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    const { rows } = await db.query<{ id: string; role: string; expires_at: Date; revoked_at: Date | null; created_at: Date }>(
      'select id, role, expires_at, revoked_at, created_at from room_invites where session_id = $1 order by created_at desc limit 100',
      [room.sessionId],
    );
    return {
      invites: rows.map((r) => ({ id: r.id, role: r.role, expiresAt: r.expires_at.toISOString(), createdAt: r.created_at.toISOString(), revokedAt: r.revoked_at?.toISOString() ?? null })),
    };
  });

  app.delete<{ Params: { id: string; inviteId: string } }>('/api/rooms/:id/invites/:inviteId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { room } = await roomAccess(db, request.params.id, auth.account.id, 'host');
    const { rowCount } = await db.query('update room_invites set revoked_at = coalesce(revoked_at, now()) where id = $1 and session_id = $2', [request.params.inviteId, room.sessionId]);
    if (!rowCount) throw new HttpError(404, 'NOT_FOUND', 'No such invite link.');
    return { ok: true };
  });

  /** What a link invites to (the world, the host, the role), for the join page; without a login too. */
  app.post('/api/room-invites/preview', async (request) => {
    const { token } = parseWith(tokenBody, request.body);
    const invite = await liveInvite(token, request.ip);
    return { role: invite.role, worldId: invite.world_id, worldName: invite.title, hostName: invite.host_name, expiresAt: invite.expires_at.toISOString() };
  });

  /** Joins the room a live link names, as the link's role; a member already in it stays as they are. */
  app.post('/api/room-invites/join', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { token } = parseWith(tokenBody, request.body);
    const invite = await liveInvite(token, request.ip);
    const role = invite.role as 'player' | 'spectator';
    const joined = await db.transaction(async (tx) => {
      // one join at a time per room: the count of members and the insert see the same room
      await tx.query('select 1 from chat_rooms where session_id = $1 for update', [invite.session_id]);
      return joinSession(tx, {
        id: newId('ptc'),
        sessionId: invite.session_id,
        accountId: auth.account.id,
        role,
        max: role === 'spectator' ? invite.max_spectators : invite.max_players,
      });
    });
    if (joined.status === 'barred') throw new HttpError(403, 'BARRED', 'The host removed you from this room.');
    if (joined.status !== 'joined') throw new HttpError(409, 'ROOM_FULL', role === 'spectator' ? 'This room has as many spectators as it takes.' : 'This room has as many players as it takes.');
    if (!joined.already) await rooms.announceMembers(invite.session_id);
    return { roomId: invite.session_id, worldId: invite.world_id, role: joined.participant.role };
  });

  /**
   * The live invite a token names. Tokens cannot be guessed (256 bits), and an address whose links
   * keep failing waits anyway: after MISSES_PER_10_MINUTES misses it is refused for the rest of the
   * window, whatever it sends.
   */
  async function liveInvite(token: string, address: string) {
    const blocked = await ctx.store.get(`room-invite-blocked:${address}`);
    if (blocked) throw new HttpError(429, 'RATE_LIMITED', 'Too many invite links that did not work came from this address. Wait a few minutes.', { 'retry-after': blocked });
    const { rows } = await db.query<{
      session_id: string;
      role: string;
      expires_at: Date;
      world_id: string;
      title: string;
      host_name: string;
      max_players: number;
      max_spectators: number;
    }>(
      `select i.session_id, i.role, i.expires_at, s.world_id, s.title, a.display_name as host_name, r.max_players, r.max_spectators
         from room_invites i
         join chat_rooms r on r.session_id = i.session_id
         join chat_sessions s on s.id = i.session_id
         join accounts a on a.id = s.account_id
        where i.token_hash = $1 and i.revoked_at is null and i.expires_at > now() and r.ended_at is null`,
      [hashToken(token)],
    );
    if (!rows[0]) {
      const misses = await ctx.store.rateLimit(`room-invite-misses:${address}`, MISSES_PER_10_MINUTES, 600);
      if (!misses.allowed) await ctx.store.set(`room-invite-blocked:${address}`, String(misses.retryAfter), misses.retryAfter);
      throw invalidLink();
    }
    return rows[0];
  }
}
