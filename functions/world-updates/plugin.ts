import type { DbPool } from '@yumina/db';
import { HttpError, parseWith } from '@yumina/http';
import type { Store } from '@yumina/store';
import { announceRecord, createRecord, createUpdateBody, editRecord, editUpdateBody, HISTORY_LIMIT, readHistory, type Viewer } from '@yumina/updates';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { z } from 'zod';

/** A page of the history: `cursor` is the previous page's nextCursor (issue 24). */
const historyQuery = z.object({ cursor: z.string().max(400).optional(), limit: z.coerce.number().int().min(1).max(HISTORY_LIMIT).default(HISTORY_LIMIT) });

/** Creates and edits per account per minute (shared store, in-memory fallback). */
const WRITES_PER_MINUTE = 120;

export type WorldUpdatesOptions = {
  db: { primary: DbPool };
  store: Pick<Store, 'publish' | 'rateLimit'>;
  /** The signed-in account of the request, or null for a guest. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<Viewer | null>;
  /**
   * Hooks run before every route of the plugin. A deployed function passes the shared cross-site
   * guard here; the container registers the plugin inside its scope, which already has it.
   */
  preHandler?: preHandlerHookHandler;
};

type Params = { id: string };

/**
 * GET|POST /api/worlds/:id/updates and PATCH /api/worlds/:id/updates/:updateId (seed 001 §4).
 * GET: {worldId, status, updates, canEdit, canCreate, canNotify}; readers and guests see published
 * works, the author also unpublished ones (else 404). POST (author only; 401 guest, 403 other,
 * 409 REVIEW_PENDING): {update, notified}. PATCH (author only, title and content only): {update}.
 */
const worldUpdates: FastifyPluginAsync<WorldUpdatesOptions> = async (app, options) => {
  const db = options.db.primary;
  if (options.preHandler) app.addHook('preHandler', options.preHandler);

  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<Viewer> {
    const viewer = await options.authenticate(request, reply);
    if (!viewer) throw new HttpError(401, 'UNAUTHENTICATED', 'Sign in to continue.');
    return viewer;
  }

  async function limited(viewer: Viewer): Promise<void> {
    const limit = await options.store.rateLimit(`updates:write:${viewer.accountId}`, WRITES_PER_MINUTE, 60);
    if (!limit.allowed) {
      throw new HttpError(429, 'RATE_LIMITED', 'Too many update-record changes; try again shortly.', { 'retry-after': String(limit.retryAfter) });
    }
  }

  /** A write that waited out the database's lock deadline: the answer is "busy", nothing was written. */
  async function busyAware<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if ((err as { code?: unknown }).code === '55P03') throw new HttpError(503, 'BUSY', 'This work is being changed right now. Please try again.');
      throw err;
    }
  }

  app.get<{ Params: Params }>('/api/worlds/:id/updates', async (request, reply) => {
    const viewer = await options.authenticate(request, reply);
    reply.header('cache-control', 'no-store');
    const q = parseWith(historyQuery, request.query, 'query');
    return readHistory(db, request.params.id, viewer, q.cursor, q.limit);
  });

  app.post<{ Params: Params }>('/api/worlds/:id/updates', { bodyLimit: 64 * 1024 }, async (request, reply) => {
    const viewer = await signedIn(request, reply);
    const input = parseWith(createUpdateBody, request.body);
    await limited(viewer);
    const created = await busyAware(() => createRecord(db, request.params.id, viewer, input));
    try {
      await announceRecord(db, options.store, created.update);
    } catch (err) {
      // The record is saved; open overviews will see it on their next load.
      request.log.warn({ err, type: 'updates-announce' }, 'could not announce an update record');
    }
    reply.code(201);
    return created;
  });

  app.patch<{ Params: Params & { updateId: string } }>('/api/worlds/:id/updates/:updateId', { bodyLimit: 64 * 1024 }, async (request, reply) => {
    const viewer = await signedIn(request, reply);
    const input = parseWith(editUpdateBody, request.body);
    await limited(viewer);
    const update = await busyAware(() => editRecord(db, request.params.id, request.params.updateId, viewer, input));
    return { update };
  });
};

export default worldUpdates;
