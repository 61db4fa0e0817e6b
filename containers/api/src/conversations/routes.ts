import { randomBytes } from 'node:crypto';
import { HttpError, parseWith } from '@yumina/http';
import { normalizeState, startSession, type WorldDefinition, type WorldState } from '@yumina/world';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Authenticated } from '../accounts/sessions.ts';
import { requireAuth } from '../accounts/auth.ts';
import { newId } from '../accounts/ids.ts';
import type { AppContext } from '../context.ts';
import { generateTurn, type TurnOutput } from './generate.ts';
import { openEventStream } from '../event-stream.ts';
import {
  historyOf,
  type MessageRow,
  messageView,
  ownedSession,
  playableWorld,
  type SessionRow,
  type Swipe,
  sessionMessages,
  sessionView,
} from './model.ts';

const LOCK_TTL_MS = 180_000;
const MAX_MESSAGE = 32_000;
const sendBody = z.strictObject({
  content: z.string().trim().min(1, 'must not be empty').max(MAX_MESSAGE),
  /** The message count the client last saw: a mismatch (another tab wrote) is a 409. */
  expectedMessageCount: z.number().int().min(0).optional(),
});
const editBody = z.strictObject({ content: z.string().max(MAX_MESSAGE) });
const checkpointBody = z.strictObject({ name: z.string().trim().min(1).max(100) });
const storageValue = z.strictObject({ value: z.string().max(64 * 1024) });
const storageKey = z.string().min(1).max(200).regex(/^[\w.:-]+$/, 'letters, digits and . _ : - only');

/** Generations running in this process, by session: stopped locally or through the store's pub/sub. */
const running = new Map<string, AbortController>();

/** The world state after the first `before` messages: the newest complete snapshot, else the session's initial state. */
function snapshotOf(world: WorldDefinition, messages: MessageRow[], before: number, session: SessionRow): WorldState {
  for (let i = before - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.state_snapshot && m.status === 'complete') return JSON.parse(m.state_snapshot) as WorldState;
  }
  return normalizeState(world as never, JSON.parse(session.initial_state) as WorldState);
}

export async function conversationRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  await ctx.store.subscribe('chat:stop', (sessionId) => running.get(sessionId)?.abort(new Error('Stopped by the player')));

  async function lockSession(sessionId: string): Promise<string> {
    const token = await ctx.store.acquireLock(`chat:${sessionId}`, LOCK_TTL_MS);
    if (!token) throw new HttpError(409, 'SESSION_BUSY', 'A reply is already being written in this session (another tab?). Wait for it, or stop it.');
    return token;
  }

  async function newSession(auth: Authenticated, worldId: string, world: WorldDefinition, branchedFrom: string | null = null) {
    const id = newId('cnv');
    const seed = randomBytes(8).toString('hex');
    const start = startSession(world as never, { now: new Date(), seed, sessionId: id, accountName: auth.account.username });
    const initial = JSON.stringify(start.state);
    await db.transaction(async (tx) => {
      await tx.query(
        `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count, branched_from) values ($1, $2, $3, $4, $5, $6, $6, $7, $8)`,
        [id, worldId, auth.account.id, world.name, seed, initial, start.greetings.length ? 1 : 0, branchedFrom],
      );
      if (start.greetings.length) {
        const [first, ...alternatives] = start.greetings;
        const swipes: Swipe[] = [first!, ...alternatives].map((g) => ({ content: g, rawContent: g, snapshot: start.state, stateChanges: [] }));
        await tx.query(
          `insert into chat_messages (id, session_id, position, role, content, raw_content, state_snapshot, swipes) values ($1, $2, 0, 'assistant', $3, $3, $4, $5)`,
          [newId('msg'), id, first, initial, JSON.stringify(swipes)],
        );
      }
    });
    return id;
  }

  async function full(sessionId: string, accountId: string) {
    const session = await ownedSession(db, sessionId, accountId);
    return { session: sessionView(session), messages: (await sessionMessages(db, sessionId)).map(messageView) };
  }

  /**
   * Runs a generation and persists it in one transaction at the end. The user message (already
   * stored) survives any failure; a failed or stopped generation leaves a failed message with the
   * partial text and never a half-applied state.
   */
  async function runGeneration(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: Authenticated,
    session: SessionRow,
    target: MessageRow,
    prepare: { history: { role: 'user' | 'assistant'; content: string }[]; userMessage: string; state: WorldState; prefix?: string },
    apply: (out: TurnOutput) => { content: string; raw: string; swipes: Swipe[]; active: number },
    lockToken: string,
  ) {
    const world = await playableWorld(db, session.world_id, auth.account.id);
    const controller = new AbortController();
    running.set(session.id, controller);
    request.raw.on('close', () => {
      if (!reply.raw.writableEnded) controller.abort(new Error('The client went away'));
    });
    const stream = openEventStream(reply);
    stream.write('start', { messageId: target.id });
    let partial = prepare.prefix ?? '';
    try {
      const out = await generateTurn(ctx, {
        accountId: auth.account.id,
        accountName: auth.account.username,
        sessionId: session.id,
        seed: session.seed,
        world,
        state: prepare.state,
        history: prepare.history,
        userMessage: prepare.userMessage,
        prefix: prepare.prefix,
        summary: session.summary,
        signal: controller.signal,
        onDelta: (text) => {
          partial += text;
          stream.write('delta', { text });
        },
        onReasoning: (text) => stream.write('reasoning', { text }),
      });
      const next = apply(out);
      const stateText = JSON.stringify(out.result.state);
      await db.transaction(async (tx) => {
        await tx.query(
          `update chat_messages set content = $2, raw_content = $3, status = 'complete', error_message = null, state_changes = $4,
                  state_snapshot = $5, swipes = $6, active_swipe_index = $7, model = $8, token_count = $9, generation_time_ms = $10
            where id = $1`,
          [target.id, next.content, next.raw, JSON.stringify(out.result.stateChanges), stateText, JSON.stringify(next.swipes), next.active, out.model, out.tokenCount, out.generationTimeMs],
        );
        await tx.query('update chat_sessions set state = $2, summary = coalesce($3, summary), updated_at = now() where id = $1', [
          session.id,
          stateText,
          out.summary,
        ]);
      });
      stream.write('done', {
        message: messageView((await db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where id = $1', [target.id])).rows[0]!),
        state: out.result.state,
        notifications: out.result.notifications,
        audioCommands: out.result.audioCommands,
        skippedEntries: out.result.skippedEntries,
      });
    } catch (err) {
      const stopped = controller.signal.aborted;
      const message = stopped ? 'Stopped before the reply was finished.' : ((err as { message?: string }).message ?? 'The reply failed.');
      await db
        .query(`update chat_messages set status = 'failed', content = $2, error_message = $3 where id = $1`, [target.id, partial, message])
        .catch(() => {});
      stream.write('error', { code: (err as { code?: string }).code ?? (stopped ? 'AI_ABORTED' : 'GENERATION_FAILED'), message, stopped });
    } finally {
      running.delete(session.id);
      await ctx.store.releaseLock(`chat:${session.id}`, lockToken).catch(() => false);
      reply.raw.end();
    }
  }

  // Sessions.
  app.post<{ Params: { worldId: string } }>('/api/worlds/:worldId/sessions', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const world = await playableWorld(db, request.params.worldId, auth.account.id);
    const id = await newSession(auth, request.params.worldId, world);
    reply.code(201);
    return full(id, auth.account.id);
  });

  app.get<{ Params: { worldId: string } }>('/api/worlds/:worldId/sessions', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows } = await db.query<SessionRow & Record<string, unknown>>(
      'select * from chat_sessions where account_id = $1 and world_id = $2 order by updated_at desc limit 100',
      [auth.account.id, request.params.worldId],
    );
    return { sessions: rows.map((r) => ({ ...sessionView(r), state: undefined })) };
  });

  app.get<{ Params: { id: string } }>('/api/sessions/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    return full(request.params.id, auth.account.id);
  });

  app.delete<{ Params: { id: string } }>('/api/sessions/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownedSession(db, request.params.id, auth.account.id);
    await db.query('delete from chat_sessions where id = $1 and account_id = $2', [request.params.id, auth.account.id]);
    return { ok: true };
  });

  // Send: the user message is stored first (it survives any failure), then the reply streams as SSE.
  app.post<{ Params: { id: string } }>('/api/sessions/:id/messages', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(sendBody, request.body);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const lock = await lockSession(session.id);
    let target: MessageRow;
    let messages: MessageRow[];
    try {
      messages = await sessionMessages(db, session.id);
      if (body.expectedMessageCount !== undefined && body.expectedMessageCount !== messages.length) {
        throw new HttpError(409, 'STALE_CONVERSATION', 'The conversation changed in another tab. Reload it before sending.');
      }
      const position = messages.length;
      target = await db.transaction(async (tx) => {
        await tx.query(`insert into chat_messages (id, session_id, position, role, content) values ($1, $2, $3, 'user', $4)`, [
          newId('msg'),
          session.id,
          position,
          body.content,
        ]);
        const { rows } = await tx.query<MessageRow & Record<string, unknown>>(
          `insert into chat_messages (id, session_id, position, role, content, status) values ($1, $2, $3, 'assistant', '', 'streaming') returning *`,
          [newId('msg'), session.id, position + 1],
        );
        await tx.query('update chat_sessions set message_count = $2, updated_at = now() where id = $1', [session.id, position + 2]);
        return rows[0]!;
      });
    } catch (err) {
      await ctx.store.releaseLock(`chat:${session.id}`, lock).catch(() => false);
      throw err;
    }
    const world = await playableWorld(db, session.world_id, auth.account.id);
    const state = snapshotOf(world, messages, messages.length, session);
    await runGeneration(request, reply, auth, session, target, { history: historyOf(messages), userMessage: body.content, state }, (out) => ({
      content: out.result.displayText,
      raw: out.rawReply,
      swipes: [swipeOf(out)],
      active: 0,
    }), lock);
  });

  /** The last exchange (user message + reply) for regenerate and continue; releases the lock if refused. */
  async function lastExchange(auth: Authenticated, session: SessionRow, lock: string, refusal: [code: string, message: string]) {
    try {
      const messages = await sessionMessages(db, session.id);
      const last = messages.at(-1);
      if (last?.role !== 'assistant' || messages.at(-2)?.role !== 'user') throw new HttpError(409, refusal[0], refusal[1]);
      const world = await playableWorld(db, session.world_id, auth.account.id);
      const base = {
        history: historyOf(messages.slice(0, -2)),
        userMessage: messages.at(-2)!.content,
        state: snapshotOf(world, messages, messages.length - 2, session),
      };
      return { last, base };
    } catch (err) {
      await ctx.store.releaseLock(`chat:${session.id}`, lock).catch(() => false);
      throw err;
    }
  }

  const swipeOf = (out: TurnOutput): Swipe => ({
    content: out.result.displayText,
    rawContent: out.rawReply,
    snapshot: out.result.state,
    stateChanges: out.result.stateChanges,
  });

  /** Regenerate the last reply: the earlier reply stays as a swipe. */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/regenerate', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const lock = await lockSession(session.id);
    const { last, base } = await lastExchange(auth, session, lock, ['NOTHING_TO_REGENERATE', 'The last message is not a reply to regenerate.']);
    await db.query(`update chat_messages set status = 'streaming', error_message = null where id = $1`, [last.id]);
    const previous = (JSON.parse(last.swipes) as Swipe[]).filter((s) => s.content !== '');
    await runGeneration(request, reply, auth, session, last, base, (out) => {
      const swipes = [...previous, swipeOf(out)];
      return { content: out.result.displayText, raw: out.rawReply, swipes, active: swipes.length - 1 };
    }, lock);
  });

  /** Continue the last reply where it stopped. */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/continue', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const lock = await lockSession(session.id);
    const { last, base } = await lastExchange(auth, session, lock, ['NOTHING_TO_CONTINUE', 'There is no reply to continue.']);
    await runGeneration(request, reply, auth, session, last, { ...base, prefix: last.raw_content ?? last.content }, (out) => {
      const swipes = JSON.parse(last.swipes) as Swipe[];
      const index = Math.min(last.active_swipe_index, Math.max(0, swipes.length - 1));
      swipes[index] = swipeOf(out);
      return { content: out.result.displayText, raw: out.rawReply, swipes, active: index };
    }, lock);
  });

  /** Stop a running generation (on whichever replica runs it). */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/stop', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownedSession(db, request.params.id, auth.account.id);
    running.get(request.params.id)?.abort(new Error('Stopped by the player'));
    await ctx.store.publish('chat:stop', request.params.id);
    return { ok: true };
  });

  /** Swipe the last reply left or right: its content and the session state follow the chosen alternative. */
  app.post<{ Params: { id: string; direction: string } }>('/api/sessions/:id/swipe/:direction', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    if (request.params.direction !== 'left' && request.params.direction !== 'right') throw new HttpError(404, 'NOT_FOUND', 'Swipe left or right.');
    const step = request.params.direction === 'left' ? -1 : 1;
    await db.transaction(async (tx) => {
      const session = await ownedSession(tx, request.params.id, auth.account.id, true);
      const { rows } = await tx.query<MessageRow & Record<string, unknown>>(
        'select * from chat_messages where session_id = $1 order by position desc limit 1',
        [session.id],
      );
      const last = rows[0];
      const swipes = last ? (JSON.parse(last.swipes) as Swipe[]) : [];
      const index = (last?.active_swipe_index ?? 0) + step;
      if (!last || last.role !== 'assistant' || index < 0 || index >= swipes.length) throw new HttpError(409, 'NO_SWIPE', 'There is no reply in that direction.');
      const swipe = swipes[index]!;
      await tx.query(
        `update chat_messages set content = $2, raw_content = $3, state_snapshot = $4, state_changes = $5, active_swipe_index = $6, status = 'complete' where id = $1`,
        [last.id, swipe.content, swipe.rawContent, JSON.stringify(swipe.snapshot), JSON.stringify(swipe.stateChanges), index],
      );
      await tx.query('update chat_sessions set state = $2, updated_at = now() where id = $1', [session.id, JSON.stringify(swipe.snapshot)]);
    });
    return full(request.params.id, auth.account.id);
  });

  /**
   * Edit a message's text. No state is recomputed (regenerate for that): directives typed into an
   * edit change nothing. The edited text replaces the raw text too, and the active alternative of a
   * reply, so "continue" carries on from the edit and swiping away and back keeps it.
   */
  app.patch<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/messages/:messageId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(editBody, request.body);
    await ownedSession(db, request.params.id, auth.account.id);
    await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ swipes: string; active_swipe_index: number }>(
        `select swipes, active_swipe_index from chat_messages where id = $2 and session_id = $1 and status <> 'streaming' for update`,
        [request.params.id, request.params.messageId],
      );
      const row = rows[0];
      if (!row) throw new HttpError(404, 'NOT_FOUND', 'No such message (or it is still being written).');
      const swipes = JSON.parse(row.swipes) as Swipe[];
      const active = swipes[row.active_swipe_index];
      if (active) swipes[row.active_swipe_index] = { ...active, content: body.content, rawContent: body.content };
      await tx.query(`update chat_messages set content = $2, raw_content = $2, swipes = $3 where id = $1`, [
        request.params.messageId,
        body.content,
        JSON.stringify(swipes),
      ]);
    });
    return full(request.params.id, auth.account.id);
  });

  /** Revert to a message: the conversation up to and including it, the state as it was then. */
  app.post<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/revert/:messageId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    return revertTo(auth, session, request.params.messageId, true);
  });

  /** Delete a message: it and everything after it go, and the state returns to before it. */
  app.delete<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/messages/:messageId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    return revertTo(auth, session, request.params.messageId, false);
  });

  /** Restart: the conversation from its greeting, variables at their defaults. */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/restart', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const messages = await sessionMessages(db, session.id);
    const greeting = messages[0]?.role === 'assistant' && messages[0].position === 0 ? messages[0] : undefined;
    return greeting ? revertTo(auth, session, greeting.id, true) : revertTo(auth, session, null, true);
  });

  /** Keeps messages up to `messageId` (inclusive, or exclusive when `inclusive` is false); null keeps none. */
  async function revertTo(auth: Authenticated, session: SessionRow, messageId: string | null, inclusive: boolean) {
    const lock = await lockSession(session.id);
    try {
      await db.transaction(async (tx) => {
        const messages = await sessionMessages(tx, session.id);
        const index = messageId ? messages.findIndex((m) => m.id === messageId) : -1;
        if (messageId && index < 0) throw new HttpError(404, 'NOT_FOUND', 'No such message.');
        const keep = messageId ? index + (inclusive ? 1 : 0) : 0;
        const world = await playableWorld(tx, session.world_id, auth.account.id);
        const state = snapshotOf(world, messages, keep, session);
        await tx.query('delete from chat_messages where session_id = $1 and position >= $2', [session.id, keep]);
        await tx.query('update chat_sessions set state = $2, message_count = $3, updated_at = now() where id = $1', [session.id, JSON.stringify(state), keep]);
        await tx.query('delete from chat_checkpoints where session_id = $1 and message_count > $2', [session.id, keep]);
      });
    } finally {
      await ctx.store.releaseLock(`chat:${session.id}`, lock).catch(() => false);
    }
    return full(session.id, auth.account.id);
  }

  /** Branch: a new session holding the conversation up to a message, with the state at that point. */
  app.post<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/branch/:messageId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const messages = await sessionMessages(db, session.id);
    const index = messages.findIndex((m) => m.id === request.params.messageId);
    if (index < 0) throw new HttpError(404, 'NOT_FOUND', 'No such message.');
    const world = await playableWorld(db, session.world_id, auth.account.id);
    const state = snapshotOf(world, messages, index + 1, session);
    const id = newId('cnv');
    await db.transaction(async (tx) => {
      await tx.query(
        `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count, branched_from) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [id, session.world_id, auth.account.id, `${session.title} (branch)`, session.seed, JSON.stringify(state), session.initial_state, index + 1, session.id],
      );
      for (const m of messages.slice(0, index + 1)) {
        await tx.query(
          `insert into chat_messages (id, session_id, position, role, content, raw_content, status, error_message, state_changes, state_snapshot, swipes, active_swipe_index, model, token_count, generation_time_ms, attachments)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
          [newId('msg'), id, m.position, m.role, m.content, m.raw_content, m.status === 'streaming' ? 'failed' : m.status, m.error_message, m.state_changes, m.state_snapshot, m.swipes, m.active_swipe_index, m.model, m.token_count, m.generation_time_ms, m.attachments],
        );
      }
    });
    reply.code(201);
    return full(id, auth.account.id);
  });

  // Checkpoints.
  app.get<{ Params: { id: string } }>('/api/sessions/:id/checkpoints', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownedSession(db, request.params.id, auth.account.id);
    const { rows } = await db.query<{ id: string; name: string; message_count: number; created_at: Date }>(
      'select id, name, message_count, created_at from chat_checkpoints where session_id = $1 order by created_at',
      [request.params.id],
    );
    return { checkpoints: rows.map((r) => ({ id: r.id, name: r.name, messageCount: r.message_count, createdAt: r.created_at.toISOString() })) };
  });

  app.post<{ Params: { id: string } }>('/api/sessions/:id/checkpoints', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(checkpointBody, request.body);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const id = newId('chk');
    await db.query('insert into chat_checkpoints (id, session_id, name, message_count, state) values ($1, $2, $3, $4, $5)', [
      id,
      session.id,
      body.name,
      session.message_count,
      session.state,
    ]);
    reply.code(201);
    return { id, name: body.name, messageCount: session.message_count };
  });

  app.post<{ Params: { id: string; checkpointId: string } }>('/api/sessions/:id/checkpoints/:checkpointId/restore', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const lock = await lockSession(request.params.id);
    try {
      await db.transaction(async (tx) => {
        const session = await ownedSession(tx, request.params.id, auth.account.id, true);
        const { rows } = await tx.query<{ message_count: number; state: string }>(
          'select message_count, state from chat_checkpoints where id = $1 and session_id = $2',
          [request.params.checkpointId, session.id],
        );
        const cp = rows[0];
        if (!cp) throw new HttpError(404, 'NOT_FOUND', 'No such checkpoint.');
        await tx.query('delete from chat_messages where session_id = $1 and position >= $2', [session.id, cp.message_count]);
        await tx.query('update chat_sessions set state = $2, message_count = $3, updated_at = now() where id = $1', [session.id, cp.state, cp.message_count]);
      });
    } finally {
      await ctx.store.releaseLock(`chat:${request.params.id}`, lock).catch(() => false);
    }
    return full(request.params.id, auth.account.id);
  });

  app.delete<{ Params: { id: string; checkpointId: string } }>('/api/sessions/:id/checkpoints/:checkpointId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownedSession(db, request.params.id, auth.account.id);
    const { rowCount } = await db.query('delete from chat_checkpoints where id = $1 and session_id = $2', [request.params.checkpointId, request.params.id]);
    if (!rowCount) throw new HttpError(404, 'NOT_FOUND', 'No such checkpoint.');
    return { ok: true };
  });

  // World-scoped persistent storage per account (string values).
  app.get<{ Params: { worldId: string } }>('/api/worlds/:worldId/storage', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows } = await db.query<{ key: string; value: string }>('select key, value from world_storage where account_id = $1 and world_id = $2 order by key', [
      auth.account.id,
      request.params.worldId,
    ]);
    return { entries: Object.fromEntries(rows.map((r) => [r.key, r.value])) };
  });

  app.put<{ Params: { worldId: string; key: string } }>('/api/worlds/:worldId/storage/:key', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const key = parseWith(storageKey, request.params.key, 'key');
    const body = parseWith(storageValue, request.body);
    await playableWorld(db, request.params.worldId, auth.account.id);
    const count = await db.query<{ n: number }>('select count(*)::int as n from world_storage where account_id = $1 and world_id = $2 and key <> $3', [
      auth.account.id,
      request.params.worldId,
      key,
    ]);
    if ((count.rows[0]?.n ?? 0) >= 500) throw new HttpError(409, 'STORAGE_FULL', 'A world may keep at most 500 keys per player.');
    await db.query(
      `insert into world_storage (account_id, world_id, key, value) values ($1, $2, $3, $4)
       on conflict (account_id, world_id, key) do update set value = excluded.value, updated_at = now()`,
      [auth.account.id, request.params.worldId, key, body.value],
    );
    return { ok: true };
  });

  app.delete<{ Params: { worldId: string; key: string } }>('/api/worlds/:worldId/storage/:key', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await db.query('delete from world_storage where account_id = $1 and world_id = $2 and key = $3', [auth.account.id, request.params.worldId, request.params.key]);
    return { ok: true };
  });
}
