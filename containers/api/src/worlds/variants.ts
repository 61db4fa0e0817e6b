import type { Queryable } from '@yumina/db';
import { HttpError, parseWith } from '@yumina/http';
import { VARIANT_GROUP_CTE, variantRoot } from '@yumina/updates';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { authenticate, requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';

/**
 * Language variants of one work (table world_variants, migration 011): every variant names the
 * original; the original names nobody. One level only: an original is never a variant, a variant
 * never has variants. The update history mixes the records of the whole group.
 */

type WorldStatus = 'saved' | 'unpublished' | 'published' | 'held';

export interface VariantMember {
  id: string;
  name: string;
  language: string | null;
  status: WorldStatus;
  isOriginal: boolean;
}

export interface VariantGroupView {
  /** The original this world is a variant of; null when it is the original itself or stands alone. */
  originalId: string | null;
  /** The other members of the group (the original and its variants), this world excluded. */
  variants: VariantMember[];
}

const variantOfBody = z.strictObject({ originalId: z.string().min(1).max(100).nullable() });

const notFound = () => new HttpError(404, 'NOT_FOUND', 'No such world.');

/** Thrown inside the link transaction when the target's original moved before its lock was held. */
class RootMoved extends Error {}
const LINK_ATTEMPTS = 3;

/**
 * The group of a world as a viewer sees it. The owner sees every member with its saved name and
 * language; anyone else sees published members only, with their live name and language.
 */
export async function readVariantGroup(db: Queryable, worldId: string, viewerId: string | null): Promise<VariantGroupView> {
  const { rows } = await db.query<{ id: string; owner_id: string; status: WorldStatus; name: string; language: string | null; live_name: string; live_language: string | null; is_original: boolean }>(
    `${VARIANT_GROUP_CTE}
     select w.id, w.owner_id, w.status, w.name, w.language,
            coalesce(w.live_name, w.name) as live_name, coalesce(w.live_language, w.language) as live_language,
            w.id = (select id from root) as is_original
       from worlds w
      where w.id in (select id from grp)
      order by is_original desc, coalesce(w.live_language, w.language) nulls last, w.name, w.id`,
    [worldId],
  );
  const visible = rows.filter((r) => r.owner_id === viewerId || r.status === 'published');
  const original = visible.find((r) => r.is_original);
  return {
    originalId: original && original.id !== worldId ? original.id : null,
    variants: visible
      .filter((r) => r.id !== worldId)
      .map((r) => {
        const own = r.owner_id === viewerId;
        return { id: r.id, name: own ? r.name : r.live_name, language: own ? r.language : r.live_language, status: r.status, isOriginal: r.is_original };
      }),
  };
}

export async function variantRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.get<{ Params: { id: string } }>('/api/worlds/:id/variants', async (request, reply) => {
    const auth = await authenticate(ctx, request, reply);
    const viewerId = auth?.account.id ?? null;
    // The same visibility as GET /api/worlds/:id: the owner, or anyone once published.
    const { rows } = await db.query<{ owner_id: string; status: WorldStatus }>('select owner_id, status from worlds where id = $1', [request.params.id]);
    const row = rows[0];
    if (!row || (row.status !== 'published' && row.owner_id !== viewerId)) throw notFound();
    return readVariantGroup(db, request.params.id, viewerId);
  });

  /**
   * Links a world as a language variant of another (or unlinks it with null). The checks and the
   * write run in one transaction holding row locks on every world involved (the world, the named
   * original and that original's own original), taken in one statement in id order so two links
   * cannot deadlock. Two racing links therefore run one after the other, and the second sees the
   * first: no chain and no cycle can be built. Any refusal rolls everything back.
   */
  app.put<{ Params: { id: string } }>('/api/worlds/:id/variant-of', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { originalId } = parseWith(variantOfBody, request.body);
    const worldId = request.params.id;
    const me = auth.account.id;

    for (let attempt = 1; ; attempt++) {
      // A guess of the target's original, read without a lock; confirmed once the locks are held.
      const guessedRoot = originalId === null ? null : await variantRoot(db, originalId);
      try {
        return await db.transaction(async (tx) => {
          const involved = [...new Set([worldId, originalId, guessedRoot].filter((x): x is string => x !== null))];
          const { rows } = await tx.query<{ id: string; owner_id: string }>('select id, owner_id from worlds where id = any($1::text[]) order by id for update', [involved]);
          const owned = new Set(rows.filter((r) => r.owner_id === me).map((r) => r.id));
          if (!owned.has(worldId)) throw notFound();
          if (originalId === null) {
            await tx.query('delete from world_variants where world_id = $1', [worldId]);
            return readVariantGroup(tx, worldId, me);
          }
          if (!owned.has(originalId)) throw new HttpError(404, 'NOT_FOUND', 'No such original world among your works.');
          if (originalId === worldId) throw new HttpError(409, 'VARIANT_SELF', 'A world cannot be a language variant of itself.');
          const root = await variantRoot(tx, originalId);
          if (root !== guessedRoot) throw new RootMoved();
          if (!owned.has(root)) throw new HttpError(404, 'NOT_FOUND', 'No such original world among your works.');
          if (root === worldId) throw new HttpError(409, 'VARIANT_SAME_GROUP', 'That world is already a language variant of this one.');
          if ((await variantRoot(tx, worldId)) === root) throw new HttpError(409, 'VARIANT_SAME_GROUP', 'This world is already a language variant of that work.');
          const own = await tx.query('select 1 from world_variants where original_id = $1 limit 1', [worldId]);
          if (own.rowCount) throw new HttpError(409, 'VARIANT_HAS_VARIANTS', 'This world has language variants of its own: unlink its variants first.');
          await tx.query(
            `insert into world_variants (world_id, original_id) values ($1, $2)
             on conflict (world_id) do update set original_id = excluded.original_id`,
            [worldId, root],
          );
          return readVariantGroup(tx, worldId, me);
        });
      } catch (err) {
        if (!(err instanceof RootMoved)) throw err;
        if (attempt >= LINK_ATTEMPTS) throw new HttpError(409, 'VARIANT_BUSY', 'The variants of that work changed while linking; try again.');
      }
    }
  });
}
