import type { Queryable } from '@yumina/db';
import { beforeCursor, encodeListCursor } from './cursor.ts';
import type { NotificationSnapshot } from './records.ts';

export interface InboxItem {
  id: string;
  worldId: string;
  updateId: string | null;
  /** The record as it was sent; later edits of the record do not change it. */
  snapshot: NotificationSnapshot;
  createdAt: string;
  readAt: string | null;
}

type InboxRow = {
  id: string;
  world_id: string;
  update_id: string | null;
  snapshot: NotificationSnapshot;
  created_at: Date;
  read_at: Date | null;
};

export const INBOX_LIMIT = 100;

/** The newest notifications, a page at a time: `cursor` (the previous page's nextCursor) continues after it. */
export async function readInbox(
  db: Queryable,
  accountId: string,
  cursor?: string,
  limit = INBOX_LIMIT,
): Promise<{ items: InboxItem[]; unread: number; nextCursor: string | null }> {
  const params: unknown[] = [accountId];
  const after = beforeCursor(cursor, 'created_at', 'id', params);
  const { rows: fetched } = await db.query<InboxRow & { k: string }>(
    `select id, world_id, update_id, snapshot, created_at, read_at, (extract(epoch from created_at) * 1000000)::bigint::text as k
       from update_notifications
      where account_id = $1${after ? ` and ${after}` : ''} order by created_at desc, id desc limit ${Math.min(Math.max(1, Math.floor(limit)), INBOX_LIMIT) + 1}`,
    params,
  );
  const pageSize = Math.min(Math.max(1, Math.floor(limit)), INBOX_LIMIT);
  const rows = fetched.slice(0, pageSize);
  const last = rows[rows.length - 1];
  const nextCursor = fetched.length > pageSize && last ? encodeListCursor({ key: last.k, id: last.id }) : null;
  const unread = await db.query<{ n: number }>('select count(*)::int as n from update_notifications where account_id = $1 and read_at is null', [
    accountId,
  ]);
  return {
    items: rows.map((r) => ({
      id: r.id,
      worldId: r.world_id,
      updateId: r.update_id,
      snapshot: r.snapshot,
      createdAt: r.created_at.toISOString(),
      readAt: r.read_at?.toISOString() ?? null,
    })),
    unread: unread.rows[0]!.n,
    nextCursor,
  };
}

/** Marks one notification (or, with null, all of them) of the account read; returns how many changed. */
export async function markRead(db: Queryable, accountId: string, notificationId: string | null): Promise<number> {
  const { rowCount } = await db.query(
    `update update_notifications set read_at = now()
      where account_id = $1 and read_at is null and ($2::text is null or id = $2)`,
    [accountId, notificationId],
  );
  return rowCount ?? 0;
}
