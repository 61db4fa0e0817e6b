import { readFileSync } from 'node:fs';
import { validateWorld } from '@yumina/world';
import type { AppContext } from '../context.ts';
import { repoRoot } from '../web.ts';

/** The shipped sample worlds (packages/world/samples), published by the platform's own account. */
export const SAMPLE_WORLDS = ['willow-street', 'ashen-depths', 'changan-nights'] as const;
export const SAMPLES_ACCOUNT = { id: 'acc_yumina_samples_0001', email: 'samples@yumina.invalid', displayName: 'Yumina samples' } as const;

/**
 * On first start (local mode, SAMPLE_WORLDS on), publishes the sample worlds under the samples
 * account, so a newcomer has something to play at once (friends together too: rooms allowed). Runs once: the account's existence marks it
 * done, so an administrator who unpublishes or deletes a sample is not overruled at the next start.
 */
export async function publishSampleWorlds(ctx: AppContext): Promise<number> {
  return ctx.db.primary.transaction(async (tx) => {
    const created = await tx.query(
      `insert into accounts (id, email, display_name) values ($1, $2, $3) on conflict (id) do nothing`,
      [SAMPLES_ACCOUNT.id, SAMPLES_ACCOUNT.email, SAMPLES_ACCOUNT.displayName],
    );
    if (created.rowCount !== 1) return 0;
    let n = 0;
    for (const name of SAMPLE_WORLDS) {
      const result = validateWorld(JSON.parse(readFileSync(`${repoRoot}/packages/world/samples/${name}.json`, 'utf8')));
      if (!result.ok) continue;
      const w = result.world;
      const tags = [...new Set((w.customTags ?? []).map((t) => String(t).toLowerCase()))].slice(0, 50);
      await tx.query(
        `insert into worlds (id, owner_id, name, description, tags, language, definition, status, published_at,
                             live_revision, live_definition, live_name, live_description, live_tags, live_language, live_updated_at, rooms_allowed)
         values ($1, $2, $3, $4, $5, $6, $7, 'published', now(), 1, $7, $3, $4, $5, $6, now(), true)`,
        [`wld_sample_${name.replace(/-/g, '_')}`, SAMPLES_ACCOUNT.id, w.name, w.description, tags, w.language ?? null, JSON.stringify(w)],
      );
      n++;
    }
    return n;
  });
}
