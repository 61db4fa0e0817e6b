import { HttpError, parseWith } from '@yumina/http';
import { validateWorld, type WorldDefinition } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { authenticate, requireAuth } from '../accounts/auth.ts';
import { newId } from '../accounts/ids.ts';
import type { AppContext } from '../context.ts';
import { publishWorld, unpublishWorld } from '../studio/review.ts';
import { variantRoutes } from './variants.ts';

const WORLD_BODY_LIMIT = 5 * 1024 * 1024;

interface WorldRow {
  id: string;
  owner_id: string;
  name: string;
  description: string;
  tags: string[];
  language: string | null;
  definition: string;
  status: 'saved' | 'unpublished' | 'published' | 'held';
  revision: number;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  /** The live version (migration 010): what the library and other readers get. */
  live_revision: number | null;
  live_definition: string | null;
}

/** Validation failures answer 422 with the validator's own shape (not the error shape). */
class WorldInvalid extends HttpError {
  constructor(issues: { path: string; message: string }[]) {
    super(422, 'WORLD_INVALID', 'The world does not validate.', {}, { valid: false, issues });
  }
}

function validated(input: unknown): { world: WorldDefinition; warnings: unknown[]; text: string } {
  const result = validateWorld(input);
  if (!result.ok) throw new WorldInvalid(result.issues);
  return { world: result.world, warnings: result.warnings, text: JSON.stringify(result.world) };
}

function summary(world: WorldDefinition) {
  return {
    name: world.name,
    description: world.description,
    tags: [...new Set((world.customTags ?? []).map((t) => String(t).toLowerCase()))].slice(0, 50),
    language: world.language ?? null,
  };
}

function ownerView(row: WorldRow) {
  return {
    id: row.id,
    ownerId: row.owner_id,
    status: row.status,
    revision: row.revision,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    publishedAt: row.published_at?.toISOString() ?? null,
    liveRevision: row.live_revision ?? null,
    world: JSON.parse(row.definition) as unknown,
  };
}

/** What a reader who is not the author gets: the live version only (a held edit is not served). */
function readerView(row: WorldRow) {
  const view = ownerView(row);
  return { ...view, revision: row.live_revision ?? row.revision, world: JSON.parse(row.live_definition ?? row.definition) as unknown };
}

function publicCard(row: Pick<WorldRow, 'id' | 'name' | 'description' | 'tags' | 'language' | 'published_at'> & { author?: string | null }) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    language: row.language,
    author: row.author ?? null,
    publishedAt: row.published_at?.toISOString() ?? null,
  };
}

const updateBody = z.object({ world: z.unknown(), revision: z.number().int().min(1) });
const libraryQuery = z.object({
  q: z.string().trim().max(200).optional(),
  tag: z.string().trim().toLowerCase().max(60).optional(),
  language: z.string().trim().max(20).optional(),
  page: z.coerce.number().int().min(1).max(1000).default(1),
  pageSize: z.coerce.number().int().min(1).max(50).default(20),
});

/** World storage: author-only writes with optimistic concurrency, and public browsing from the read pool. */
export async function worldRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  async function ownedWorld(id: string, accountId: string): Promise<WorldRow> {
    const { rows } = await db.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1', [id]);
    const row = rows[0];
    if (!row || (row.owner_id !== accountId && row.status !== 'published')) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    if (row.owner_id !== accountId) throw new HttpError(403, 'NOT_AUTHOR', 'Only the author of this world can change it.');
    return row;
  }

  app.post('/api/worlds', { bodyLimit: WORLD_BODY_LIMIT }, async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(z.object({ world: z.unknown() }), request.body);
    const { world, warnings, text } = validated(body.world);
    const s = summary(world);
    const { rows } = await db.query<WorldRow & Record<string, unknown>>(
      `insert into worlds (id, owner_id, name, description, tags, language, definition)
       values ($1, $2, $3, $4, $5, $6, $7) returning *`,
      [newId('wld'), auth.account.id, s.name, s.description, s.tags, s.language, text],
    );
    reply.code(201);
    return { ...ownerView(rows[0]!), warnings };
  });

  app.get('/api/worlds', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows } = await db.query<WorldRow & Record<string, unknown>>(
      'select id, name, description, tags, language, status, revision, updated_at, published_at from worlds where owner_id = $1 order by updated_at desc',
      [auth.account.id],
    );
    return {
      worlds: rows.map((r) => ({ ...publicCard(r), status: r.status, revision: r.revision, updatedAt: r.updated_at.toISOString() })),
    };
  });

  app.get<{ Params: { id: string } }>('/api/worlds/:id', async (request, reply) => {
    const auth = await authenticate(ctx, request, reply);
    const { rows } = await db.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1', [request.params.id]);
    const row = rows[0];
    if (!row || (row.status !== 'published' && row.owner_id !== auth?.account.id)) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const own = row.owner_id === auth?.account.id;
    return { ...(own ? ownerView(row) : readerView(row)), canEdit: own };
  });

  app.put<{ Params: { id: string } }>('/api/worlds/:id', { bodyLimit: WORLD_BODY_LIMIT }, async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(updateBody, request.body);
    await ownedWorld(request.params.id, auth.account.id);
    const { world, warnings, text } = validated(body.world);
    const s = summary(world);
    // The revision check and the write are one statement: a stale writer changes nothing.
    const { rows } = await db.query<WorldRow & Record<string, unknown>>(
      `update worlds set name = $4, description = $5, tags = $6, language = $7, definition = $8,
              revision = revision + 1, updated_at = now()
        where id = $1 and owner_id = $2 and revision = $3 returning *`,
      [request.params.id, auth.account.id, body.revision, s.name, s.description, s.tags, s.language, text],
    );
    if (rows[0] && (rows[0].status === 'published' || rows[0].status === 'held')) {
      // Saving a published (or held) work publishes the edit, through the review rule.
      await publishWorld(ctx, request.params.id, auth.account.id);
      return { ...ownerView(await ownedWorld(request.params.id, auth.account.id)), warnings };
    }
    if (!rows[0]) {
      const current = await ownedWorld(request.params.id, auth.account.id);
      return reply.code(409).send({
        error: {
          code: 'STALE_REVISION',
          message: `This world was saved elsewhere (revision ${current.revision}); your copy is revision ${body.revision}. Nothing was overwritten.`,
        },
        current: ownerView(current),
      });
    }
    return { ...ownerView(rows[0]), warnings };
  });

  app.delete<{ Params: { id: string } }>('/api/worlds/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownedWorld(request.params.id, auth.account.id);
    await db.query('delete from worlds where id = $1 and owner_id = $2', [request.params.id, auth.account.id]);
    return { ok: true };
  });

  for (const action of ['publish', 'unpublish'] as const) {
    app.post<{ Params: { id: string } }>(`/api/worlds/:id/${action}`, async (request, reply) => {
      const auth = await requireAuth(ctx, request, reply);
      await ownedWorld(request.params.id, auth.account.id);
      // Publication goes through the review rule (containers/api/src/studio/review.ts).
      if (action === 'publish') {
        const outcome = await publishWorld(ctx, request.params.id, auth.account.id);
        return { ...ownerView(await ownedWorld(request.params.id, auth.account.id)), review: outcome };
      }
      if (!(await unpublishWorld(ctx, request.params.id, auth.account.id))) throw new HttpError(409, 'NOT_PUBLISHED', 'This world was never published.');
      return ownerView(await ownedWorld(request.params.id, auth.account.id));
    });
  }

  /** Public browsing: published worlds only, from the read pool when one is configured. */
  app.get('/api/library', async (request) => {
    const q = parseWith(libraryQuery, request.query, 'query');
    const where = [`w.status = 'published'`];
    const params: unknown[] = [];
    if (q.q) {
      params.push(`%${q.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      where.push(`(coalesce(w.live_name, w.name) ilike $${params.length} or coalesce(w.live_description, w.description) ilike $${params.length})`);
    }
    if (q.tag) {
      params.push(q.tag);
      where.push(`$${params.length} = any (coalesce(w.live_tags, w.tags))`);
    }
    if (q.language) {
      params.push(q.language);
      where.push(`coalesce(w.live_language, w.language) = $${params.length}`);
    }
    params.push(q.pageSize + 1, (q.page - 1) * q.pageSize);
    const { rows } = await ctx.db.read.query<WorldRow & { author: string | null } & Record<string, unknown>>(
      `select w.id, coalesce(w.live_name, w.name) as name, coalesce(w.live_description, w.description) as description,
              coalesce(w.live_tags, w.tags) as tags, coalesce(w.live_language, w.language) as language, w.published_at, a.display_name as author
         from worlds w join accounts a on a.id = w.owner_id
        where ${where.join(' and ')}
        order by w.published_at desc, w.id
        limit $${params.length - 1} offset $${params.length}`,
      params,
    );
    return { worlds: rows.slice(0, q.pageSize).map(publicCard), page: q.page, pageSize: q.pageSize, hasMore: rows.length > q.pageSize };
  });

  app.get<{ Params: { id: string } }>('/api/library/:id', async (request) => {
    const { rows } = await ctx.db.read.query<WorldRow & { author: string | null } & Record<string, unknown>>(
      `select w.id, coalesce(w.live_name, w.name) as name, coalesce(w.live_description, w.description) as description,
              coalesce(w.live_tags, w.tags) as tags, coalesce(w.live_language, w.language) as language, w.published_at,
              coalesce(w.live_definition, w.definition) as definition, a.display_name as author
         from worlds w join accounts a on a.id = w.owner_id where w.id = $1 and w.status = 'published'`,
      [request.params.id],
    );
    const row = rows[0];
    if (!row) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    return { ...publicCard(row), world: JSON.parse(row.definition) as unknown };
  });

  // Language variants of one work: GET /api/worlds/:id/variants, PUT /api/worlds/:id/variant-of.
  await variantRoutes(app, ctx);
}
