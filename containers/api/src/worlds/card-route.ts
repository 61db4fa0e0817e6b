import { cardPicturePng, PictureError, placeholderCardPng } from '@yumina/assets/picture';
import { HttpError } from '@yumina/http';
import { cardPng, exportCard, validateWorld } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { assetKey } from '../studio/asset-store.ts';
import type { WorldRow } from './routes.ts';

/** A file name from the world's name: letters, digits and dashes (any script), never empty. */
const fileName = (name: string) => name.normalize('NFKC').replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'world';

/**
 * GET /api/worlds/:id/card.png and /card.json: the author's world as a SillyTavern V3 card (with a
 * V2 `chara` copy in the PNG), its picture the character's avatar, else the cover, else a plain
 * one; the whole world under `extensions.yumina` so that importing it back gives the same world.
 * Only the author: a card is a copy of the whole world, interface and rules included.
 */
export async function cardRoute(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get<{ Params: { id: string; format: string } }>('/api/worlds/:id/card.:format', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const format = request.params.format;
    if (format !== 'png' && format !== 'json') throw new HttpError(404, 'NOT_FOUND', 'A card is card.png or card.json.');
    const { rows } = await ctx.db.primary.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1', [request.params.id]);
    const row = rows[0];
    if (!row || row.owner_id !== auth.account.id) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const validation = validateWorld(JSON.parse(row.definition) as unknown);
    if (!validation.ok) throw new HttpError(409, 'WORLD_INVALID', 'The stored world does not validate; save it in the studio first.');
    const { card } = exportCard(validation.world);
    const name = `${fileName(validation.world.name)}.${format}`;
    reply.header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`).header('cache-control', 'no-store');
    if (format === 'json') return reply.type('application/json; charset=utf-8').send(JSON.stringify(card, null, 2));
    let picture: Uint8Array | null = null;
    for (const assetId of [row.avatar_asset_id, row.cover_asset_id]) {
      if (!assetId) continue;
      const object = await ctx.objects.get(assetKey(row.id, assetId));
      if (!object) continue;
      try {
        picture = (await cardPicturePng(object.bytes)).bytes;
        break;
      } catch (error) {
        if (!(error instanceof PictureError)) throw error;
      }
    }
    return reply.type('image/png').send(Buffer.from(cardPng(picture ?? (await placeholderCardPng()), card)));
  });
}
