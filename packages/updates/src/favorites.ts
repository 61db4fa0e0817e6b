import type { Queryable } from '@yumina/db';
import { worldNotFound } from './errors.ts';
import { canView, type Viewer } from './permissions.ts';
import { loadWork } from './records.ts';

export interface FavoriteState {
  favorited: boolean;
  count: number;
}

export async function favoriteState(db: Queryable, worldId: string, viewer: Viewer | null): Promise<FavoriteState> {
  const work = await loadWork(db, worldId);
  if (!work || !canView(work, viewer)) throw worldNotFound();
  const { rows } = await db.query<{ count: number; mine: boolean }>(
    `select count(*)::int as count, coalesce(bool_or(account_id = $2), false) as mine from world_favorites where world_id = $1`,
    [worldId, viewer?.accountId ?? null],
  );
  return { favorited: rows[0]!.mine, count: rows[0]!.count };
}

/** Favorites (on) or un-favorites (off) a world the viewer can see; idempotent. */
export async function setFavorite(db: Queryable, worldId: string, viewer: Viewer, on: boolean): Promise<FavoriteState> {
  const work = await loadWork(db, worldId);
  if (!work || !canView(work, viewer)) throw worldNotFound();
  if (on) {
    await db.query('insert into world_favorites (account_id, world_id) values ($1, $2) on conflict do nothing', [viewer.accountId, worldId]);
  } else {
    await db.query('delete from world_favorites where account_id = $1 and world_id = $2', [viewer.accountId, worldId]);
  }
  return favoriteState(db, worldId, viewer);
}
