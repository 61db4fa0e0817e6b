import { cardPictures, type SizedPicture } from '@yumina/assets/picture';
import { HttpError } from '@yumina/http';
import type { ImportAsset, ImportMedia, ImportResult } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import { type Authenticated, newId } from '@yumina/accounts';
import { enforceLimits } from '../accounts/request-limits.ts';
import { bodyAsItArrives } from '../body-bytes.ts';
import type { AppContext } from '../context.ts';
import { storeWorldAsset } from '../studio/asset-store.ts';
import { FILE_IMPORT_LIMIT, type ImportJobResult } from './import-job.ts';
import { ImportPool, ImportPoolBusy } from './import-pool.ts';
import { ownerView, summary, type WorldRow } from './routes.ts';

/** Room for a multipart form's boundaries and headers around a 16 MiB file. */
const MULTIPART_OVERHEAD = 64 * 1024;

type Imported = Extract<ImportResult, { ok: true }>;

/**
 * The card's picture, sized for the library card (cover) and the chat (avatar): the PNG card's own
 * image, or else a V3 `icon` asset embedded as a data: URI. Resized by sharp on libuv's threads.
 * A picture that cannot be read is not kept, and the report says why; the import goes on.
 */
async function sizePicture(result: Imported): Promise<{ source: ImportMedia; asset: ImportAsset; cover: SizedPicture; avatar: SizedPicture } | null> {
  const source = result.media.find((item) => item.embedded === 'picture') ?? result.media.find((item) => item.embedded === 'data' && item.type === 'icon');
  if (!source) return null;
  const asset = result.report.assets.find((item) => item.id === source.id)!;
  try {
    const { cover, avatar } = await cardPictures(source.bytes);
    return { source, asset, cover, avatar };
  } catch (error) {
    asset.notKept = `${(error as Error).message}; the world has no cover or avatar (upload one in the studio)`;
    return null;
  }
}

/**
 * POST /api/worlds/import: creates a draft world for the caller from the imported file; a refused
 * import creates nothing. The body is read as bytes (any content type) and handed to the import
 * pool: a card of up to 16 MiB as the file itself (`image/png`, `application/octet-stream`, `?name=`)
 * or as a multipart form, or the JSON body `{world}` / `{file: {name, base64}}` of up to 5 MiB.
 * Imports are limited per account (IMPORT_RATE_LIMIT_PER_MINUTE).
 */
export async function importRoute(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const pool = new ImportPool();
  app.addHook('onClose', async () => pool.close());

  await app.register(async (scope) => {
    // Every body as bytes: JSON is parsed by the import job (with the same guards), off the event loop when large.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', bodyAsItArrives);

    // The session and the account's limit are checked before the body is read: a client without
    // a session, or over its limit, never gets 16 MiB through.
    const accounts = new WeakMap<object, Authenticated>();
    scope.post<{ Querystring: { name?: string } }>(
      '/api/worlds/import',
      {
        bodyLimit: FILE_IMPORT_LIMIT + MULTIPART_OVERHEAD,
        onRequest: async (request, reply) => {
          const auth = await requireAuth(ctx, request, reply);
          await enforceLimits(
            ctx,
            [{ key: `import:account:${auth.account.id}`, limit: ctx.config.limits.importsPerMinute, windowSeconds: 60 }],
            'Too many imports in a minute. Wait a moment and try again.',
          );
          accounts.set(request, auth);
        },
      },
      async (request, reply) => {
        const auth = accounts.get(request) ?? (await requireAuth(ctx, request, reply));
        const bytes = request.body;
        if (!Buffer.isBuffer(bytes)) throw new HttpError(400, 'EMPTY_UPLOAD', 'Send the file as the request body (or as a multipart form field named "file").');
        const name = typeof request.query.name === 'string' ? request.query.name.slice(0, 255) : undefined;
        let outcome: ImportJobResult;
        try {
          outcome = await pool.run({ bytes, contentType: request.headers['content-type'] ?? 'application/octet-stream', ...(name ? { fileName: name } : {}) });
        } catch (error) {
          if (error instanceof ImportPoolBusy) throw new HttpError(503, 'IMPORT_BUSY', error.message, { 'retry-after': '5' });
          throw error;
        }
        if (outcome.kind === 'bad-body') throw new HttpError(outcome.status, outcome.code, outcome.message);
        const result = outcome.result;
        if (!result.ok) {
          const paths = result.issues.map((issue) => issue.path || '(file)').join(', ');
          const message = `The file could not be imported (${result.issues.length} issue${result.issues.length === 1 ? '' : 's'}: ${paths}).`;
          throw new HttpError(422, 'IMPORT_REFUSED', message, {}, { error: { code: 'IMPORT_REFUSED', message }, issues: result.issues, report: result.report });
        }
        const picture = await sizePicture(result);
        const s = summary(result.world);
        const row = await ctx.db.primary.transaction(async (tx) => {
          const { rows } = await tx.query<WorldRow & Record<string, unknown>>(
            `insert into worlds (id, owner_id, name, description, tags, language, definition)
             values ($1, $2, $3, $4, $5, $6, $7) returning *`,
            [newId('wld'), auth.account.id, s.name, s.description, s.tags, s.language, JSON.stringify(result.world)],
          );
          const world = rows[0]!;
          const store = (bytes: Uint8Array, name: string) => storeWorldAsset(tx, ctx.objects, { worldId: world.id, ownerId: auth.account.id, bytes, name: name.slice(0, 200) });
          let cover: string | null = null;
          let avatar: string | null = null;
          if (picture) {
            // The same asset store as uploads (type by content, the world's limits).
            avatar = (await store(picture.avatar.bytes, `avatar of ${s.name}`)).id;
            cover = (await store(picture.cover.bytes, `cover of ${s.name}`)).id;
            picture.asset.storedAs = `asset://${avatar}`;
            picture.asset.role = `the character's avatar (${picture.avatar.width} × ${picture.avatar.height}); the library cover is asset://${cover} (${picture.cover.width} × ${picture.cover.height})`;
          }
          for (const item of result.media) {
            if (item.embedded !== 'data' || item === picture?.source) continue;
            const asset = result.report.assets.find((candidate) => candidate.id === item.id)!;
            try {
              asset.storedAs = `asset://${(await store(item.bytes, item.id)).id}`;
              asset.role = item.type ? `a ${item.type} asset of the card` : 'an asset of the card';
            } catch (error) {
              if (!(error instanceof HttpError) || error.statusCode >= 500) throw error;
              asset.notKept = error.message;
            }
          }
          if (!cover && !avatar) return world;
          const updated = await tx.query<WorldRow & Record<string, unknown>>('update worlds set cover_asset_id = $2, avatar_asset_id = $3 where id = $1 returning *', [world.id, cover, avatar]);
          return updated.rows[0]!;
        });
        reply.code(201);
        return { ...ownerView(row), report: result.report };
      },
    );
  });
}
