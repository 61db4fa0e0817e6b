import type { DbPool, Queryable } from '@yumina/db';
import type { CreateUpdateInput, EditUpdateInput } from './body.ts';
import { beforeCursor, encodeListCursor } from './cursor.ts';
import { notAuthor, notifyChoiceRequired, reviewPending, updateNotFound, worldNotFound } from './errors.ts';
import { canView, type HistoryPermissions, hasPendingReview, historyPermissions, isAuthor, type Viewer, type WorkFacts, type WorldStatus } from './permissions.ts';

/** One update record as the history shows it. worldId is the record's own source work. */
export interface UpdateRecord {
  id: string;
  worldId: string;
  title: string;
  content: string;
  isMajor: boolean;
  timestamp: string;
  language: string | null;
}

export interface History extends HistoryPermissions {
  worldId: string;
  status: WorldStatus;
  updates: UpdateRecord[];
}

/** What a notification keeps: the record as it was when sent. */
export interface NotificationSnapshot {
  worldName: string;
  title: string;
  content: string;
  isMajor: boolean;
  timestamp: string;
}

type RecordRow = {
  id: string;
  world_id: string;
  title: string;
  content: string;
  is_major: boolean;
  created_at: Date;
  language: string | null;
};

export const HISTORY_LIMIT = 200;

export function toRecord(row: RecordRow): UpdateRecord {
  return {
    id: row.id,
    worldId: row.world_id,
    title: row.title,
    content: row.content,
    isMajor: row.is_major,
    timestamp: row.created_at.toISOString(),
    language: row.language ?? null,
  };
}

export function newUpdateId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `upd_${btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/**
 * The facts about a work the permissions need. With lock, the world row is first share-locked
 * (inside the caller's transaction), and the facts are read after the lock is held, so a review
 * or a status change committed while waiting is seen.
 */
export async function loadWork(db: Queryable, worldId: string, lock = false): Promise<(WorkFacts & { name: string }) | null> {
  if (lock) await db.query('select 1 from worlds where id = $1 for share', [worldId]);
  const { rows } = await db.query<{ id: string; owner_id: string; status: WorldStatus; name: string; pending_review: boolean }>(
    `select w.id, w.owner_id, w.status, coalesce(w.live_name, w.name) as name,
            exists (select 1 from world_reviews r where r.world_id = w.id and r.state = 'pending') as pending_review
       from worlds w where w.id = $1`,
    [worldId],
  );
  const row = rows[0];
  return row ? { id: row.id, ownerId: row.owner_id, status: row.status, name: row.name, pendingReview: row.pending_review } : null;
}

/**
 * The language-variant group of the world `$1` (table world_variants: every variant names the
 * original, the original names nobody), as the CTEs `root` (the original's id) and `grp` (the ids
 * of the original and all its variants), to start a query with.
 */
export const VARIANT_GROUP_CTE = `with root as (select coalesce((select original_id from world_variants where world_id = $1), $1) as id),
          grp as (select id from root union select world_id from world_variants where original_id = (select id from root))`;

/** The original of a world's language-variant group: the world it names, or itself. */
export async function variantRoot(db: Queryable, worldId: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`${VARIANT_GROUP_CTE} select id from root`, [worldId]);
  return rows[0]!.id;
}

/** A work and its language variants: the original and every world naming it. */
export async function variantGroup(db: Queryable, worldId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`${VARIANT_GROUP_CTE} select id from grp`, [worldId]);
  return rows.map((r) => r.id);
}

/** The published history of a work (language variants mixed in) and what the viewer may do with it. */
export async function readHistory(
  db: Queryable,
  worldId: string,
  viewer: Viewer | null,
  cursor?: string,
  limit = HISTORY_LIMIT,
): Promise<History & { nextCursor: string | null }> {
  const pageSize = Math.min(Math.max(1, Math.floor(limit)), HISTORY_LIMIT);
  const work = await loadWork(db, worldId);
  if (!work || !canView(work, viewer)) throw worldNotFound();
  const params: unknown[] = [worldId, viewer?.accountId ?? null];
  const after = beforeCursor(cursor, 'u.created_at', 'u.id', params);
  const { rows: fetched } = await db.query<RecordRow & { k: string }>(
    `${VARIANT_GROUP_CTE}
     select u.id, u.world_id, u.title, u.content, u.is_major, u.created_at, w.language,
            (extract(epoch from u.created_at) * 1000000)::bigint::text as k
       from world_updates u join worlds w on w.id = u.world_id
      where u.world_id in (select id from grp) and u.status = 'published'
        and (u.world_id = $1 or w.status = 'published' or w.owner_id = $2)${after ? ` and ${after}` : ''}
      order by u.created_at desc, u.id desc
      limit ${pageSize + 1}`,
    params,
  );
  // A page of the newest records; `nextCursor` (null at the end) continues after its last.
  const rows = fetched.slice(0, pageSize);
  const last = rows[rows.length - 1];
  const nextCursor = fetched.length > pageSize && last ? encodeListCursor({ key: last.k, id: last.id }) : null;
  return { worldId, status: work.status, ...historyPermissions(work, viewer), updates: rows.map(toRecord), nextCursor };
}

/** One published record as the live overview receives it. */
export async function readRecord(db: Queryable, updateId: string): Promise<UpdateRecord | null> {
  const { rows } = await db.query<RecordRow>(
    `select u.id, u.world_id, u.title, u.content, u.is_major, u.created_at, w.language
       from world_updates u join worlds w on w.id = u.world_id where u.id = $1 and u.status = 'published'`,
    [updateId],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export interface Created {
  update: UpdateRecord;
  /** How many favoriting players were notified (0 unless notifyPlayers on a published work). */
  notified: number;
}

/**
 * Adds a standalone record. It does not save editor changes and does not publish. The world row
 * is share-locked for the transaction, so its author and status cannot change between the checks
 * and the writes. Players are notified only when asked, and only for a published work.
 */
export async function createRecord(pool: DbPool, worldId: string, viewer: Viewer, input: CreateUpdateInput): Promise<Created> {
  return pool.transaction(async (tx) => {
    const work = await loadWork(tx, worldId, true);
    if (!work || !canView(work, viewer)) throw worldNotFound();
    if (!isAuthor(work, viewer)) throw notAuthor();
    if (hasPendingReview(work)) throw reviewPending();
    // notifyPlayers omitted where notifying is possible: the client shows its notify dialog first.
    if (input.notifyPlayers === undefined && historyPermissions(work, viewer).canNotify) throw notifyChoiceRequired();
    const { rows } = await tx.query<RecordRow>(
      `insert into world_updates (id, world_id, author_id, title, content, is_major)
       values ($1, $2, $3, $4, $5, $6)
       returning id, world_id, title, content, is_major, created_at, (select language from worlds where id = $2) as language`,
      [newUpdateId(), worldId, viewer.accountId, input.title, input.content, input.isMajor],
    );
    const update = toRecord(rows[0]!);
    let notified = 0;
    if (input.notifyPlayers === true && historyPermissions(work, viewer).canNotify) {
      const snapshot: NotificationSnapshot = {
        worldName: work.name,
        title: update.title,
        content: update.content,
        isMajor: update.isMajor,
        timestamp: update.timestamp,
      };
      const sent = await tx.query(
        `insert into update_notifications (id, account_id, world_id, update_id, snapshot)
         select 'ntf_' || replace(gen_random_uuid()::text, '-', ''), f.account_id, f.world_id, $2, $3::jsonb
           from world_favorites f where f.world_id = $1`,
        [worldId, update.id, JSON.stringify(snapshot)],
      );
      notified = sent.rowCount ?? 0;
    }
    return { update, notified };
  });
}

/**
 * Edits a record's title and content. The author check, the check that the record belongs to
 * this work and the write are one statement: the world row is share-locked by it, so a racing
 * change of authorship either commits first (and the edit is refused) or waits for the edit.
 * The timestamp, the major flag, the work and past notification snapshots are left alone.
 */
export async function editRecord(db: Queryable, worldId: string, updateId: string, viewer: Viewer, input: EditUpdateInput): Promise<UpdateRecord> {
  const { rows } = await db.query<RecordRow>(
    `with w as (select id, language from worlds where id = $1 and owner_id = $3 for share)
     update world_updates u set title = $4, content = coalesce($5, u.content)
       from w where u.id = $2 and u.world_id = w.id
     returning u.id, u.world_id, u.title, u.content, u.is_major, u.created_at, w.language`,
    [worldId, updateId, viewer.accountId, input.title, input.content ?? null],
  );
  if (rows[0]) return toRecord(rows[0]);
  // Nothing was written; only the answer remains to be chosen.
  const work = await loadWork(db, worldId);
  if (!work || !canView(work, viewer)) throw worldNotFound();
  if (!isAuthor(work, viewer)) throw notAuthor();
  // The viewer is the author now; if the record is there, they were not when the write ran.
  const record = await db.query('select 1 from world_updates where id = $1 and world_id = $2', [updateId, worldId]);
  if (record.rowCount) throw notAuthor();
  throw updateNotFound();
}
