import { settleAbandonedReservations } from '@yumina/billing';
import { withMaintenanceDeadline } from '@yumina/db';
import { purgeOldMail } from '@yumina/mail';
import { LeaderScheduler, type ScheduledJob } from '@yumina/store';
import { purgeOldSessions } from '@yumina/accounts';
import { purgeOldLinks } from './accounts/account-links.ts';
import { purgeOldSignups } from './accounts/signup-routes.ts';
import { purgeOldExports } from './accounts/data-export.ts';
import { settleStaleReplies } from './conversations/turn-lock.ts';
import type { AppContext } from './context.ts';
import { repairPlayerCounts } from './worlds/player-count.ts';

/** A job body: the maintenance deadline scope (300 s) applies to its queries. */
type JobBody = (ctx: AppContext, signal: AbortSignal) => Promise<string>;

const JOBS: Record<string, JobBody> = {
  'expired-sessions': async (ctx) => `removed ${await purgeOldSessions(ctx.db.primary)} sessions`,
  'abandoned-credit-reservations': async (ctx) => `settled ${await settleAbandonedReservations(ctx.db.primary, 15)} reservations`,
  'stale-replies': async (ctx) => `failed ${await settleStaleReplies(ctx)} replies left streaming`,
  'old-account-links': async (ctx) => `removed ${await purgeOldLinks(ctx.db.primary)} used or expired links and ${await purgeOldSignups(ctx.db.primary)} ended sign-ups`,
  'expired-data-exports': async (ctx) => `removed ${await purgeOldExports(ctx)} data exports`,
  'old-mail': async (ctx) => `removed ${await purgeOldMail(ctx.db.primary)} sent or abandoned mails`,
  'player-counts': async (ctx) => `repaired the player count of ${await repairPlayerCounts(ctx.db.primary)} worlds`,
  'expired-oauth-flows': async (ctx) => {
    const { rowCount } = await ctx.db.primary.query(`delete from oauth_flows where created_at < now() - interval '1 hour'`);
    return `removed ${rowCount ?? 0} flows`;
  },
};

/** Scheduled maintenance: one leader replica runs each job once per period (MAINTENANCE_PERIOD_MS). */
export function startMaintenance(ctx: AppContext): LeaderScheduler {
  const jobs: ScheduledJob[] = Object.entries(JOBS).map(([name, body]) => ({
    name,
    everyMs: ctx.config.maintenance.periodMs,
    run: (signal, periodStart) =>
      withMaintenanceDeadline(async () => {
        const { rows } = await ctx.db.primary.query<{ id: string }>(
          'insert into maintenance_runs (job, period_start, replica_id) values ($1, $2, $3) returning id',
          [name, periodStart, ctx.identity.replicaId],
        );
        let outcome = 'ok';
        let detail = '';
        try {
          detail = await body(ctx, signal);
        } catch (err) {
          outcome = 'failed';
          detail = (err as Error).message;
          throw err;
        } finally {
          await ctx.db.primary
            .query('update maintenance_runs set finished_at = now(), outcome = $2, detail = $3 where id = $1', [rows[0]!.id, outcome, detail])
            .catch(() => {});
        }
      }),
  }));
  const scheduler = new LeaderScheduler({
    store: ctx.store,
    key: 'maintenance:leader',
    ttlMs: ctx.config.maintenance.leaseTtlMs,
    jobs,
    log: ctx.log,
    replicaId: ctx.identity.replicaId,
  });
  scheduler.start();
  return scheduler;
}
