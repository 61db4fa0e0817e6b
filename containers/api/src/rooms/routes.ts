import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { eventRoutes } from './event-routes.ts';
import { inviteRoutes } from './invite-routes.ts';
import { memberRoutes } from './member-routes.ts';
import { roomRoutes as roomSettingsRoutes } from './room-routes.ts';
import { turnRoutes } from './turn-routes.ts';

/**
 * Rooms (docs/ROOMS.md), their routes by concern: the room itself (open, read, modes, end), invite
 * links and joining, members (remove, bar, roles, the turn, typing), rounds (messages, the reply,
 * regenerate, continue, stop) and the live stream.
 */
export async function roomRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await roomSettingsRoutes(app, ctx);
  await inviteRoutes(app, ctx);
  await memberRoutes(app, ctx);
  await turnRoutes(app, ctx);
  await eventRoutes(app, ctx);
}
