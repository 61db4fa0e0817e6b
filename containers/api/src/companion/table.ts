import { withDeadline } from '@yumina/db';
import type { AppContext } from '../context.ts';

/**
 * The notebook table (seed 001 §9.2). No migration creates it: this provisioning step runs its
 * create-if-missing statement after the server binds its port (an onListen hook), with a 1 s lock
 * deadline and a 3 s statement deadline, so a busy catalogue never delays start-up. When it is
 * deferred (a lock held elsewhere, a slow database) the next notebook request tries again. It only
 * ever creates: no existing table is altered and no row is rewritten.
 */
export const NOTEBOOK_TABLE = 'game_npc_companion_memory';

export const NOTEBOOK_TABLE_DDL = `create table if not exists game_npc_companion_memory (
  account_id text primary key references accounts (id) on delete cascade,
  notebook jsonb not null,
  revision integer not null default 0 check (revision >= 0),
  updated_at timestamptz not null default now(),
  constraint game_npc_companion_memory_size check (octet_length(notebook::text) <= 65536)
)`;

export const PROVISION_LOCK_TIMEOUT_MS = 1_000;
export const PROVISION_STATEMENT_TIMEOUT_MS = 3_000;

export type ProvisionState = 'pending' | 'ready' | 'deferred';

/** Per-context provisioning state: one attempt at a time, retried after a deferral. */
const states = new WeakMap<AppContext, { state: ProvisionState; running: Promise<boolean> | null }>();

export function provisionState(ctx: AppContext): ProvisionState {
  return states.get(ctx)?.state ?? 'pending';
}

/** Creates the table if missing. Resolves true when it exists, false when deferred (logged, retried later). */
export function provisionNotebookTable(ctx: AppContext): Promise<boolean> {
  let entry = states.get(ctx);
  if (!entry) {
    entry = { state: 'pending', running: null };
    states.set(ctx, entry);
  }
  if (entry.state === 'ready') return Promise.resolve(true);
  if (entry.running) return entry.running;
  const current = entry;
  current.running = (async () => {
    try {
      // A little above the server-side limits, so PostgreSQL's own timeouts answer first.
      await withDeadline(PROVISION_STATEMENT_TIMEOUT_MS + 1_000, () =>
        ctx.db.primary.transaction(async (tx) => {
          await tx.query(`set local lock_timeout = '${PROVISION_LOCK_TIMEOUT_MS}ms'`);
          await tx.query(`set local statement_timeout = '${PROVISION_STATEMENT_TIMEOUT_MS}ms'`);
          await tx.query(NOTEBOOK_TABLE_DDL);
        }),
      );
      current.state = 'ready';
      ctx.log.info({ type: 'companion.provision' }, 'companion notebook table ready');
      return true;
    } catch (err) {
      current.state = 'deferred';
      ctx.log.warn({ type: 'companion.provision', err: (err as Error).message }, 'companion notebook table provisioning deferred');
      return false;
    } finally {
      current.running = null;
    }
  })();
  return current.running;
}
