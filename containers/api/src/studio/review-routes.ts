import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { findAccountByHandle } from '../accounts/lookup.ts';
import type { AppContext } from '../context.ts';
import { afterCursor, keysetPage, keysetQuery, timeKey } from '../keyset.ts';
import { approveReview, readReviewRule, rejectReview } from './review.ts';
import { administratorExists } from '../accounts/first-admin.ts';

interface ReviewListRow {
  id: string;
  world_id: string;
  owner_id: string;
  owner_name: string;
  kind: string;
  revision: number;
  name: string;
  state: string;
  submitted_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  reason: string | null;
  definition?: string;
}

function reviewView(r: ReviewListRow) {
  return {
    id: r.id,
    worldId: r.world_id,
    ownerId: r.owner_id,
    ownerName: r.owner_name,
    kind: r.kind,
    revision: r.revision,
    name: r.name,
    state: r.state,
    submittedAt: r.submitted_at.toISOString(),
    decidedAt: r.decided_at?.toISOString() ?? null,
    decidedBy: r.decided_by,
    reason: r.reason,
  };
}

interface EventRow {
  action: string;
  actor_id: string | null;
  actor_name: string | null;
  revision: number | null;
  review_id: string | null;
  reason: string | null;
  created_at: Date;
}

const eventView = (e: EventRow) => ({
  action: e.action,
  actorId: e.actor_id,
  actorName: e.actor_name,
  revision: e.revision,
  reviewId: e.review_id,
  reason: e.reason,
  at: e.created_at.toISOString(),
});

const listQuery = keysetQuery(200, 200).extend({ state: z.enum(['pending', 'approved', 'rejected', 'withdrawn', 'superseded', 'all']).default('pending') });
const approveBody = z.object({ reason: z.string().trim().max(2000).optional() }).optional();
const rejectBody = z.object({ reason: z.string().trim().min(1, 'a reason is required').max(2000) });
const ruleBody = z.object({ holdFirstPublication: z.boolean(), holdAllPublications: z.boolean() });
const flagBody = z.object({ hold: z.boolean(), reason: z.string().trim().max(2000).default('') });

const REVIEW_SELECT = `select r.id, r.world_id, r.owner_id, a.display_name as owner_name, r.kind, r.revision, r.name, r.state,
                              r.submitted_at, r.decided_at, r.decided_by, r.reason
                         from world_reviews r join accounts a on a.id = r.owner_id`;

/** The review workflow's routes: the administrators' queue and settings, and the author's view of a work's reviews. */
export async function reviewRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  async function requireAdmin(request: FastifyRequest, reply: FastifyReply) {
    const auth = await requireAuth(ctx, request, reply);
    if (!auth.account.isAdmin) throw new HttpError(403, 'NOT_ADMIN', 'Only administrators can do this.');
    return auth;
  }

  async function worldEvents(worldId: string) {
    const { rows } = await db.query<EventRow & Record<string, unknown>>(
      `select e.action, e.actor_id, a.display_name as actor_name, e.revision, e.review_id, e.reason, e.created_at
         from world_publication_events e left join accounts a on a.id = e.actor_id
        where e.world_id = $1 order by e.created_at, e.id`,
      [worldId],
    );
    return rows.map(eventView);
  }

  /** The author's view: the latest review of the work (with a rejection's reason) and every transition. */
  app.get<{ Params: { id: string } }>('/api/worlds/:id/review', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows: worlds } = await db.query<{ owner_id: string }>('select owner_id from worlds where id = $1', [request.params.id]);
    const world = worlds[0];
    if (!world || (world.owner_id !== auth.account.id && !auth.account.isAdmin)) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    const { rows } = await db.query<ReviewListRow & Record<string, unknown>>(
      `${REVIEW_SELECT} where r.world_id = $1 and r.state <> 'superseded' order by r.submitted_at desc limit 1`,
      [request.params.id],
    );
    const pending = rows[0]?.state === 'pending';
    return {
      review: rows[0] ? reviewView(rows[0]) : null,
      pending,
      // What a held work waits for (issue 44, point 2): whether anyone can review it at all.
      ...(pending ? { administratorExists: await administratorExists(db), youReview: auth.account.isAdmin } : {}),
      events: await worldEvents(request.params.id),
    };
  });

  app.get('/api/admin/reviews', async (request, reply) => {
    await requireAdmin(request, reply);
    const q = parseWith(listQuery, request.query, 'query');
    // The queue a keyset page at a time (../keyset.ts): pending oldest first, the rest newest first.
    const direction = q.state === 'pending' ? 'asc' : 'desc';
    const params: unknown[] = [q.limit + 1];
    const where: string[] = [];
    if (q.state !== 'all') {
      params.push(q.state);
      where.push(`r.state = $${params.length}`);
    }
    const after = afterCursor(q.cursor, 'r.submitted_at', 'r.id', direction, params);
    if (after) where.push(after);
    const { rows } = await db.query<ReviewListRow & { k: string } & Record<string, unknown>>(
      `${REVIEW_SELECT.replace('select ', `select ${timeKey('r.submitted_at')} as k, `)} ${where.length ? `where ${where.join(' and ')}` : ''}
        order by r.submitted_at ${direction}, r.id ${direction} limit $1`,
      params,
    );
    const page = keysetPage(rows, q.limit);
    return { reviews: page.rows.map(reviewView), nextCursor: page.nextCursor };
  });

  app.get<{ Params: { id: string } }>('/api/admin/reviews/:id', async (request, reply) => {
    await requireAdmin(request, reply);
    const { rows } = await db.query<ReviewListRow & Record<string, unknown>>(
      `${REVIEW_SELECT.replace('r.reason', 'r.reason, r.definition')} where r.id = $1`,
      [request.params.id],
    );
    const row = rows[0];
    if (!row) throw new HttpError(404, 'NOT_FOUND', 'No such review.');
    // The last approved version: what is live now (null for a first publication), for the diff.
    const live = await db.query<{ live_definition: string | null; live_revision: number | null }>('select live_definition, live_revision from worlds where id = $1', [row.world_id]);
    const approved = live.rows[0]?.live_definition ? { revision: live.rows[0].live_revision, world: JSON.parse(live.rows[0].live_definition) as unknown } : null;
    return { review: reviewView(row), world: JSON.parse(row.definition!) as unknown, approved, events: await worldEvents(row.world_id) };
  });

  app.post<{ Params: { id: string } }>('/api/admin/reviews/:id/approve', async (request, reply) => {
    const auth = await requireAdmin(request, reply);
    const body = parseWith(approveBody, request.body ?? undefined);
    await approveReview(ctx, request.params.id, auth.account.id, body?.reason || null);
    return { ok: true };
  });

  app.post<{ Params: { id: string } }>('/api/admin/reviews/:id/reject', async (request, reply) => {
    const auth = await requireAdmin(request, reply);
    const body = parseWith(rejectBody, request.body);
    await rejectReview(ctx, request.params.id, auth.account.id, body.reason);
    return { ok: true };
  });

  app.get('/api/admin/review-rule', async (request, reply) => {
    await requireAdmin(request, reply);
    const { rows } = await db.query<{ account_id: string; display_name: string; reason: string; set_at: Date }>(
      `select f.account_id, a.display_name, f.reason, f.set_at from account_review_flags f join accounts a on a.id = f.account_id
        where f.hold_publications order by f.set_at desc limit 200`,
    );
    return {
      rule: await readReviewRule(db),
      flaggedAccounts: rows.map((r) => ({ accountId: r.account_id, displayName: r.display_name, reason: r.reason, setAt: r.set_at.toISOString() })),
    };
  });

  app.put('/api/admin/review-rule', async (request, reply) => {
    const auth = await requireAdmin(request, reply);
    const body = parseWith(ruleBody, request.body);
    await db.query(
      `insert into review_rule (id, hold_first_publication, hold_all_publications, updated_by, updated_at) values (true, $1, $2, $3, now())
       on conflict (id) do update set hold_first_publication = $1, hold_all_publications = $2, updated_by = $3, updated_at = now()`,
      [body.holdFirstPublication, body.holdAllPublications, auth.account.id],
    );
    return { rule: await readReviewRule(db) };
  });

  /** The same flag, naming the account by e-mail, username or display name instead of its id (findAccountByHandle: one account or a refusal). */
  app.put('/api/admin/review-flag', async (request, reply) => {
    const auth = await requireAdmin(request, reply);
    const body = parseWith(flagBody.extend({ account: z.string().trim().min(1).max(320) }), request.body);
    const target = await findAccountByHandle(db, body.account);
    await db.query(
      `insert into account_review_flags (account_id, hold_publications, reason, set_by, set_at) values ($1, $2, $3, $4, now())
       on conflict (account_id) do update set hold_publications = $2, reason = $3, set_by = $4, set_at = now()`,
      [target.id, body.hold, body.reason, auth.account.id],
    );
    return { accountId: target.id, email: target.email, emailVerified: target.emailVerified, displayName: target.displayName, hold: body.hold, reason: body.reason };
  });

  /** An administrator's flag on an account: while set, every publication of the account is held. */
  app.put<{ Params: { accountId: string } }>('/api/admin/accounts/:accountId/review-flag', async (request, reply) => {
    const auth = await requireAdmin(request, reply);
    const body = parseWith(flagBody, request.body);
    const { rows } = await db.query<{ email: string; email_verified: boolean; display_name: string }>(
      'select email, email_verified, display_name from accounts where id = $1',
      [request.params.accountId],
    );
    const target = rows[0];
    if (!target) throw new HttpError(404, 'NOT_FOUND', 'No such account.');
    await db.query(
      `insert into account_review_flags (account_id, hold_publications, reason, set_by, set_at) values ($1, $2, $3, $4, now())
       on conflict (account_id) do update set hold_publications = $2, reason = $3, set_by = $4, set_at = now()`,
      [request.params.accountId, body.hold, body.reason, auth.account.id],
    );
    return {
      accountId: request.params.accountId,
      email: target.email,
      emailVerified: target.email_verified,
      displayName: target.display_name,
      hold: body.hold,
      reason: body.reason,
    };
  });
}
