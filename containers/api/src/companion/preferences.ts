import { type CompanionPreferences, DEFAULT_PREFERENCES, type PreferencesRequest } from '@yumina/companion';
import type { AppContext } from '../context.ts';

/**
 * The companion preferences of one account (migration 070): occasional visits and proactive
 * comments, two separate switches, so they follow the player to a reload and to another device.
 */

interface Row {
  occasional_visits: boolean;
  proactive_comments: boolean;
}

const fromRow = (row: Row | undefined): CompanionPreferences =>
  row ? { occasionalVisits: row.occasional_visits, proactiveComments: row.proactive_comments } : { ...DEFAULT_PREFERENCES };

export async function readPreferences(ctx: AppContext, accountId: string): Promise<CompanionPreferences> {
  const { rows } = await ctx.db.primary.query<Row & Record<string, unknown>>(
    'select occasional_visits, proactive_comments from game_companion_preferences where account_id = $1',
    [accountId],
  );
  return fromRow(rows[0]);
}

/** Changes only the switches named; the other keeps its stored value (or default). One statement. */
export async function writePreferences(ctx: AppContext, accountId: string, change: PreferencesRequest): Promise<CompanionPreferences> {
  const { rows } = await ctx.db.primary.query<Row & Record<string, unknown>>(
    `insert into game_companion_preferences as p (account_id, occasional_visits, proactive_comments)
     values ($1, coalesce($2::boolean, $4::boolean), coalesce($3::boolean, $5::boolean))
     on conflict (account_id) do update
       set occasional_visits = coalesce($2::boolean, p.occasional_visits),
           proactive_comments = coalesce($3::boolean, p.proactive_comments),
           updated_at = now()
     returning occasional_visits, proactive_comments`,
    [
      accountId,
      change.occasionalVisits ?? null,
      change.proactiveComments ?? null,
      DEFAULT_PREFERENCES.occasionalVisits,
      DEFAULT_PREFERENCES.proactiveComments,
    ],
  );
  return fromRow(rows[0]);
}
