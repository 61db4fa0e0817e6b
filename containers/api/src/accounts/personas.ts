import { HttpError, oneLineField, parseWith } from '@yumina/http';
import type { Queryable } from '@yumina/db';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { requireAuth } from './auth.ts';
import { newId } from '@yumina/accounts';
import { PICTURE_UPLOAD_BYTES, removeUploaded, storePicture } from './profile-routes.ts';
import { bodyAsItArrives } from '../body-bytes.ts';

export interface Persona {
  id: string;
  name: string;
  description: string;
  avatar: string | null;
  /** Details for the persona macros (seed 002 §2.8); empty when not given. */
  appearance: string;
  personality: string;
  backstory: string;
  active: boolean;
}

const fields = {
  name: oneLineField(100),
  description: z.string().max(5000).default(''),
  avatar: z
    .string()
    .trim()
    .regex(/^(https:\/\/|asset:\/\/)\S+$/, 'must be an https:// or asset:// reference')
    .nullable()
    .default(null),
  appearance: z.string().max(5000).default(''),
  personality: z.string().max(5000).default(''),
  backstory: z.string().max(5000).default(''),
};
const createBody = z.strictObject(fields);
const patchBody = z.strictObject({
  name: fields.name.optional(),
  description: z.string().max(5000).optional(),
  avatar: fields.avatar.optional(),
  appearance: z.string().max(5000).optional(),
  personality: z.string().max(5000).optional(),
  backstory: z.string().max(5000).optional(),
});

const toPersona = (r: Record<string, unknown>): Persona => ({
  id: r.id as string,
  name: r.name as string,
  description: r.description as string,
  avatar: (r.avatar as string | null) ?? null,
  appearance: (r.appearance as string | undefined) ?? '',
  personality: (r.personality as string | undefined) ?? '',
  backstory: (r.backstory as string | undefined) ?? '',
  active: r.is_active as boolean,
});

/** The persona the world engine's `user` and persona macros read (seed 002 §2.8). */
export async function activePersona(db: Queryable, accountId: string): Promise<Persona | null> {
  const { rows } = await db.query('select * from personas where account_id = $1 and is_active', [accountId]);
  return rows[0] ? toPersona(rows[0]) : null;
}

export async function personaRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  app.get('/api/personas', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows } = await db.query('select * from personas where account_id = $1 order by created_at, id', [auth.account.id]);
    return { personas: rows.map(toPersona) };
  });

  app.post('/api/personas', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(createBody, request.body);
    const count = await db.query<{ n: number }>('select count(*)::int as n from personas where account_id = $1', [auth.account.id]);
    if ((count.rows[0]?.n ?? 0) >= 50) throw new HttpError(409, 'TOO_MANY_PERSONAS', 'An account can have at most 50 personas.');
    const { rows } = await db.query(
      `insert into personas (id, account_id, name, description, avatar, appearance, personality, backstory, is_active)
       values ($1, $2, $3, $4, $5, $6, $7, $8, not exists (select 1 from personas where account_id = $2 and is_active)) returning *`,
      [newId('per'), auth.account.id, body.name, body.description, body.avatar, body.appearance, body.personality, body.backstory],
    );
    reply.code(201);
    return toPersona(rows[0]!);
  });

  app.patch<{ Params: { id: string } }>('/api/personas/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(patchBody, request.body);
    const { rows, old } = await db.transaction(async (tx) => {
      const before = await tx.query<{ avatar: string | null }>('select avatar from personas where id = $1 and account_id = $2 for update', [request.params.id, auth.account.id]);
      const updated = await tx.query(
        `update personas set name = coalesce($3, name), description = coalesce($4, description),
                avatar = case when $5::boolean then $6 else avatar end,
                appearance = coalesce($7, appearance), personality = coalesce($8, personality), backstory = coalesce($9, backstory)
          where id = $1 and account_id = $2 returning *`,
        [
          request.params.id,
          auth.account.id,
          body.name ?? null,
          body.description ?? null,
          body.avatar !== undefined,
          body.avatar ?? null,
          body.appearance ?? null,
          body.personality ?? null,
          body.backstory ?? null,
        ],
      );
      return { rows: updated.rows, old: before.rows[0]?.avatar ?? null };
    });
    if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such persona.');
    // An uploaded avatar replaced by a link (or removed) is deleted with it.
    if (old && old !== rows[0].avatar) await removeUploaded(ctx, old, auth.account.id);
    return toPersona(rows[0]);
  });

  /**
   * A persona's avatar uploaded (issue 30 B): the image is the body (any declared type: the
   * content decides), resized like a profile picture (a 256 px WebP without metadata) and kept in
   * the object store beside it, in a file of the persona's own; the previous upload goes.
   */
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', bodyAsItArrives);
    scope.post<{ Params: { id: string } }>('/api/personas/:id/avatar', { bodyLimit: PICTURE_UPLOAD_BYTES }, async (request, reply) => {
      const auth = await requireAuth(ctx, request, reply);
      const found = await db.query('select 1 from personas where id = $1 and account_id = $2', [request.params.id, auth.account.id]);
      if (!found.rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such persona.');
      const avatar = await storePicture(ctx, auth.account.id, request.body, request.params.id);
      const { rows, old } = await db.transaction(async (tx) => {
        const before = await tx.query<{ avatar: string | null }>('select avatar from personas where id = $1 and account_id = $2 for update', [request.params.id, auth.account.id]);
        const updated = await tx.query('update personas set avatar = $3 where id = $1 and account_id = $2 returning *', [request.params.id, auth.account.id, avatar]);
        return { rows: updated.rows, old: before.rows[0]?.avatar ?? null };
      });
      if (!rows[0]) {
        // Deleted meanwhile: its new file goes too.
        await removeUploaded(ctx, avatar, auth.account.id);
        throw new HttpError(404, 'NOT_FOUND', 'No such persona.');
      }
      if (old && old !== avatar) await removeUploaded(ctx, old, auth.account.id);
      reply.code(201);
      return toPersona(rows[0]);
    });
  });

  app.delete<{ Params: { id: string } }>('/api/personas/:id/avatar', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows, old } = await db.transaction(async (tx) => {
      const before = await tx.query<{ avatar: string | null }>('select avatar from personas where id = $1 and account_id = $2 for update', [request.params.id, auth.account.id]);
      const updated = await tx.query('update personas set avatar = null where id = $1 and account_id = $2 returning *', [request.params.id, auth.account.id]);
      return { rows: updated.rows, old: before.rows[0]?.avatar ?? null };
    });
    if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such persona.');
    if (old) await removeUploaded(ctx, old, auth.account.id);
    return toPersona(rows[0]);
  });

  app.post<{ Params: { id: string } }>('/api/personas/:id/activate', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const persona = await db.transaction(async (tx) => {
      const found = await tx.query('select 1 from personas where id = $1 and account_id = $2 for update', [request.params.id, auth.account.id]);
      if (!found.rowCount) throw new HttpError(404, 'NOT_FOUND', 'No such persona.');
      await tx.query('update personas set is_active = false where account_id = $1 and is_active', [auth.account.id]);
      const { rows } = await tx.query('update personas set is_active = true where id = $1 returning *', [request.params.id]);
      return toPersona(rows[0]!);
    });
    return persona;
  });

  app.delete<{ Params: { id: string } }>('/api/personas/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows } = await db.query<{ avatar: string | null }>('delete from personas where id = $1 and account_id = $2 returning avatar', [request.params.id, auth.account.id]);
    if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such persona.');
    if (rows[0].avatar) await removeUploaded(ctx, rows[0].avatar, auth.account.id);
    return { ok: true };
  });
}
