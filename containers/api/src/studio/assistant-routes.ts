import { AiAbortedError, type ChatMessage } from '@yumina/ai';
import { newId } from '@yumina/accounts';
import { HttpError, parseWith, publicErrorOf } from '@yumina/http';
import { applyOperations, type AssistantOperation, assistantOperationSchema, rejectionMessage } from '@yumina/world/assistant';
import { validateWorld } from '@yumina/world';
import type { Queryable } from '@yumina/db';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { meteringFor } from '../ai/metering.ts';
import type { AppContext } from '../context.ts';
import { openEventStream, whenClientGone } from '../event-stream.ts';
import { ownerView, summary, type WorldRow } from '../worlds/routes.ts';
import { buildError, runRound, type StepReport } from './assistant-run.ts';

/**
 * The studio assistant's routes (docs/STUDIO-ASSISTANT.md), all the world's author's only:
 *  GET  /api/worlds/:id/assistant                         the rounds (requests, answers, cards, costs)
 *  POST /api/worlds/:id/assistant/rounds                  a request, or a rejection with its reason: runs a round (server-sent events)
 *  POST /api/worlds/:id/assistant/cards/:cardId/approve   applies the card as one revision (its snapshot kept)
 *  POST /api/worlds/:id/assistant/cards/:cardId/reject    rejects without asking again
 *  POST /api/worlds/:id/assistant/cards/:cardId/rollback  the world as it was after (or before) an approved card
 * The assistant never publishes: an approved card changes the working copy only, as a held edit.
 */

interface RoundRow {
  id: string;
  world_id: string;
  account_id: string;
  kind: 'request' | 'feedback' | 'rollback';
  request: string;
  reply: string;
  status: string;
  operations: AssistantOperation[];
  changes: unknown[];
  steps: StepReport[];
  model: string | null;
  base_revision: number;
  applied_revision: number | null;
  before_definition: string | null;
  after_definition: string | null;
  reason: string | null;
  error: string | null;
  created_at: Date;
  decided_at: Date | null;
}

/** Rounds per minute per account (each runs up to eight provider calls). */
export const ASSISTANT_ROUNDS_PER_MINUTE = 10;
/** A round still `running` after this long died with its process: it no longer blocks the world. */
const STALE_RUNNING_MINUTES = 15;
/** Earlier rounds the model hears again (newest last). */
const HISTORY_ROUNDS = 12;

const cardParams = z.strictObject({ id: z.string(), cardId: z.string().regex(/^asc_[A-Za-z0-9_-]{1,64}$/, { message: 'is not a card id' }) });
const roundBody = z.union([
  z.strictObject({ request: z.string().trim().min(1).max(8000), model: z.string().min(1).max(200).optional() }),
  z.strictObject({ reject: z.strictObject({ cardId: z.string().min(1).max(100), reason: z.string().trim().min(1).max(4000) }), model: z.string().min(1).max(200).optional() }),
]);
const approveBody = z.strictObject({ revision: z.number().int().min(1).optional() }).default({});
const rejectBody = z.strictObject({ reason: z.string().trim().max(4000).optional() }).default({});
const rollbackBody = z.strictObject({ to: z.enum(['after', 'before']).default('after') }).default({ to: 'after' });

/**
 * For a proposed card that writes interface files: the interface and the variables' defaults the
 * world would have after it, for the studio's sandbox preview (the runtime check, which runs in the
 * author's browser: the sandbox is a browser frame). Null for any other round.
 */
function previewOf(r: RoundRow, definition: string | null): { rootComponent: unknown; variables: Record<string, unknown> } | null {
  if (r.status !== 'proposed' || definition === null || !r.operations.some((o) => o.op === 'set_interface_file' || o.op === 'remove_interface_file')) return null;
  const applied = applyOperations(JSON.parse(definition) as Record<string, unknown>, r.operations);
  if (!applied.ok || !applied.world.rootComponent) return null;
  const variables = Array.isArray(applied.world.variables) ? (applied.world.variables as { id: string; defaultValue?: unknown }[]) : [];
  return { rootComponent: applied.world.rootComponent, variables: Object.fromEntries(variables.map((v) => [v.id, v.defaultValue ?? null])) };
}

function roundView(r: RoundRow, definition: string | null = null) {
  return {
    preview: previewOf(r, definition),
    id: r.id,
    kind: r.kind,
    request: r.request,
    reply: r.reply,
    status: r.status,
    operations: r.operations,
    changes: r.changes,
    steps: r.steps,
    model: r.model,
    baseRevision: r.base_revision,
    appliedRevision: r.applied_revision,
    reason: r.reason,
    error: r.error,
    canRollback: r.status === 'approved' && r.after_definition !== null,
    createdAt: r.created_at.toISOString(),
    decidedAt: r.decided_at?.toISOString() ?? null,
  };
}

/** The earlier rounds as the conversation the model hears (what it proposed and what became of it; the world itself is in the system prompt). */
export function historyMessages(rounds: RoundRow[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const r of rounds.slice(-HISTORY_ROUNDS)) {
    if (r.status === 'running') continue;
    if (r.kind === 'rollback') {
      out.push({ role: 'user', content: r.request });
      continue;
    }
    out.push({ role: 'user', content: r.kind === 'feedback' ? rejectionMessage(r.reason ?? r.request) : r.request });
    const fate =
      r.status === 'approved'
        ? 'The author approved this card; it is applied.'
        : r.status === 'rejected'
          ? 'The author rejected this card.'
          : r.status === 'superseded'
            ? 'This card was left undecided and replaced.'
            : r.status === 'stopped'
              ? 'The author stopped this round; nothing of it was kept.'
              : r.status === 'failed'
                ? 'This round failed; nothing of it was kept.'
                : r.status === 'proposed'
                  ? 'This card awaits the author.'
                  : '';
    const ops = r.changes.length ? `\n[card: ${(r.changes as { summary: string }[]).map((c) => c.summary).join('; ')}] ${fate}` : fate ? `\n${fate}` : '';
    out.push({ role: 'assistant', content: `${r.reply}${ops}`.trim() || '(no answer)' });
  }
  return out;
}

export async function assistantRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  /** The world, for its author only (404 for anyone who cannot see it, 403 for a reader of a published one). */
  async function ownedWorld(id: string, accountId: string): Promise<WorldRow> {
    const { rows } = await db.query<WorldRow & Record<string, unknown>>('select * from worlds where id = $1', [id]);
    const row = rows[0];
    if (!row || (row.owner_id !== accountId && row.status !== 'published')) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    if (row.owner_id !== accountId) throw new HttpError(403, 'NOT_AUTHOR', 'Only the author of this world can use its assistant.');
    return row;
  }

  async function rounds(worldId: string, accountId: string): Promise<RoundRow[]> {
    const { rows } = await db.query<RoundRow & Record<string, unknown>>('select * from world_assistant_rounds where world_id = $1 and account_id = $2 order by created_at, id', [
      worldId,
      accountId,
    ]);
    return rows;
  }

  async function card(worldId: string, accountId: string, cardId: string): Promise<RoundRow> {
    const { rows } = await db.query<RoundRow & Record<string, unknown>>('select * from world_assistant_rounds where id = $1 and world_id = $2 and account_id = $3', [cardId, worldId, accountId]);
    if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such card.');
    return rows[0];
  }

  /** Writes a new working copy of the world (never its live version: nothing is published) as one revision, if nobody saved in between. */
  const writeWorld = (row: WorldRow, definition: Record<string, unknown>) => writeWorldIn(db, row, definition);

  app.get<{ Params: { id: string } }>('/api/worlds/:id/assistant', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const world = await ownedWorld(request.params.id, auth.account.id);
    const list = await rounds(world.id, auth.account.id);
    return { revision: world.revision, rounds: list.map((r) => roundView(r, world.definition)) };
  });

  app.post<{ Params: { id: string } }>('/api/worlds/:id/assistant/rounds', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const input = parseWith(roundBody, request.body);
    const world = await ownedWorld(request.params.id, auth.account.id);
    const limit = await ctx.store.rateLimit(`assistant:${auth.account.id}`, ASSISTANT_ROUNDS_PER_MINUTE, 60);
    if (!limit.allowed) throw new HttpError(429, 'RATE_LIMITED', 'Too many assistant requests; wait a minute.', { 'retry-after': String(limit.retryAfter) });
    const metering = await meteringFor(ctx, auth.account.id);
    const model = input.model ?? metering.selection.defaultModel ?? ctx.config.ai.official?.defaultModel ?? 'default';

    let kind: 'request' | 'feedback' = 'request';
    let text: string;
    let reason: string | null = null;
    if ('reject' in input) {
      const rejected = await card(world.id, auth.account.id, input.reject.cardId);
      if (rejected.status !== 'proposed') throw new HttpError(409, 'CARD_DECIDED', `This card is ${rejected.status}; only a proposed card can be rejected.`);
      kind = 'feedback';
      reason = input.reject.reason;
      text = input.reject.reason;
    } else text = input.request;

    // one running round per world; a round left running by a process that died does not block it
    await db.query(`update world_assistant_rounds set status = 'failed', error = 'interrupted' where world_id = $1 and status = 'running' and created_at < now() - make_interval(mins => $2)`, [
      world.id,
      STALE_RUNNING_MINUTES,
    ]);
    const history = historyMessages(await rounds(world.id, auth.account.id));
    const roundId = newId('asc');
    try {
      await db.transaction(async (tx) => {
        if (kind === 'feedback' && 'reject' in input) {
          const done = await tx.query(`update world_assistant_rounds set status = 'rejected', reason = $2, decided_at = now() where id = $1 and status = 'proposed'`, [input.reject.cardId, reason]);
          if (done.rowCount !== 1) throw new HttpError(409, 'CARD_DECIDED', 'This card was decided meanwhile.');
        }
        // an undecided card is replaced by the next round's
        await tx.query(`update world_assistant_rounds set status = 'superseded', decided_at = now() where world_id = $1 and account_id = $2 and status = 'proposed'`, [world.id, auth.account.id]);
        await tx.query(
          `insert into world_assistant_rounds (id, world_id, account_id, kind, request, reason, status, model, base_revision) values ($1, $2, $3, $4, $5, $6, 'running', $7, $8)`,
          [roundId, world.id, auth.account.id, kind, text, reason, model, world.revision],
        );
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new HttpError(409, 'ASSISTANT_BUSY', 'The assistant is already working on this world.');
      throw err;
    }

    const controller = new AbortController();
    whenClientGone(reply, () => controller.abort(new Error('stopped')));
    const stream = openEventStream(reply);
    stream.write('round', { id: roundId, kind, request: text });
    const steps: StepReport[] = [];
    try {
      const outcome = await runRound({
        metering,
        model,
        world: JSON.parse(world.definition) as Record<string, unknown>,
        history: [...history, { role: 'user', content: kind === 'feedback' ? rejectionMessage(text) : text }],
        signal: controller.signal,
        replyMaxBytes: ctx.config.ai.replyMaxBytes,
        onStep: (step) => {
          steps.push(step);
          stream.write('step', step);
        },
      });
      const status = outcome.operations.length > 0 ? 'proposed' : 'answered';
      const { rows } = await db.query<RoundRow & Record<string, unknown>>(
        `update world_assistant_rounds set status = $2, reply = $3, operations = $4, changes = $5, steps = $6 where id = $1 returning *`,
        [roundId, status, outcome.reply, JSON.stringify(outcome.operations), JSON.stringify(outcome.changes), JSON.stringify(outcome.steps)],
      );
      stream.write('card', roundView(rows[0]!, world.definition));
    } catch (err) {
      const stopped = controller.signal.aborted || err instanceof AiAbortedError;
      const error = publicErrorOf(err);
      if (!stopped) request.log.warn({ err }, 'assistant round failed');
      await db.query(`update world_assistant_rounds set status = $2, error = $3, steps = $4 where id = $1`, [roundId, stopped ? 'stopped' : 'failed', stopped ? 'Stopped by the author.' : error.message, JSON.stringify(steps)]);
      stream.write('error', { ...(stopped ? { code: 'STOPPED', message: 'Stopped.' } : error), requestId: request.id });
    } finally {
      reply.raw.end();
    }
  });

  app.post<{ Params: { id: string; cardId: string } }>('/api/worlds/:id/assistant/cards/:cardId/approve', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const params = parseWith(cardParams, request.params, 'path');
    const body = parseWith(approveBody, request.body ?? undefined);
    const world = await ownedWorld(params.id, auth.account.id);
    const round = await card(world.id, auth.account.id, params.cardId);
    if (round.status !== 'proposed') throw new HttpError(409, 'CARD_DECIDED', `This card is ${round.status}; only a proposed card can be approved.`);
    if (body.revision !== undefined && body.revision !== world.revision) throw new HttpError(409, 'STALE_REVISION', `The world is at revision ${world.revision}, not ${body.revision}; reload it before approving.`);
    // the operations were checked against the world as it was; they are applied (and checked again) to the world as it is
    const operations = z.array(assistantOperationSchema).parse(round.operations);
    const before = JSON.parse(world.definition) as Record<string, unknown>;
    const applied = applyOperations(before, operations);
    if (!applied.ok) throw new HttpError(409, 'CARD_CONFLICT', `The world changed since this card was proposed: operation ${applied.index + 1} no longer applies (${applied.error}). Ask the assistant again.`);
    const build = buildError(applied.world);
    if (build) throw new HttpError(409, 'CARD_CONFLICT', `The interface would not build with this card: ${build}`);
    const saved = await db.transaction(async (tx) => {
      const claimed = await tx.query(`update world_assistant_rounds set status = 'approved', decided_at = now() where id = $1 and status = 'proposed'`, [round.id]);
      if (claimed.rowCount !== 1) throw new HttpError(409, 'CARD_DECIDED', 'This card was decided meanwhile.');
      const row = await writeWorldIn(tx, world, applied.world);
      await tx.query(`update world_assistant_rounds set applied_revision = $2, before_definition = $3, after_definition = $4 where id = $1`, [round.id, row.revision, world.definition, row.definition]);
      return row;
    });
    return { world: ownerView(saved), round: roundView(await card(world.id, auth.account.id, round.id)) };
  });

  /** writeWorld on a connection (inside the approval's transaction). */
  async function writeWorldIn(tx: Queryable, row: WorldRow, definition: Record<string, unknown>): Promise<WorldRow> {
    const checked = validateWorld(definition);
    if (!checked.ok) throw new HttpError(422, 'WORLD_INVALID', `The world would not validate: ${checked.issues[0]!.path}: ${checked.issues[0]!.message}`, {}, { valid: false, issues: checked.issues });
    const s = summary(checked.world);
    const { rows } = await tx.query<WorldRow & Record<string, unknown>>(
      `update worlds set name = $4, description = $5, tags = $6, language = $7, definition = $8, revision = revision + 1, updated_at = now()
        where id = $1 and owner_id = $2 and revision = $3 returning *`,
      [row.id, row.owner_id, row.revision, s.name, s.description, s.tags, s.language, JSON.stringify(checked.world)],
    );
    if (!rows[0]) throw new HttpError(409, 'STALE_REVISION', 'This world was saved elsewhere meanwhile; nothing was changed. Reload and try again.');
    return rows[0];
  }

  app.post<{ Params: { id: string; cardId: string } }>('/api/worlds/:id/assistant/cards/:cardId/reject', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const params = parseWith(cardParams, request.params, 'path');
    const body = parseWith(rejectBody, request.body ?? undefined);
    const world = await ownedWorld(params.id, auth.account.id);
    const round = await card(world.id, auth.account.id, params.cardId);
    const done = await db.query(`update world_assistant_rounds set status = 'rejected', reason = $2, decided_at = now() where id = $1 and status = 'proposed'`, [round.id, body.reason || null]);
    if (done.rowCount !== 1) throw new HttpError(409, 'CARD_DECIDED', `This card is ${round.status}; only a proposed card can be rejected.`);
    return { round: roundView(await card(world.id, auth.account.id, round.id)) };
  });

  app.post<{ Params: { id: string; cardId: string } }>('/api/worlds/:id/assistant/cards/:cardId/rollback', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const params = parseWith(cardParams, request.params, 'path');
    const body = parseWith(rollbackBody, request.body ?? undefined);
    const world = await ownedWorld(params.id, auth.account.id);
    const round = await card(world.id, auth.account.id, params.cardId);
    const snapshot = body.to === 'after' ? round.after_definition : round.before_definition;
    if (round.status !== 'approved' || snapshot === null) throw new HttpError(409, 'NOT_A_SNAPSHOT', 'Only an approved card is a snapshot to roll back to.');
    const restored = JSON.parse(snapshot) as Record<string, unknown>;
    // the world keeps its own UUID whatever the snapshot says
    const current = JSON.parse(world.definition) as { id?: unknown };
    if (typeof current.id === 'string') restored.id = current.id;
    const saved = await writeWorld(world, restored);
    const note = `The author rolled the world back to how it was ${body.to} the card of ${round.created_at.toISOString()} (${(round.changes as { summary: string }[]).map((c) => c.summary).join('; ')}). The world definition now reflects that.`;
    await db.query(
      `insert into world_assistant_rounds (id, world_id, account_id, kind, request, reply, status, base_revision, applied_revision, decided_at) values ($1, $2, $3, 'rollback', $4, $5, 'answered', $6, $7, now())`,
      [newId('asc'), world.id, auth.account.id, note, `Rolled back to revision ${round.applied_revision ?? '?'} (${body.to} that card).`, world.revision, saved.revision],
    );
    return { world: ownerView(saved) };
  });
}
