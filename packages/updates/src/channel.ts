import type { Queryable } from '@yumina/db';
import type { Store } from '@yumina/store';
import { type UpdateRecord, variantGroup } from './records.ts';

/** The store pub/sub channel the live overview of one world listens to. */
export const updatesChannel = (worldId: string) => `world-updates:${worldId}`;

/**
 * Messages on that channel. 'record': a record was published (it carries only the id; listeners
 * read it back, so nothing held for review ever travels). 'status': the work's publication or
 * review status changed, so canCreate and canNotify must be reloaded.
 */
export type UpdatesMessage = { type: 'record'; updateId: string; worldId: string } | { type: 'status'; worldId: string };

export function parseUpdatesMessage(text: string): UpdatesMessage | null {
  try {
    const m = JSON.parse(text) as Partial<UpdatesMessage>;
    if (m.type === 'record' && typeof m.updateId === 'string' && typeof m.worldId === 'string') return m as UpdatesMessage;
    if (m.type === 'status' && typeof m.worldId === 'string') return m as UpdatesMessage;
  } catch {
    // not ours
  }
  return null;
}

type Publisher = Pick<Store, 'publish'>;

/** Tells every open overview of the work and of its language variants about a published record. */
export async function announceRecord(db: Queryable, store: Publisher, record: Pick<UpdateRecord, 'id' | 'worldId'>): Promise<void> {
  const message = JSON.stringify({ type: 'record', updateId: record.id, worldId: record.worldId } satisfies UpdatesMessage);
  for (const id of await variantGroup(db, record.worldId)) await store.publish(updatesChannel(id), message);
}

/** To be called by whatever changes a work's publication or review status (publish, unpublish, hold, release). */
export async function announceStatus(store: Publisher, worldId: string): Promise<void> {
  await store.publish(updatesChannel(worldId), JSON.stringify({ type: 'status', worldId } satisfies UpdatesMessage));
}

/**
 * For the review workflow: records held while a work was under review enter the published
 * history when the review is resolved, and open overviews receive them.
 */
export async function releaseHeldRecords(db: Queryable, store: Publisher, worldId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `update world_updates set status = 'published' where world_id = $1 and status = 'held' returning id`,
    [worldId],
  );
  for (const row of rows) await announceRecord(db, store, { id: row.id, worldId });
  return rows.map((r) => r.id);
}
