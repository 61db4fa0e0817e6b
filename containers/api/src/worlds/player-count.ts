import type { DbPool } from '@yumina/db';

/**
 * Maintenance: repairs the maintained player counts (migration 092) wherever they drifted from the
 * sessions (a session deleted while the same player started another, a restore from a backup):
 * world_players gets the (world, account) pairs that have a session and loses those that have
 * none; then each world whose count differs is recounted under its row lock, which the session
 * triggers take too, so a first session committing meanwhile is neither lost nor counted twice.
 * Returns how many worlds' counts changed.
 */
export async function repairPlayerCounts(db: DbPool): Promise<number> {
  await db.query(
    `insert into world_players (world_id, account_id)
     select distinct world_id, account_id from chat_sessions on conflict do nothing`,
  );
  await db.query(
    `delete from world_players p
      where not exists (select 1 from chat_sessions s where s.world_id = p.world_id and s.account_id = p.account_id)`,
  );
  const { rows } = await db.query<{ id: string }>(
    `select w.id from worlds w left join (select world_id, count(*)::int as n from world_players group by world_id) p on p.world_id = w.id
      where w.player_count <> coalesce(p.n, 0)`,
  );
  let changed = 0;
  for (const { id } of rows) {
    changed += await db.transaction(async (tx) => {
      const current = await tx.query<{ player_count: number }>('select player_count from worlds where id = $1 for update', [id]);
      if (!current.rows[0]) return 0;
      const { rowCount } = await tx.query(
        `update worlds set player_count = (select count(*)::int from world_players where world_id = $1)
          where id = $1 and player_count <> (select count(*)::int from world_players where world_id = $1)`,
        [id],
      );
      return rowCount ?? 0;
    });
  }
  return changed;
}
