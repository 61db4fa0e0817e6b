import { enforceLimits } from '../accounts/request-limits.ts';
import { HttpError } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import { newId } from '../accounts/ids.ts';
import type { AppContext } from '../context.ts';
import { FILE_IMPORT_LIMIT, type ImportJobResult } from './import-job.ts';
import { ImportPool, ImportPoolBusy } from './import-pool.ts';
import { ownerView, summary, type WorldRow } from './routes.ts';

/** Room for a multipart form's boundaries and headers around a 16 MiB file. */
const MULTIPART_OVERHEAD = 64 * 1024;

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
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    scope.post<{ Querystring: { name?: string } }>('/api/worlds/import', { bodyLimit: FILE_IMPORT_LIMIT + MULTIPART_OVERHEAD }, async (request, reply) => {
      const auth = await requireAuth(ctx, request, reply);
      await enforceLimits(
        ctx,
        [{ key: `import:account:${auth.account.id}`, limit: ctx.config.limits.importsPerMinute, windowSeconds: 60 }],
        'Too many imports in a minute. Wait a moment and try again.',
      );
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
      const s = summary(result.world);
      const { rows } = await ctx.db.primary.query<WorldRow & Record<string, unknown>>(
        `insert into worlds (id, owner_id, name, description, tags, language, definition)
         values ($1, $2, $3, $4, $5, $6, $7) returning *`,
        [newId('wld'), auth.account.id, s.name, s.description, s.tags, s.language, JSON.stringify(result.world)],
      );
      reply.code(201);
      return { ...ownerView(rows[0]!), report: result.report };
    });
  });
}
