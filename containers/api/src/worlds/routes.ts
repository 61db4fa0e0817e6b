import { HttpError, parseWith } from '@yumina/http';
import { assetPath } from '@yumina/sandbox';
import { validateWorld, type WorldDefinition } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { authenticate, requireAuth } from '../accounts/auth.ts';
import { newId } from '@yumina/accounts';
import type { AppContext } from '../context.ts';
import { publishWorld, unpublishWorld } from '../studio/review.ts';
import { cardRoute } from './card-route.ts';
import { importRoute } from './import-route.ts';
import { portraitRoute } from './portrait-route.ts';
import { CARD_SELECT, cardFields, cardView, libraryRoutes } from './library.ts';
import { variantRoutes } from './variants.ts';
import { LIVE_WHERE, versionOf, type WorldVersion } from './version.ts';

export const WORLD_BODY_LIMIT = 5 * 1024 * 1024;

export interface WorldRow {
  id: string;
  /** Players may open rooms on it (the author's switch, docs/ROOMS.md). */
  rooms_allowed?: boolean;
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
  cover_asset_id: string | null;
  live_cover_asset_id: string | null;
  /** The character's avatar (migration 091): set by a card import, shown on the character's chat bubbles. */
  avatar_asset_id: string | null;
  live_avatar_asset_id: string | null;
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

export function summary(world: WorldDefinition) {
  return {
    name: world.name,
    description: world.description,
    tags: [...new Set((world.customTags ?? []).map((t) => String(t).toLowerCase()))].slice(0, 50),
    language: world.language ?? null,
  };
}

/** The columns ownerFields reads: a route that holds the world's JSON text already returns only these. */
export const OWNER_FIELD_COLUMNS = 'id, owner_id, status, revision, created_at, updated_at, published_at, live_revision, cover_asset_id, avatar_asset_id';

/** What the author gets, but the world itself. */
export function ownerFields(row: Pick<WorldRow, 'id' | 'owner_id' | 'status' | 'revision' | 'created_at' | 'updated_at' | 'published_at' | 'live_revision' | 'cover_asset_id' | 'avatar_asset_id'>) {
  return {
    id: row.id,
    ownerId: row.owner_id,
    status: row.status,
    revision: row.revision,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    publishedAt: row.published_at?.toISOString() ?? null,
    liveRevision: row.live_revision ?? null,
    coverUrl: row.cover_asset_id ? assetPath(row.id, row.cover_asset_id) : null,
    coverAssetId: row.cover_asset_id ?? null,
    avatarUrl: row.avatar_asset_id ? assetPath(row.id, row.avatar_asset_id) : null,
    avatarAssetId: row.avatar_asset_id ?? null,
  };
}

export function ownerView(row: WorldRow) {
  return { ...ownerFields(row), roomsAllowed: row.rooms_allowed === true, world: JSON.parse(row.definition) as unknown };
}

/** What a reader who is not the author gets: the live version only (a held edit is not served; worlds/version.ts). */
export function readerView(row: WorldRow, live: WorldVersion) {
  const view = ownerView(row);
  const cover = row.live_cover_asset_id ?? null;
  const avatar = row.live_avatar_asset_id ?? null;
  return {
    ...view,
    revision: live.revision,
    coverUrl: cover ? assetPath(row.id, cover) : null,
    coverAssetId: cover,
    avatarUrl: avatar ? assetPath(row.id, avatar) : null,
    avatarAssetId: avatar,
    world: live.world as unknown,
  };
}

const updateBody = z.object({ world: z.unknown(), revision: z.number().int().min(1) });

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
    // With each work, its latest review (pending since when, or rejected with the reason).
    const { rows } = await db.query<
      WorldRow & { review_state: string | null; review_kind: string | null; review_submitted_at: Date | null; review_reason: string | null } & Record<string, unknown>
    >(
      `select w.id, w.name, w.description, w.tags, w.language, w.status, w.revision, w.updated_at, w.published_at, w.live_revision, w.cover_asset_id,
              r.state as review_state, r.kind as review_kind, r.submitted_at as review_submitted_at, r.reason as review_reason
         from worlds w
         left join lateral (select state, kind, submitted_at, reason from world_reviews
                             where world_id = w.id and state in ('pending', 'rejected', 'approved') order by submitted_at desc limit 1) r on true
        where w.owner_id = $1 order by w.updated_at desc`,
      [auth.account.id],
    );
    return {
      worlds: rows.map((r) => ({
        ...cardFields(r),
        status: r.status,
        revision: r.revision,
        liveRevision: r.live_revision,
        updatedAt: r.updated_at.toISOString(),
        coverUrl: r.cover_asset_id ? assetPath(r.id, r.cover_asset_id) : null,
        review: r.review_state
          ? { state: r.review_state, kind: r.review_kind, submittedAt: r.review_submitted_at?.toISOString() ?? null, reason: r.review_reason }
          : null,
      })),
    };
  });

  app.get<{ Params: { id: string } }>('/api/worlds/:id', async (request, reply) => {
    const auth = await authenticate(ctx, request, reply);
    const { rows } = await db.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1', [request.params.id]);
    const row = rows[0];
    const version = row ? versionOf(row as never, { accountId: auth?.account.id ?? null }) : null;
    if (!row || !version) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const own = version.kind === 'working';
    return { ...(own ? ownerView(row) : readerView(row, version)), canEdit: own };
  });

  app.put<{ Params: { id: string } }>('/api/worlds/:id', { bodyLimit: WORLD_BODY_LIMIT }, async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(updateBody, request.body);
    const stored = await ownedWorld(request.params.id, auth.account.id);
    // A definition saved without its UUID keeps the one it has (validation would generate a new one).
    if (typeof body.world === 'object' && body.world !== null && !Array.isArray(body.world) && !('id' in body.world)) {
      const storedId = (JSON.parse(stored.definition) as { id?: unknown }).id;
      if (typeof storedId === 'string') (body.world as Record<string, unknown>).id = storedId;
    }
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

  // Public browsing (search, tags, sorts, keyset pages) and a player's recent sessions.
  await libraryRoutes(app, ctx);

  app.get<{ Params: { id: string } }>('/api/library/:id', async (request) => {
    const { rows } = await ctx.db.read.query<Parameters<typeof cardView>[0] & { definition: string } & Record<string, unknown>>(
      `select c.*, w.live_definition as definition
         from (${CARD_SELECT} where w.id = $1 and ${LIVE_WHERE}) c join worlds w on w.id = c.id`,
      [request.params.id],
    );
    const row = rows[0];
    if (!row) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    return { ...cardView(row), world: JSON.parse(row.definition) as unknown };
  });

  /** The author's copy of a world: a new draft with the working copy, its cover and nothing else. */
  app.post<{ Params: { id: string } }>('/api/worlds/:id/duplicate', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const row = await ownedWorld(request.params.id, auth.account.id);
    const world = JSON.parse(row.definition) as Record<string, unknown>;
    world.name = `${String(world.name ?? row.name)} (copy)`.slice(0, 200);
    const { world: valid, text } = validated(world);
    const s = summary(valid);
    const { rows } = await db.query<WorldRow & Record<string, unknown>>(
      `insert into worlds (id, owner_id, name, description, tags, language, definition)
       values ($1, $2, $3, $4, $5, $6, $7) returning *`,
      [newId('wld'), auth.account.id, s.name, s.description, s.tags, s.language, text],
    );
    reply.code(201);
    return ownerView(rows[0]!);
  });

  /**
   * The cover of a world: one of its own image assets (its type was checked by content on upload),
   * or null to remove it. Like any edit, it reaches readers through publication (and its review).
   */
  app.put<{ Params: { id: string } }>('/api/worlds/:id/cover', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(z.strictObject({ assetId: z.string().min(1).max(100).nullable() }), request.body);
    await ownedWorld(request.params.id, auth.account.id);
    if (body.assetId) {
      const { rows } = await db.query<{ kind: string }>('select kind from world_assets where id = $1 and world_id = $2', [body.assetId, request.params.id]);
      if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such asset in this world.');
      if (rows[0].kind !== 'image') throw new HttpError(422, 'COVER_NOT_IMAGE', 'A cover must be an image (PNG, JPEG, GIF or WebP).');
    }
    const { rows } = await db.query<WorldRow & Record<string, unknown>>(
      'update worlds set cover_asset_id = $3, revision = revision + 1, updated_at = now() where id = $1 and owner_id = $2 returning *',
      [request.params.id, auth.account.id, body.assetId],
    );
    if (rows[0]!.status === 'published' || rows[0]!.status === 'held') await publishWorld(ctx, request.params.id, auth.account.id);
    return ownerView(await ownedWorld(request.params.id, auth.account.id));
  });

  /**
   * The author's switch for rooms (docs/ROOMS.md): whether players may open rooms on the world, to
   * play it together. A setting of the platform's, not of the world's definition: it applies at once,
   * without a new revision or review; rooms already open go on.
   */
  app.put<{ Params: { id: string } }>('/api/worlds/:id/rooms-allowed', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(z.strictObject({ allowed: z.boolean() }), request.body);
    await ownedWorld(request.params.id, auth.account.id);
    await db.query('update worlds set rooms_allowed = $3 where id = $1 and owner_id = $2', [request.params.id, auth.account.id, body.allowed]);
    return ownerView(await ownedWorld(request.params.id, auth.account.id));
  });

  // Language variants of one work: GET /api/worlds/:id/variants, PUT /api/worlds/:id/variant-of.
  await variantRoutes(app, ctx);
  // POST /api/worlds/import: a foreign world, card or lorebook → a new draft world with the import report.
  await importRoute(app, ctx);
  // GET /api/worlds/:id/card.png|json: the world as a SillyTavern character card (the way back: import).
  await cardRoute(app, ctx);
  // POST|DELETE /api/worlds/:id/portrait: the character's portrait (avatar, and the cover when there is none).
  await portraitRoute(app, ctx);
}
