import {
  applyNotebookMutation,
  emptyNotebook,
  type Notebook,
  type NotebookMutation,
  type NotebookWrite,
  parseNotebook,
  type WriteBase,
} from '@yumina/companion';
import type { AppContext } from '../context.ts';

/**
 * The notebook row of one account. A write names the revision it was based on and is stored with
 * one compare-and-set (`update … where revision = $base`): when the stored revision is another one
 * (another tab, an old in-flight reply, a reset), nothing is written and the caller gets a conflict
 * carrying the current notebook, so the writer can re-read and re-apply (seed 001 §7: a write with
 * an outdated revision is not applied). No transaction is held across a model call: callers read,
 * wait, then write.
 */

interface Row {
  notebook: unknown;
  revision: number;
}

export async function readNotebook(ctx: AppContext, accountId: string): Promise<Notebook> {
  const { rows } = await ctx.db.primary.query<Row & Record<string, unknown>>(
    'select notebook, revision from game_npc_companion_memory where account_id = $1',
    [accountId],
  );
  const row = rows[0];
  if (!row) return emptyNotebook();
  return { ...parseNotebook(row.notebook), revision: row.revision };
}

/**
 * Applies `mutations` in order, all written at once, against the notebook at `base`. An outdated
 * base (or a writer that got there between our read and our write) refuses the whole write with the
 * current notebook; a later mutation that is only `invalid` (for example an empty statement) is
 * skipped.
 */
export async function mutateNotebook(
  ctx: AppContext,
  accountId: string,
  mutations: NotebookMutation[],
  base: WriteBase,
  wallMs: number,
): Promise<NotebookWrite> {
  const db = ctx.db.primary;
  const { rows } = await db.query<Row & Record<string, unknown>>(
    'select notebook, revision from game_npc_companion_memory where account_id = $1',
    [accountId],
  );
  const stored = rows[0];
  const current: Notebook = stored ? { ...parseNotebook(stored.notebook), revision: stored.revision } : emptyNotebook();
  let result: NotebookWrite = { status: 'applied', notebook: current, changed: false };
  // Later mutations build on the first one: their base is whatever the previous step produced.
  let stepBase = base;
  for (const [i, mutation] of mutations.entries()) {
    const step = applyNotebookMutation(result.notebook, mutation, stepBase, wallMs);
    if (step.status === 'conflict') return { ...step, notebook: current };
    if (step.status === 'invalid') {
      if (i === 0) return step;
      continue;
    }
    result = { status: 'applied', notebook: step.notebook, changed: result.changed || step.changed };
    stepBase = { revision: step.notebook.revision, epoch: step.notebook.epoch };
  }
  if (result.status !== 'applied' || !result.changed) return result;
  const next = result.notebook;
  const written = stored
    ? await db.query(
        `update game_npc_companion_memory set notebook = $2::jsonb, revision = $3, updated_at = now()
          where account_id = $1 and revision = $4`,
        [accountId, JSON.stringify(next), next.revision, stored.revision],
      )
    : await db.query(
        `insert into game_npc_companion_memory (account_id, notebook, revision) values ($1, $2::jsonb, $3)
         on conflict (account_id) do nothing`,
        [accountId, JSON.stringify(next), next.revision],
      );
  if (written.rowCount === 1) return result;
  // Another writer stored a new revision between our read and our write: nothing of ours is stored.
  const fresh = await readNotebook(ctx, accountId);
  return { status: 'conflict', reason: fresh.epoch !== base.epoch ? 'reset' : 'revision', notebook: fresh };
}
