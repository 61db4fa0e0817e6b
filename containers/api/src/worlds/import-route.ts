import { HttpError, parseWith } from '@yumina/http';
import { importWorld } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { newId } from '@yumina/accounts';
import type { AppContext } from '../context.ts';
import { ownerView, summary, WORLD_BODY_LIMIT, type WorldRow } from './routes.ts';

/**
 * The import body: `world` (any JSON value: a world of version 5.x–25.x, a SillyTavern card or a
 * World Info lorebook) or `file` (the file's bytes in base64: a PNG card, or JSON), not both.
 */
const importBody = z
  .object({
    world: z.unknown().optional(),
    file: z.object({ name: z.string().max(255).optional(), base64: z.string().min(1) }).strict().optional(),
  })
  .strict()
  .refine((body) => (body.world === undefined) !== (body.file === undefined), { message: 'send exactly one of "world" (JSON) or "file" ({name, base64})' });

function decodeBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text.replace(/\s+/g, ''))) throw new HttpError(400, 'BAD_REQUEST', 'file.base64 is not base64.');
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/** POST /api/worlds/import: creates a draft world for the caller from the imported file; a refused import creates nothing. */
export async function importRoute(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post('/api/worlds/import', { bodyLimit: WORLD_BODY_LIMIT }, async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(importBody, request.body);
    const input = body.file ? decodeBase64(body.file.base64) : body.world;
    const fallbackName = body.file?.name?.replace(/\.[^.]+$/, '').trim() || undefined;
    const result = importWorld(input, fallbackName ? { fallbackName } : {});
    if (!result.ok) {
      const paths = result.issues.map((issue) => issue.path || '(file)').join(', ');
      throw new HttpError(422, 'IMPORT_REFUSED', `The file could not be imported (${result.issues.length} issue${result.issues.length === 1 ? '' : 's'}: ${paths}).`, {}, {
        error: { code: 'IMPORT_REFUSED', message: `The file could not be imported (${result.issues.length} issue${result.issues.length === 1 ? '' : 's'}: ${paths}).` },
        issues: result.issues,
        report: result.report,
      });
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
}
