import worldUpdates from '@yumina/fn-world-updates';
import { parseWith } from '@yumina/http';
import { favoriteState, INBOX_LIMIT, markRead, readInbox, setFavorite } from '@yumina/updates';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { notSignedIn } from '../accounts/auth.ts';
import { updateEventRoutes } from './events.ts';
import { viewerOf } from './viewer.ts';

const readBody = z.strictObject({ id: z.string().min(1).max(100).optional() });
/** A page of the inbox: `cursor` is the previous page's nextCursor (issue 24). */
const listQuery = z.object({ cursor: z.string().max(400).optional(), limit: z.coerce.number().int().min(1).max(INBOX_LIMIT).default(INBOX_LIMIT) });

/**
 * Update records, container side: the live overview stream (it holds its connections: process
 * continuity), favorites of a world and the player's notification inbox. The records' own routes
 * are the world-updates function, a Lambda in production and mounted here in local mode.
 */
export async function updateRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  if (ctx.config.mode === 'local') {
    await app.register(worldUpdates, { db: ctx.db, store: ctx.store, authenticate: (request, reply) => viewerOf(ctx, request, reply) });
  }
  await updateEventRoutes(app, ctx);

  async function signedIn(request: FastifyRequest, reply: FastifyReply) {
    const viewer = await viewerOf(ctx, request, reply);
    if (!viewer) throw notSignedIn();
    return viewer;
  }

  app.get<{ Params: { id: string } }>('/api/worlds/:id/favorite', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return favoriteState(db, request.params.id, await viewerOf(ctx, request, reply));
  });
  app.put<{ Params: { id: string } }>('/api/worlds/:id/favorite', async (request, reply) => {
    return setFavorite(db, request.params.id, await signedIn(request, reply), true);
  });
  app.delete<{ Params: { id: string } }>('/api/worlds/:id/favorite', async (request, reply) => {
    return setFavorite(db, request.params.id, await signedIn(request, reply), false);
  });

  app.get('/api/inbox', async (request, reply) => {
    const viewer = await signedIn(request, reply);
    reply.header('cache-control', 'no-store');
    const q = parseWith(listQuery, request.query, 'query');
    return readInbox(db, viewer.accountId, q.cursor, q.limit);
  });
  /** Marks one notification read ({id}) or all of them ({}). */
  app.post('/api/inbox/read', async (request, reply) => {
    const viewer = await signedIn(request, reply);
    const body = parseWith(readBody, request.body ?? {});
    return { changed: await markRead(db, viewer.accountId, body.id ?? null) };
  });
}
