import { HttpError } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import { type Authenticated, newId } from '@yumina/accounts';
import { enforceLimits } from '../accounts/request-limits.ts';
import { bodyAsChunks } from '../body-bytes.ts';
import type { AppContext } from '../context.ts';
import { storeWorldAsset } from '../studio/asset-store.ts';
import { FILE_IMPORT_LIMIT, type ImportJobResult } from './import-job.ts';
import { ImportPool, ImportPoolBusy } from './import-pool.ts';
import { OWNER_FIELD_COLUMNS, ownerFields, summary } from './routes.ts';

/** Room for a multipart form's boundaries and headers around a 16 MiB file. */
const MULTIPART_OVERHEAD = 64 * 1024;

type OwnerRow = Parameters<typeof ownerFields>[0];

/**
 * POST /api/worlds/import: creates a draft world for the caller from the imported file; a refused
 * import creates nothing. The body is kept as the chunks it arrived in (any content type) and
 * handed to the import pool, which joins them in its worker: a card of up to 16 MiB as the file itself (`image/png`, `application/octet-stream`, `?name=`)
 * or as a multipart form, or the JSON body `{world}` / `{file: {name, base64}}` of up to 5 MiB.
 * Imports are limited per account (IMPORT_RATE_LIMIT_PER_MINUTE).
 */
export async function importRoute(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const pool = new ImportPool();
  app.addHook('onClose', async () => pool.close());

  await app.register(async (scope) => {
    // Every body as its chunks: JSON is parsed by the import job (with the same guards), off the event loop when large.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', bodyAsChunks);

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
        if (!Array.isArray(bytes)) throw new HttpError(400, 'EMPTY_UPLOAD', 'Send the file as the request body (or as a multipart form field named "file").');
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
        // The job (in a worker for a large file) sized the picture and wrote the world's JSON text:
        // this thread stores them and answers with that text as it is, never parsing the world again.
        const { picture, definition, cardSource } = outcome;
        const s = summary(result.world);
        const row = await ctx.db.primary.transaction(async (tx) => {
          const { rows } = await tx.query<OwnerRow>(
            `insert into worlds (id, owner_id, name, description, tags, language, definition, card_source)
             values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${OWNER_FIELD_COLUMNS}`,
            [newId('wld'), auth.account.id, s.name, s.description, s.tags, s.language, definition, cardSource],
          );
          const world = rows[0]!;
          const store = (bytes: Uint8Array, name: string) => storeWorldAsset(tx, ctx.objects, { worldId: world.id, ownerId: auth.account.id, bytes, name: name.slice(0, 200) });
          let cover: string | null = null;
          let avatar: string | null = null;
          let original: string | null = null;
          if (picture) {
            // The same asset store as uploads (type by content, the world's limits).
            avatar = (await store(picture.avatar.bytes, `avatar of ${s.name}`)).id;
            cover = (await store(picture.cover.bytes, `cover of ${s.name}`)).id;
            const asset = result.report.assets.find((item) => item.id === picture.sourceId)!;
            asset.storedAs = `asset://${avatar}`;
            asset.role = `the character's avatar (${picture.avatar.width} × ${picture.avatar.height}); the library cover is asset://${cover} (${picture.cover.width} × ${picture.cover.height})`;
            // The picture as the card had it, for card exports (never re-encoded); too large for an asset, exports resize the avatar's source instead.
            try {
              original = (await storeWorldAsset(tx, ctx.objects, { worldId: world.id, ownerId: auth.account.id, bytes: picture.original, name: `${s.name} (card picture)`.slice(0, 200), sha256: picture.originalSha256 })).id;
              asset.role += `; the card's own picture is kept as asset://${original} for card exports`;
            } catch (error) {
              if (!(error instanceof HttpError) || error.statusCode >= 500) throw error;
              asset.role += `; the card's own picture was not kept for card exports (${error.message}), which embed the avatar instead`;
            }
          }
          for (const item of result.media) {
            if (item.embedded !== 'data') continue;
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
          const updated = await tx.query<OwnerRow>(`update worlds set cover_asset_id = $2, avatar_asset_id = $3, card_picture_asset_id = $4 where id = $1 returning ${OWNER_FIELD_COLUMNS}`, [
            world.id,
            cover,
            avatar,
            original,
          ]);
          return updated.rows[0]!;
        });
        reply.code(201).type('application/json; charset=utf-8');
        // ownerView's shape, the world spliced in as the text the job wrote.
        return `${JSON.stringify({ ...ownerFields(row), report: result.report }).slice(0, -1)},"world":${definition}}`;
      },
    );
  });
}
