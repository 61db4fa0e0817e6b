import { announceStatus, releaseHeldRecords } from '@yumina/updates';
import type { AppContext } from '../context.ts';

/**
 * After a work's publication or review status changed (publish, unpublish, approve, reject): open
 * overviews of the work reload canCreate and canNotify, and when the work went live, records held
 * during its review enter the published history (announced to the same overviews). The change
 * itself is already committed; a store that cannot publish only delays the overviews (they also
 * revalidate on their own), so a failure here is logged, not returned to the caller.
 */
export async function announceWorkStatus(ctx: AppContext, worldId: string, options: { wentLive: boolean }): Promise<void> {
  try {
    if (options.wentLive) await releaseHeldRecords(ctx.db.primary, ctx.store, worldId);
    await announceStatus(ctx.store, worldId);
  } catch (err) {
    ctx.log.warn({ err, worldId }, 'could not announce a work status change to open overviews');
  }
}
