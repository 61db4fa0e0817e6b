import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type MigratedDatabase } from '../../../../tests/support/postgres.ts';

/**
 * Issue 51, point 11: the library's bookkeeping on a write (the player counts of migration 092,
 * the search terms of migration 098, and PostgreSQL's own foreign-key triggers when a session or
 * a world goes) looks rows up one world, session or player at a time. Each lookup must read an
 * index, or its cost grows with the library (bench/library-writes.bench.ts: a session's deletion
 * scanned every session for its branches until migration 180; a world's deletion scanned all
 * update notifications until 181). The plans are asked with sequential scans priced out, so a
 * lookup still planned as one has no index to read.
 */
let database: MigratedDatabase;

/** The plan of `sql` with sequential scans priced out (an empty table would otherwise be scanned anyway). */
async function plan(sql: string, params: unknown[]): Promise<string> {
  return database.db.transaction(async (tx) => {
    await tx.query('set local enable_seqscan = off');
    const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`explain ${sql}`, params);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

beforeAll(async () => {
  database = await createMigratedDatabase();
}, 60_000);

afterAll(async () => {
  await database?.drop();
});

describe('the per-row work of the library triggers reads indexes (issue 51)', () => {
  // The statements of world_players_session_started / _deleted (092) and world_terms_refresh (098), as they run.
  const lookups: [string, string, unknown[]][] = [
    ['a first session: is the player counted already', 'select 1 from world_players where world_id = $1 and account_id = $2', ['wld_a', 'acc_a']],
    ['a first session: the world count', 'update worlds set player_count = player_count + 1 where id = $1', ['wld_a']],
    [
      "a session's deletion: the player's other sessions of the world",
      `delete from world_players p where p.world_id = $1 and p.account_id = $2
         and not exists (select 1 from chat_sessions s where s.world_id = $1 and s.account_id = $2)`,
      ['wld_a', 'acc_a'],
    ],
    ["a world's publication, edit or deletion: its terms", 'delete from world_terms where world_terms.world_id = $1', ['wld_a']],
  ];
  for (const [label, sql, params] of lookups) {
    it(`${label}: an index scan`, async () => {
      const p = await plan(sql, params);
      expect(p, p).not.toMatch(/Seq Scan/);
      expect(p).toMatch(/Index (Only )?Scan/);
    });
  }

  it("a session's or a world's deletion: every table referencing it finds its rows by index (the foreign keys' own triggers)", async () => {
    const { rows: refs } = await database.db.query<{ tbl: string; col: string }>(
      `select c.conrelid::regclass::text as tbl, a.attname as col
         from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
        where c.contype = 'f' and c.confrelid in ('chat_sessions'::regclass, 'worlds'::regclass) and array_length(c.conkey, 1) = 1
        order by 1, 2`,
    );
    // chat_messages, checkpoints, room tables, prompt texts, group scenes, and the sessions' own
    // branches; a world's sessions, players, reviews, publication events …
    expect(refs.map((r) => `${r.tbl}.${r.col}`)).toEqual(expect.arrayContaining(['chat_sessions.branched_from', 'chat_sessions.world_id', 'world_players.world_id']));
    expect(refs.length).toBeGreaterThanOrEqual(12);
    const unindexed: string[] = [];
    for (const { tbl, col } of refs) {
      // As the foreign key's action looks them up (RI_FKey_cascade_del / setnull_del: `where col = $1`).
      const p = await plan(`select 1 from ${tbl} where ${col} = $1`, ['cnv_a']);
      if (/Seq Scan/.test(p)) unindexed.push(`${tbl}.${col}`);
    }
    expect(unindexed).toEqual([]);
  });
});
