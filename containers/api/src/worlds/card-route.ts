import { cardPicturePng, fullSizePng, PictureError, placeholderCardPng } from '@yumina/assets/picture';
import { HttpError } from '@yumina/http';
import { type CardSource, cardPng, exportCard, isPng, validateWorld, type WorldDefinition } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { assetKey } from '../studio/asset-store.ts';
import type { WorldRow } from './routes.ts';

/** A file name from the world's name: letters, digits and dashes (any script), never empty. */
const fileName = (name: string) => name.normalize('NFKC').replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'world';

type CardRow = WorldRow & { card_source: string | null; card_picture_asset_id: string | null };

/** The picture a PNG card is written into, and in plain words what it is. */
interface CardPicture {
  bytes: Uint8Array | null;
  said: string;
}

/**
 * GET /api/worlds/:id/card.png and /card.json: the author's world as a SillyTavern V3 card (with a
 * V2 `chara` copy in the PNG); the whole world under `extensions.yumina` so that importing it back
 * gives the same world. A world imported from a card writes that card again with the author's edits
 * merged in (worlds.card_source; issue 49), and the PNG is the card's own picture as it was (or the
 * original of an uploaded portrait), never re-encoded or resized; else the avatar, else the cover,
 * else a plain one. GET /api/worlds/:id/card-report says, in plain words, what the card will hold
 * and what it cannot. Only the author: a card is a copy of the whole world, interface and rules included.
 */
export async function cardRoute(app: FastifyInstance, ctx: AppContext): Promise<void> {
  async function authorsWorld(id: string, accountId: string): Promise<{ row: CardRow; world: WorldDefinition; source: CardSource | null }> {
    const { rows } = await ctx.db.primary.query<CardRow & Record<string, unknown>>('select * from worlds where id = $1', [id]);
    const row = rows[0];
    if (!row || row.owner_id !== accountId) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const validation = validateWorld(JSON.parse(row.definition) as unknown);
    if (!validation.ok) throw new HttpError(409, 'WORLD_INVALID', 'The stored world does not validate; save it in the studio first.');
    return { row, world: validation.world, source: row.card_source ? (JSON.parse(row.card_source) as CardSource) : null };
  }

  /** The picture as it is kept (a PNG embedded untouched; any other type as a PNG of its full size), else the avatar or cover resized, else a plain one. */
  async function pictureOf(row: CardRow, encode: boolean): Promise<CardPicture> {
    if (row.card_picture_asset_id) {
      const object = await ctx.objects.get(assetKey(row.id, row.card_picture_asset_id));
      if (object && isPng(object.bytes)) return { bytes: object.bytes, said: "The picture is the world's own, as it was imported or uploaded: the same PNG, not re-encoded or resized." };
      if (object) {
        try {
          return { bytes: encode ? (await fullSizePng(object.bytes)).bytes : null, said: 'The picture is the portrait you uploaded, written as a PNG at its full size (cards are PNG pictures).' };
        } catch (error) {
          if (!(error instanceof PictureError)) throw error;
        }
      }
    }
    for (const [assetId, what] of [[row.avatar_asset_id, 'avatar'], [row.cover_asset_id, 'cover']] as const) {
      if (!assetId) continue;
      const object = await ctx.objects.get(assetKey(row.id, assetId));
      if (!object) continue;
      try {
        return { bytes: encode ? (await cardPicturePng(object.bytes)).bytes : null, said: `The picture is the world's ${what}, as a PNG at most 1024 × 1536 (the world keeps no larger original of it).` };
      } catch (error) {
        if (!(error instanceof PictureError)) throw error;
      }
    }
    return { bytes: encode ? await placeholderCardPng() : null, said: 'The picture is a plain one: the world has no portrait or cover.' };
  }

  app.get<{ Params: { id: string; format: string } }>('/api/worlds/:id/card.:format', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const format = request.params.format;
    if (format !== 'png' && format !== 'json') throw new HttpError(404, 'NOT_FOUND', 'A card is card.png or card.json.');
    const { row, world, source } = await authorsWorld(request.params.id, auth.account.id);
    const { card } = exportCard(world, { source });
    const name = `${fileName(world.name)}.${format}`;
    reply.header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`).header('cache-control', 'no-store');
    if (format === 'json') return reply.type('application/json; charset=utf-8').send(JSON.stringify(card, null, 2));
    const picture = await pictureOf(row, true);
    return reply.type('image/png').send(Buffer.from(cardPng(picture.bytes!, card)));
  });

  app.get<{ Params: { id: string } }>('/api/worlds/:id/card-report', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { row, world, source } = await authorsWorld(request.params.id, auth.account.id);
    const { unwritten } = exportCard(world, { source });
    const picture = await pictureOf(row, false);
    const kept = [
      source
        ? 'This world came from a character card: the card goes back as it was — its version, the lorebook with every SillyTavern setting, its other extensions — with your edits here written into it.'
        : 'The character, greetings, example messages and lorebook entries become the card\'s own fields.',
      picture.said,
      'The whole world travels inside the card too: importing the card here again gives this world back.',
    ];
    reply.header('cache-control', 'no-store');
    return { kept, unwritten };
  });
}
