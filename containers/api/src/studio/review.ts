import type { DbClient, Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { announceWorkStatus } from '../updates/announce.ts';

/**
 * The review workflow of a work's publication (issue 13, item 3).
 *
 * A work has a working copy (`worlds.definition`, what the author saves) and a live version
 * (`worlds.live_*`, what the library and other readers get). Publishing makes the working copy
 * live, unless the review rule holds it: then a snapshot waits in `world_reviews` until an
 * administrator approves (the snapshot goes live) or rejects it (with a reason the author sees).
 * A held edit of a published work leaves the live version serving. Every transition is a row
 * of `world_publication_events` (who, when, which revision, why), and once committed it is
 * announced to the work's open overviews (`announceWorkStatus`).
 */

export interface WorldRowForReview {
  id: string;
  owner_id: string;
  status: 'saved' | 'unpublished' | 'published' | 'held';
  revision: number;
  definition: string;
  name: string;
  description: string;
  tags: string[];
  language: string | null;
  live_revision: number | null;
  cover_asset_id?: string | null;
  avatar_asset_id?: string | null;
}

export type ReviewState = 'pending' | 'approved' | 'rejected' | 'withdrawn' | 'superseded';
export type ReviewKind = 'publication' | 'edit';
export type PublicationAction = 'published' | 'held' | 'approved' | 'rejected' | 'unpublished' | 'withdrawn';

export interface ReviewRule {
  holdFirstPublication: boolean;
  holdAllPublications: boolean;
}

export interface HoldDecision {
  hold: boolean;
  /** Why it is held: 'first-publication', 'all-publications' or 'account-flag'. */
  because: string | null;
}

const newReviewId = () => `rev_${randomBytes(16).toString('base64url')}`;

export async function readReviewRule(db: Queryable): Promise<ReviewRule> {
  const { rows } = await db.query<{ hold_first_publication: boolean; hold_all_publications: boolean }>(
    'select hold_first_publication, hold_all_publications from review_rule where id',
  );
  const row = rows[0];
  // The migration inserts the row; a missing row falls back to the documented default.
  return { holdFirstPublication: row?.hold_first_publication ?? true, holdAllPublications: row?.hold_all_publications ?? false };
}

/** The rule, applied to one account: all publications held, the account flagged, or its first publication. */
export async function holdDecision(db: Queryable, ownerId: string): Promise<HoldDecision> {
  const rule = await readReviewRule(db);
  if (rule.holdAllPublications) return { hold: true, because: 'all-publications' };
  const { rows } = await db.query<{ flagged: boolean; has_published: boolean }>(
    `select coalesce((select hold_publications from account_review_flags where account_id = $1), false) as flagged,
            exists (select 1 from world_publication_events where owner_id = $1 and action in ('published', 'approved'))
            or exists (select 1 from worlds where owner_id = $1 and live_revision is not null) as has_published`,
    [ownerId],
  );
  const r = rows[0]!;
  if (r.flagged) return { hold: true, because: 'account-flag' };
  if (rule.holdFirstPublication && !r.has_published) return { hold: true, because: 'first-publication' };
  return { hold: false, because: null };
}

export async function recordEvent(
  db: Queryable,
  e: { worldId: string; ownerId: string; actorId: string | null; action: PublicationAction; revision: number | null; reviewId?: string | null; reason?: string | null },
): Promise<void> {
  await db.query(
    `insert into world_publication_events (world_id, owner_id, actor_id, action, revision, review_id, reason)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [e.worldId, e.ownerId, e.actorId, e.action, e.revision, e.reviewId ?? null, e.reason ?? null],
  );
}

async function lockWorld(tx: Queryable, worldId: string): Promise<WorldRowForReview & Record<string, unknown>> {
  const { rows } = await tx.query<WorldRowForReview & Record<string, unknown>>('select * from worlds where id = $1 for update', [worldId]);
  if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
  return rows[0];
}

async function supersedePending(tx: Queryable, worldId: string, state: 'superseded' | 'withdrawn'): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    `update world_reviews set state = $2, decided_at = now() where world_id = $1 and state = 'pending' returning id`,
    [worldId, state],
  );
  return rows[0]?.id ?? null;
}

export interface PublishOutcome {
  held: boolean;
  because: string | null;
  reviewId: string | null;
}

/**
 * Publishes the working copy of a world (the author's POST /publish, or a save of a work that is
 * published or held). Runs the review rule; a held publication or edit waits for an administrator.
 * Returns the outcome; the caller reads the row again for its answer.
 */
export async function publishWorld(ctx: AppContext, worldId: string, actorId: string): Promise<PublishOutcome> {
  const outcome = await ctx.db.primary.transaction(async (tx): Promise<PublishOutcome> => {
    const row = await lockWorld(tx, worldId);
    const live = row.status === 'published' && row.live_revision !== null;
    if (live && row.live_revision === row.revision) return { held: false, because: null, reviewId: null };
    const decision = await holdDecision(tx, row.owner_id);
    await supersedePending(tx, worldId, 'superseded');
    if (decision.hold) {
      const kind: ReviewKind = live ? 'edit' : 'publication';
      const reviewId = newReviewId();
      await tx.query(
        `insert into world_reviews (id, world_id, owner_id, kind, revision, definition, name, description, tags, language, cover_asset_id, avatar_asset_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [reviewId, row.id, row.owner_id, kind, row.revision, row.definition, row.name, row.description, row.tags, row.language, row.cover_asset_id ?? null, row.avatar_asset_id ?? null],
      );
      if (kind === 'publication') await tx.query(`update worlds set status = 'held' where id = $1`, [row.id]);
      await recordEvent(tx, { worldId: row.id, ownerId: row.owner_id, actorId, action: 'held', revision: row.revision, reviewId, reason: decision.because });
      return { held: true, because: decision.because, reviewId };
    }
    await tx.query(
      `update worlds set status = 'published', published_at = coalesce(published_at, now()),
              live_revision = revision, live_definition = definition, live_name = name,
              live_description = description, live_tags = tags, live_language = language,
              live_cover_asset_id = cover_asset_id, live_avatar_asset_id = avatar_asset_id, live_updated_at = now()
        where id = $1`,
      [row.id],
    );
    await recordEvent(tx, { worldId: row.id, ownerId: row.owner_id, actorId, action: 'published', revision: row.revision });
    return { held: false, because: null, reviewId: null };
  });
  await announceWorkStatus(ctx, worldId, { wentLive: !outcome.held });
  return outcome;
}

/**
 * Unpublishes a work, or withdraws its held first publication. A pending review is withdrawn.
 * Returns false when there was nothing to unpublish (a work never published nor held).
 */
export async function unpublishWorld(ctx: AppContext, worldId: string, actorId: string): Promise<boolean> {
  const changed = await ctx.db.primary.transaction(async (tx) => {
    const row = await lockWorld(tx, worldId);
    if (row.status === 'saved') return false;
    const withdrawn = await supersedePending(tx, worldId, 'withdrawn');
    const next = row.status === 'held' && row.live_revision === null ? 'saved' : 'unpublished';
    await tx.query('update worlds set status = $2 where id = $1', [worldId, next]);
    if (withdrawn) await recordEvent(tx, { worldId, ownerId: row.owner_id, actorId, action: 'withdrawn', revision: row.revision, reviewId: withdrawn });
    if (row.status === 'published') {
      await recordEvent(tx, { worldId, ownerId: row.owner_id, actorId, action: 'unpublished', revision: row.live_revision });
    }
    return true;
  });
  if (changed) await announceWorkStatus(ctx, worldId, { wentLive: false });
  return changed;
}

interface ReviewRow {
  id: string;
  world_id: string;
  owner_id: string;
  kind: ReviewKind;
  revision: number;
  state: ReviewState;
}

async function lockPendingReview(tx: DbClient, reviewId: string): Promise<ReviewRow & Record<string, unknown>> {
  const { rows } = await tx.query<ReviewRow & Record<string, unknown>>('select * from world_reviews where id = $1 for update', [reviewId]);
  const review = rows[0];
  if (!review) throw new HttpError(404, 'NOT_FOUND', 'No such review.');
  if (review.state !== 'pending') throw new HttpError(409, 'REVIEW_NOT_PENDING', `This review was already ${review.state}.`);
  return review;
}

/**
 * The author's inbox notification of a review decision (in the decision's transaction): the same
 * inbox as update records, with a snapshot naming the decision and the administrator's reason.
 */
async function notifyAuthor(tx: Queryable, review: ReviewRow, decision: 'approved' | 'rejected', reason: string | null): Promise<void> {
  const { rows } = await tx.query<{ name: string }>('select name from world_reviews where id = $1', [review.id]);
  const worldName = rows[0]?.name ?? '';
  const title = decision === 'approved' ? `Approved: ${worldName} is published` : `Not approved: ${worldName}`;
  const content = decision === 'approved' ? (reason ?? '') : `Reason: ${reason ?? ''}`;
  await tx.query(
    `insert into update_notifications (id, account_id, world_id, update_id, snapshot) values ($1, $2, $3, null, $4)`,
    [
      `ntf_${randomBytes(12).toString('base64url')}`,
      review.owner_id,
      review.world_id,
      JSON.stringify({ kind: `review.${decision}`, worldName, title, content, isMajor: false, timestamp: new Date().toISOString(), reason }),
    ],
  );
}

/** Approve: the held snapshot goes live (the work is published, or its live version replaced). */
export async function approveReview(ctx: AppContext, reviewId: string, adminId: string, reason: string | null): Promise<void> {
  const worldId = await ctx.db.primary.transaction(async (tx) => {
    const review = await lockPendingReview(tx, reviewId);
    await lockWorld(tx, review.world_id);
    await tx.query(
      `update worlds w set status = 'published', published_at = coalesce(w.published_at, now()),
              live_revision = r.revision, live_definition = r.definition, live_name = r.name,
              live_description = r.description, live_tags = r.tags, live_language = r.language,
              live_cover_asset_id = r.cover_asset_id, live_avatar_asset_id = r.avatar_asset_id, live_updated_at = now()
         from world_reviews r where r.id = $1 and w.id = r.world_id`,
      [reviewId],
    );
    await notifyAuthor(tx, review, 'approved', reason);
    await tx.query(`update world_reviews set state = 'approved', decided_by = $2, decided_at = now(), reason = $3 where id = $1`, [reviewId, adminId, reason]);
    await recordEvent(tx, { worldId: review.world_id, ownerId: review.owner_id, actorId: adminId, action: 'approved', revision: review.revision, reviewId, reason });
    return review.world_id;
  });
  await announceWorkStatus(ctx, worldId, { wentLive: true });
}

/** Reject: nothing goes live; a held first publication returns to the author; the reason is kept for the author. */
export async function rejectReview(ctx: AppContext, reviewId: string, adminId: string, reason: string): Promise<void> {
  const worldId = await ctx.db.primary.transaction(async (tx) => {
    const review = await lockPendingReview(tx, reviewId);
    const world = await lockWorld(tx, review.world_id);
    if (world.status === 'held') {
      await tx.query('update worlds set status = $2 where id = $1', [world.id, world.live_revision === null ? 'saved' : 'unpublished']);
    }
    await tx.query(`update world_reviews set state = 'rejected', decided_by = $2, decided_at = now(), reason = $3 where id = $1`, [reviewId, adminId, reason]);
    await notifyAuthor(tx, review, 'rejected', reason);
    await recordEvent(tx, { worldId: review.world_id, ownerId: review.owner_id, actorId: adminId, action: 'rejected', revision: review.revision, reviewId, reason });
    return review.world_id;
  });
  await announceWorkStatus(ctx, worldId, { wentLive: false });
}

/** Whether a work has a review waiting (the Update records routes refuse standalone records then). */
export async function hasPendingReview(db: Queryable, worldId: string): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from world_reviews where world_id = $1 and state = 'pending'`, [worldId]);
  return (rows[0]?.n ?? 0) > 0;
}
