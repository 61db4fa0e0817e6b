import { cardPictures, PictureError } from '@yumina/assets/picture';
import { HttpError } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { ASSET_LIMITS, storeWorldAsset } from '../studio/asset-store.ts';
import { sniffAssetType } from '../studio/asset-type.ts';
import { publishWorld } from '../studio/review.ts';
import { ownerView, type WorldRow } from './routes.ts';
import { bodyAsItArrives } from '../body-bytes.ts';

/**
 * The character's portrait (issue 30 B), uploaded in the studio or the character editor:
 * POST /api/worlds/:id/portrait with the image as the body (any declared type: the content
 * decides; PNG, JPEG, GIF, WebP or AVIF up to 8 MiB) makes the character's avatar from it — the
 * card importer's own resizing (sharp: the whole picture within 512 × 768 WebP) — and, when the
 * world has no cover yet, the library cover too (640 × 360, cropped from the top of a portrait),
 * both stored as assets of the world through the asset store (the world's limits). DELETE takes
 * the portrait away (the cover stays). Like the cover, it reaches readers through publication.
 */
export async function portraitRoute(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  async function ownedWorld(id: string, accountId: string): Promise<WorldRow> {
    const { rows } = await db.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1', [id]);
    const row = rows[0];
    if (!row || (row.owner_id !== accountId && row.status !== 'published')) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    if (row.owner_id !== accountId) throw new HttpError(403, 'NOT_AUTHOR', 'Only the author of this world can change its portrait.');
    return row;
  }

  /** An edit of a published (or held) work goes out through the review rule, as a cover change does. */
  async function answer(row: WorldRow, accountId: string) {
    if (row.status === 'published' || row.status === 'held') {
      await publishWorld(ctx, row.id, accountId);
      return ownerView(await ownedWorld(row.id, accountId));
    }
    return ownerView(row);
  }

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', bodyAsItArrives);
    scope.post<{ Params: { id: string } }>('/api/worlds/:id/portrait', { bodyLimit: ASSET_LIMITS.fileBytes }, async (request, reply) => {
      const auth = await requireAuth(ctx, request, reply);
      const world = await ownedWorld(request.params.id, auth.account.id);
      const bytes = request.body;
      if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw new HttpError(400, 'EMPTY_UPLOAD', 'Send the image as the request body.');
      if (sniffAssetType(bytes)?.kind !== 'image') throw new HttpError(415, 'UNSUPPORTED_PICTURE_TYPE', 'A portrait must be a PNG, JPEG, GIF, WebP or AVIF image.');
      let pictures: Awaited<ReturnType<typeof cardPictures>>;
      try {
        pictures = await cardPictures(bytes);
      } catch (error) {
        if (error instanceof PictureError) throw new HttpError(422, error.code, 'This image could not be read: it may be damaged, or larger than 40 megapixels.');
        throw error;
      }
      const row = await db.transaction(async (tx) => {
        // One change at a time per world (the asset store's per-world limit counts under this lock).
        const locked = (await tx.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1 for update', [world.id])).rows[0]!;
        const store = (picture: Uint8Array, name: string) => storeWorldAsset(tx, ctx.objects, { worldId: world.id, ownerId: auth.account.id, bytes: picture, name: name.slice(0, 200) });
        const avatar = await store(pictures.avatar.bytes, `portrait of ${locked.name}`);
        const cover = locked.cover_asset_id ?? (await store(pictures.cover.bytes, `cover of ${locked.name}`)).id;
        // The upload itself, for card exports (which embed it as it is, never resized; issue 49).
        const original = await store(bytes, `${locked.name} (portrait as uploaded)`);
        const { rows } = await tx.query<WorldRow & Record<string, unknown>>(
          'update worlds set avatar_asset_id = $2, cover_asset_id = $3, card_picture_asset_id = $4, revision = revision + 1, updated_at = now() where id = $1 returning *',
          [world.id, avatar.id, cover, original.id],
        );
        return rows[0]!;
      });
      reply.code(201);
      return answer(row, auth.account.id);
    });
  });

  app.delete<{ Params: { id: string } }>('/api/worlds/:id/portrait', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const world = await ownedWorld(request.params.id, auth.account.id);
    if (!world.avatar_asset_id) return ownerView(world);
    const { rows } = await db.query<WorldRow & Record<string, unknown>>(
      'update worlds set avatar_asset_id = null, card_picture_asset_id = null, revision = revision + 1, updated_at = now() where id = $1 and owner_id = $2 returning *',
      [world.id, auth.account.id],
    );
    return answer(rows[0]!, auth.account.id);
  });
}
