import { HttpError, parseWith } from '@yumina/http';
import { ASSET_TOKEN_PARAM, assetPath, isAssetId } from '@yumina/sandbox';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { authenticate, requireAuth } from '../accounts/auth.ts';
import type { Authenticated } from '@yumina/accounts';
import { assetIsLive, isLive } from '../worlds/version.ts';
import type { AppContext } from '../context.ts';
import { AssetLinkSigner } from './asset-link.ts';
import { ASSET_LIMITS, assetKey, type AssetRow, storeWorldAsset } from './asset-store.ts';
import { canResize, imageVariant, VARIANT_WIDTHS, variantKey, variantWidth } from './image-variants.ts';
import { bodyAsItArrives } from '../body-bytes.ts';

export { ASSET_LIMITS, assetKey };

const assetView = (a: AssetRow) => ({
  id: a.id,
  ref: `asset://${a.id}`,
  url: assetPath(a.world_id, a.id),
  kind: a.kind,
  contentType: a.content_type,
  size: a.size,
  name: a.name,
  createdAt: a.created_at.toISOString(),
});

const uploadQuery = z.object({ name: z.string().trim().max(200).default('') });

/**
 * World assets: upload (author only; type by content; per-file and per-world limits), list,
 * delete, and the read route `asset://<id>` resolves to (through `resolveAssetUrl` of
 * @yumina/sandbox: only that world's own path), with long-lived immutable caching.
 * A private (unpublished) world's assets are readable by its author and administrators (session),
 * or with a short-lived signed token of that world (`?sig=`, from POST …/asset-access), which the
 * sandbox frame uses because its opaque origin sends no session cookie.
 */
export async function assetRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const links = new AssetLinkSigner(ctx.secrets.deriveKey('asset-links'));
  /** Who may read a private (unpublished) world's assets with their session: its author and administrators. */
  const readsPrivate = (auth: Authenticated | null, ownerId: string) => auth !== null && (auth.account.id === ownerId || auth.account.isAdmin);

  async function ownWorld(worldId: string, accountId: string) {
    const { rows } = await db.query<{ owner_id: string; status: string }>('select owner_id, status from worlds where id = $1', [worldId]);
    const world = rows[0];
    if (!world || (world.owner_id !== accountId && world.status !== 'published')) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    if (world.owner_id !== accountId) throw new HttpError(403, 'NOT_AUTHOR', 'Only the author of this world can change its assets.');
  }

  await app.register(async (scope) => {
    // Uploads are raw bytes of any declared type: the declared type and the file name are ignored.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', bodyAsItArrives);

    scope.post<{ Params: { worldId: string } }>('/api/worlds/:worldId/assets', { bodyLimit: ASSET_LIMITS.fileBytes }, async (request, reply) => {
      const auth = await requireAuth(ctx, request, reply);
      const q = parseWith(uploadQuery, request.query, 'query');
      await ownWorld(request.params.worldId, auth.account.id);
      const bytes = request.body;
      if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw new HttpError(400, 'EMPTY_UPLOAD', 'Send the file as the request body.');
      const row = await db.transaction(async (tx) => {
        // One upload at a time per world, so two uploads cannot both pass the per-world limit.
        await tx.query('select 1 from worlds where id = $1 for update', [request.params.worldId]);
        return storeWorldAsset(tx, ctx.objects, { worldId: request.params.worldId, ownerId: auth.account.id, bytes, name: q.name });
      });
      reply.code(201);
      return { asset: assetView(row) };
    });
  });

  app.get<{ Params: { worldId: string } }>('/api/worlds/:worldId/assets', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownWorld(request.params.worldId, auth.account.id);
    const { rows } = await db.query<AssetRow & Record<string, unknown>>('select * from world_assets where world_id = $1 order by created_at, id', [request.params.worldId]);
    const used = rows.reduce((n, r) => n + r.size, 0);
    return { assets: rows.map(assetView), usedBytes: used, limits: ASSET_LIMITS };
  });

  app.delete<{ Params: { worldId: string; assetId: string } }>('/api/worlds/:worldId/assets/:assetId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownWorld(request.params.worldId, auth.account.id);
    const { rows } = await db.query('delete from world_assets where id = $1 and world_id = $2 returning id', [request.params.assetId, request.params.worldId]);
    if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such asset.');
    await ctx.objects.delete(assetKey(request.params.worldId, request.params.assetId)).catch(() => {});
    for (const width of VARIANT_WIDTHS) await ctx.objects.delete(variantKey(request.params.worldId, request.params.assetId, width)).catch(() => {});
    return { ok: true };
  });

  /**
   * Access to a world's assets for whoever may read the world: a published world's live assets are
   * public (token null: plain URLs); for a private world, or a published one whose edit is not live
   * yet (held for review), its author or an administrator gets a signed token of this world, valid
   * 10 to 15 minutes (renew when less than 5 are left).
   */
  app.post<{ Params: { worldId: string } }>('/api/worlds/:worldId/asset-access', async (request, reply) => {
    const { worldId } = request.params;
    const { rows } = await db.query<{ owner_id: string; status: string; live_definition: string | null; revision: number; live_revision: number | null }>(
      'select owner_id, status, live_definition, revision, live_revision from worlds where id = $1',
      [worldId],
    );
    const world = rows[0];
    if (!world) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    reply.header('cache-control', 'no-store');
    const auth = await authenticate(ctx, request, reply);
    // While an edit is not live (held for review), its author and administrators get a token: the
    // working copy may use assets the live version does not name, and those are not public.
    const editNotLive = world.revision !== world.live_revision && readsPrivate(auth, world.owner_id);
    if (isLive(world) && !editNotLive) return { worldId, token: null, expiresAt: null, expiresInSeconds: null };
    if (!readsPrivate(auth, world.owner_id)) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const link = links.sign(worldId);
    return { worldId, token: link.token, expiresAt: link.expiresAt.toISOString(), expiresInSeconds: Math.round((link.expiresAt.getTime() - Date.now()) / 1000) };
  });

  /**
   * The read route of `asset://<id>` in a world: ids are immutable, so caches may keep the bytes for
   * a year (public for a published world; private for a private one read with the session). Read
   * with a valid signed token of THIS world, a private asset may be embedded cross-origin (the
   * sandbox frame) and is cached privately until the token expires.
   */
  app.get<{ Params: { worldId: string; assetId: string }; Querystring: Record<string, unknown> }>('/api/worlds/:worldId/assets/:assetId', async (request, reply) => {
    const { worldId, assetId } = request.params;
    if (!isAssetId(assetId)) throw new HttpError(404, 'NOT_FOUND', 'No such asset.');
    const { rows } = await db.query<AssetRow & { owner_id: string; status: string; live_definition: string | null; live_cover_asset_id: string | null; live_avatar_asset_id: string | null } & Record<string, unknown>>(
      `select a.*, w.owner_id, w.status, w.live_definition, w.live_cover_asset_id, w.live_avatar_asset_id from world_assets a join worlds w on w.id = a.world_id where a.id = $1 and a.world_id = $2`,
      [assetId, worldId],
    );
    const asset = rows[0];
    if (!asset) throw new HttpError(404, 'NOT_FOUND', 'No such asset.');
    // Public only when the world's live version names it or is its live cover (worlds/version.ts): an asset that only a held edit uses stays private.
    const isPublic = assetIsLive(asset, assetId);
    /** Seconds the signed token has left when the read is by signature; null when by the session. */
    let signedFor: number | null = null;
    if (!isPublic) {
      // Checked against the world of the path: a token of another world never matches it.
      const { check, secondsLeft } = links.verify(worldId, request.query[ASSET_TOKEN_PARAM]);
      if (check === 'valid') signedFor = secondsLeft;
      else {
        const auth = await authenticate(ctx, request, reply);
        if (!readsPrivate(auth, asset.owner_id)) {
          if (check === 'expired') throw new HttpError(403, 'ASSET_LINK_EXPIRED', 'This asset link has expired; reload the page for a new one.');
          throw new HttpError(404, 'NOT_FOUND', 'No such asset.');
        }
      }
    }
    const etag = `"${asset.sha256.slice(0, 32)}"`;
    reply
      .header('cache-control', isPublic ? 'public, max-age=31536000, immutable' : signedFor !== null ? `private, max-age=${signedFor}` : 'private, max-age=31536000, immutable')
      .header('etag', etag)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      // Public and signed reads may be embedded by the sandbox frame (an opaque, cross-origin document).
      .header('cross-origin-resource-policy', isPublic || signedFor !== null ? 'cross-origin' : 'same-origin')
      .header('vary', 'cookie');
    // Fonts load in CORS mode (FontFace, @font-face); no credentials are involved either way.
    if (isPublic || signedFor !== null) reply.header('access-control-allow-origin', '*');
    // ?w=<width>: a resized WebP of an image (./image-variants.ts), under its own validator.
    const width = canResize(asset.content_type) ? variantWidth(request.query.w) : null;
    const tag = width ? `"${asset.sha256.slice(0, 32)}-w${width}"` : etag;
    reply.header('etag', tag);
    if (request.headers['if-none-match'] === tag) return reply.code(304).send();
    const original = async () => (await ctx.objects.get(assetKey(worldId, assetId)))?.bytes ?? null;
    if (width) {
      const variant = await imageVariant(ctx.objects, variantKey(worldId, assetId, width), original, width);
      if (variant) return reply.type('image/webp').header('content-disposition', 'inline').send(Buffer.from(variant));
      reply.header('etag', etag);
    }
    const bytes = await original();
    if (!bytes) throw new HttpError(404, 'NOT_FOUND', 'No such asset.');
    return reply.type(asset.content_type).header('content-disposition', 'inline').send(Buffer.from(bytes));
  });
}
