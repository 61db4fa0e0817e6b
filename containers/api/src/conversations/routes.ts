import { randomUUID } from 'node:crypto';
import { type MeteringContext, type UsageRecord } from '@yumina/ai';
import { recordUsage } from '@yumina/billing';
import { completeTurn, HistoryCache, renewTurn, startTurn } from '@yumina/conversations';
import { HttpError, parseWith, publicErrorOf } from '@yumina/http';
import { normalizeState, type Persona, type WorldDefinition, type WorldState } from '@yumina/world';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { notSignedIn, requireAuth, sendRenewedCookie } from '../accounts/auth.ts';
import { type Authenticated, hashToken, newId, renewIfDue, SESSION_COOKIE } from '@yumina/accounts';
import type { AppContext } from '../context.ts';
import { generateTurn, swipeOf, type TurnOutput, replyFigures } from './generate.ts';
import { startNewSession } from './new-session.ts';
import { openEventStream, whenClientGone } from '../event-stream.ts';
import { admitted as admittedSlot, learnLogin } from '../admission.ts';
import { acquireTurnLock, breakTurnLock, markTurnFailed, releaseTurnLock, SESSION_BUSY_MESSAGE, settleStreamingReplies } from './turn-lock.ts';
import { meteringOf } from '../ai/metering.ts';
import { operatorMetricsOf } from '../operator-metrics.ts';
import { openConnection } from '../accounts/ai-connection.ts';
import { worldForViewer } from '../worlds/version.ts';
import { playerRoutes } from './actions.ts';
import { chatTransferRoutes } from './chat-transfer.ts';
import { sideReplyRoutes } from './side-replies.ts';
import { speechRoutes } from './speech.ts';
import { messageSearchRoutes } from './message-search.ts';
import { enginePersonaOf } from './persona.ts';
import { afterCursor, keysetPage, keysetQuery, timeKey } from '../keyset.ts';
import { parseHistoryPageQuery, sessionMessage, sessionPage } from './history-page.ts';
import { emitRoomEvent } from '../rooms/room-bus.ts';
import {
  historyOf,
  type MessageRow,
  ownedSession,
  playableWorld,
  groupSessionRefusal,
  roomSessionRefusal,
  type SessionRow,
  type Swipe,
  sessionMessages,
  sessionView,
} from './model.ts';

const sessionListQuery = keysetQuery(100, 100);
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

/**
 * The world state after the first `before` messages: the newest complete snapshot (a reply's: the
 * state it led to; a player's message's: the state its turn started from, interface actions before
 * it included), else the session's initial state. Its choices stay pending only while the reply
 * that offered them is the last of those messages (a player message after it answered them).
 */
function snapshotOf(world: WorldDefinition, messages: MessageRow[], before: number, session: SessionRow): WorldState {
  for (let i = before - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (!m.state_snapshot || m.status !== 'complete') continue;
    const state = JSON.parse(m.state_snapshot) as WorldState;
    return i === before - 1 && m.role === 'assistant' ? state : { ...state, pendingChoices: [] };
  }
  return normalizeState(world as never, JSON.parse(session.initial_state) as WorldState);
}

export async function conversationRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  /** Histories as the last turns of this process read them: a turn reads only what changed since (@yumina/conversations). */
  const histories = new HistoryCache();
  /**
   * Turns pass the replica's admission queue (../admission.ts) before any query: beyond it, 503 at
   * once. The slot covers the server's own work of a turn (its statements, the prompt's assembly)
   * and goes back when the provider is asked (its reply holds neither a connection nor the CPU),
   * or when the answer ends first (a refusal, an error).
   */
  const admit = async (reply: FastifyReply) => {
    const release = await admittedSlot(ctx, reply.request, reply.raw);
    reply.raw.once('close', release);
    return release;
  };
  await playerRoutes(app, ctx);
  // Chats in and out: SillyTavern .jsonl (and readable text) export, .jsonl import into a new session.
  await chatTransferRoutes(app, ctx);
  // Issue 50: impersonate and translate (never stored), replies read aloud, search.
  await sideReplyRoutes(app, ctx);
  await speechRoutes(app, ctx);
  await messageSearchRoutes(app, ctx);
  await ctx.store.subscribe('chat:stop', (sessionId) => running.get(sessionId)?.abort(new Error('Stopped by the player')));

  /** The session's turn lock (./turn-lock.ts), after the route's ownership check; the send path takes it in startTurn's statement. */
  async function lockSession(accountId: string, sessionId: string): Promise<string> {
    return acquireTurnLock(ctx, accountId, sessionId);
  }

  const newSession = (auth: Authenticated, worldId: string, world: WorldDefinition, branchedFrom: string | null = null) => startNewSession(ctx, auth, worldId, world, { branchedFrom });

  /** The host changed a room's conversation through a single player's route: every member reads it again. */
  const changedRoom = async (session: Pick<SessionRow, 'id' | 'is_room'>) => {
    if (session.is_room) await emitRoomEvent(ctx.store, session.id, 'sync', {}).catch((err: unknown) => ctx.log.warn({ err, sessionId: session.id }, 'room not told of a change'));
  };

  /** The session and its newest page of messages (./history-page.ts): what every session route answers. */
  const full = (sessionId: string, accountId: string) => sessionPage(db, sessionId, accountId);

  /** The signed-in account as a turn needs it (the send path reads its login in startTurn's statement). */
  type TurnAuth = { account: Pick<Authenticated['account'], 'id' | 'username' | 'displayName'> };

  /** What a turn reads of its account and world besides the conversation; the send path reads it while it stores the messages. */
  interface TurnReads {
    world: WorldDefinition;
    metering: MeteringContext;
    persona: Persona | null;
    /** Usage rows recorded by `metering` and not written yet. */
    usage: UsageRecord[];
  }

  /**
   * Runs a generation and persists it in one statement at the end (@yumina/conversations'
   * completeTurn). The user message (already stored) survives any failure; a failed or stopped
   * generation leaves no reply of its own (the failure is kept on the player's message) and never
   * a half-applied state.
   */
  async function runGeneration(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: TurnAuth,
    session: Pick<SessionRow, 'id' | 'world_id' | 'seed' | 'summary' | 'memory'>,
    /** The reply written; `fresh` when it is new (a send or a retry: removed if the turn fails), else regenerated or continued (kept as it was). */
    target: Pick<MessageRow, 'id'> & { fresh: boolean },
    prepare: { history: { role: 'user' | 'assistant'; content: string }[]; userMessage: string; state: WorldState; prefix?: string },
    apply: (out: TurnOutput) => { content: string; raw: string; swipes: Swipe[]; active: number },
    lockToken: string,
    reads: Promise<TurnReads> | undefined,
    /** Gives the turn's admission slot back, once its prompt is built (the provider's reply needs no slot). */
    admitted: () => void,
  ) {
    const controller = new AbortController();
    running.set(session.id, controller);
    // The lock's lease, renewed while the turn runs: if this replica dies, the session is free again within a lease.
    const leaseSeconds = ctx.config.limits.turnLeaseSeconds;
    const renewal = setInterval(
      () => void renewTurn(db, { sessionId: session.id, lockToken, seconds: leaseSeconds }).catch((err: unknown) => request.log.warn({ err, sessionId: session.id }, 'turn lease not renewed')),
      (leaseSeconds * 1000) / 3,
    );
    renewal.unref();
    // the operator's turn latency (to the first text and to the end) and provider errors by kind
    const startedAt = performance.now();
    let firstTokenMs: number | null = null;
    // A player who leaves stops the provider call at once: settled and billed as a stop.
    whenClientGone(reply, () => controller.abort(new Error('The client went away')));
    const stream = openEventStream(reply);
    stream.write('start', { messageId: target.id });
    let locked = true;
    try {
      const known = reads ? await reads : null;
      const world = known?.world ?? (await playableWorld(db, session.world_id, auth.account.id));
      const out = await generateTurn(ctx, {
        accountId: auth.account.id,
        // `{{user}}` without a persona: the account's display name (before the world's default)
        accountName: auth.account.displayName,
        sessionId: session.id,
        seed: session.seed,
        world,
        choicesOfWorld: session.world_id,
        state: prepare.state,
        history: prepare.history,
        userMessage: prepare.userMessage,
        prefix: prepare.prefix,
        summary: session.summary,
        memory: session.memory ?? null,
        signal: controller.signal,
        onPromptReady: admitted,
        onDelta: (text) => {
          firstTokenMs ??= performance.now() - startedAt;
          stream.write('delta', { text });
        },
        onReasoning: (text) => stream.write('reasoning', { text }),
        ...(known ? { metering: known.metering, persona: known.persona } : {}),
      });
      const next = apply(out);
      const stateText = JSON.stringify(out.result.state);
      const stateChanges = JSON.stringify(out.result.stateChanges);
      const written = await completeTurn(db, {
        sessionId: session.id,
        replyId: target.id,
        content: next.content,
        rawContent: next.raw,
        stateChanges,
        state: stateText,
        swipes: JSON.stringify(next.swipes),
        activeSwipeIndex: next.active,
        ...replyFigures(out),
        usage: known?.usage,
        lockToken,
      });
      // written with the reply: its usage rows, and the lock given back
      if (known) known.usage.length = 0;
      locked = false;
      // The stored reply as messageView shows it, from what was written (no re-read); the state,
      // serialized once above, stands in for each of its copies (the snapshot, the new swipe's, the session's).
      const STATE = '\u0000state\u0000';
      const asState = (snapshot: unknown) => (snapshot === out.result.state ? STATE : snapshot);
      const message = {
        id: target.id,
        position: written.position,
        role: written.role,
        content: next.content,
        ...(next.raw !== next.content ? { rawContent: next.raw } : {}),
        status: 'complete',
        errorMessage: null,
        failure: null,
        stateChanges: out.result.stateChanges,
        stateSnapshot: STATE,
        swipes: next.swipes.map((swipe) => ({ content: swipe.content, snapshot: asState(swipe.snapshot) })),
        activeSwipeIndex: next.active,
        model: out.model,
        tokenCount: out.tokenCount,
        promptTokens: out.promptTokens,
        creditsCharged: out.creditsCharged,
        cachedTokens: out.cachedTokens,
        cacheWriteTokens: out.cacheWriteTokens,
        creditsEstimate: out.creditsEstimate,
        generationTimeMs: out.generationTimeMs,
        compacted: written.compacted,
        truncated: out.truncated,
        attachments: JSON.parse(written.attachments) as unknown[],
        createdAt: written.created_at.toISOString(),
      };
      const done = JSON.stringify({
        message,
        state: STATE,
        notifications: out.result.notifications,
        audioCommands: out.result.audioCommands,
        aiRequests: out.result.aiRequests,
        skippedEntries: out.result.skippedEntries,
      });
      stream.writeJson('done', done.split(JSON.stringify(STATE)).join(stateText));
      operatorMetricsOf(ctx).turn('complete', performance.now() - startedAt, firstTokenMs);
    } catch (err) {
      const stopped = controller.signal.aborted;
      const shown = stopped ? { code: 'AI_ABORTED', message: 'Stopped before the reply was finished.' } : publicErrorOf(err);
      operatorMetricsOf(ctx).turn(stopped ? 'stopped' : 'failed', performance.now() - startedAt, firstTokenMs);
      if (!stopped && shown.code.startsWith('AI_')) operatorMetricsOf(ctx).providerError(shown.code);
      if (!stopped) request.log.warn({ err, sessionId: session.id, messageId: target.id }, 'turn failed');
      // A failure is not the world's message (issue 30 A2): a new reply goes, a regenerated or
      // continued one stays as it was, and the failure is kept on the player's message (shown there
      // with a retry), with the lock given back, in one statement: one attempt before the client
      // hears of it (a reload then shows the notice); when the database is what failed, the client
      // is told at once and the retries go on after. The text streamed so far is not kept.
      const failed = { sessionId: session.id, replyId: target.id, fresh: target.fresh, code: shown.code, message: shown.message, lockToken };
      const marked = await markTurnFailed(ctx, failed, 1);
      if (marked) locked = false;
      // the provider's Retry-After (a native provider's 429 or overload), when it sent one
      const retryAfter = stopped ? null : (err as { retryAfterSeconds?: unknown }).retryAfterSeconds;
      stream.write('error', { ...shown, stopped, requestId: request.id, ...(typeof retryAfter === 'number' ? { retryAfter } : {}) });
      if (!reply.raw.writableEnded) reply.raw.end();
      if (!marked && (await markTurnFailed(ctx, failed, 6))) locked = false;
    } finally {
      // usage rows a failed turn recorded (a partial reply is charged too), written on their own
      for (const record of (reads ? await reads.catch(() => null) : null)?.usage.splice(0) ?? []) {
        await recordUsage(db, record).catch((err: unknown) => request.log.error({ err, sessionId: session.id }, 'usage row not written'));
      }
      running.delete(session.id);
      clearInterval(renewal);
      if (locked) await releaseTurnLock(ctx, session.id, lockToken);
      if (!reply.raw.writableEnded) reply.raw.end();
    }
  }

  // Sessions.
  app.post<{ Params: { worldId: string } }>('/api/worlds/:worldId/sessions', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const world = await playableWorld(db, request.params.worldId, auth.account.id);
    const { id, start } = await newSession(auth, request.params.worldId, world);
    reply.code(201);
    // What session start did once (its notifications and audio), for the player to show and play.
    return { ...(await full(id, auth.account.id)), start: { notifications: start.notifications, audioCommands: start.audioCommands, aiRequests: start.aiRequests } };
  });

  app.get<{ Params: { worldId: string } }>('/api/worlds/:worldId/sessions', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    // Newest first, a keyset page at a time (../keyset.ts): `cursor` is the last page's nextCursor.
    // The account's own sessions: the player opens the newest of these; the rooms it hosts
    // (GET /api/rooms) and its group scenes open on their own pages.
    const q = parseWith(sessionListQuery, request.query, 'query');
    const params: unknown[] = [auth.account.id, request.params.worldId, q.limit + 1];
    const after = afterCursor(q.cursor, 'updated_at', 'id', 'desc', params);
    const { rows } = await db.query<SessionRow & { k: string } & Record<string, unknown>>(
      // a room it hosts or a group scene played in this world is not one of its own sessions (/rooms/:id, /groups/:id)
      `select *, ${timeKey('updated_at')} as k from chat_sessions where account_id = $1 and world_id = $2
          and not exists (select 1 from chat_rooms r where r.session_id = chat_sessions.id)
          and not exists (select 1 from chat_groups g where g.session_id = chat_sessions.id)${after ? ` and ${after}` : ''}
        order by updated_at desc, id desc limit $3`,
      params,
    );
    const page = keysetPage(rows, q.limit);
    return { sessions: page.rows.map((r) => ({ ...sessionView(r), state: undefined })), nextCursor: page.nextCursor };
  });

  app.get<{ Params: { id: string } }>('/api/sessions/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    return sessionPage(db, request.params.id, auth.account.id, parseHistoryPageQuery(request.query));
  });

  app.get<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/messages/:messageId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    return sessionMessage(db, request.params.id, request.params.messageId, auth.account.id);
  });

  app.delete<{ Params: { id: string } }>('/api/sessions/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    await db.query('delete from chat_sessions where id = $1 and account_id = $2', [request.params.id, auth.account.id]);
    histories.delete(request.params.id);
    // a room's members read it again, and find it gone
    await changedRoom(session);
    return { ok: true };
  });

  // Send: the user message is stored first (it survives any failure), then the reply streams as SSE.
  // Before the provider is called, one statement (@yumina/conversations' startTurn): the login of
  // the cookie, the session if that account owns it, its turn lock, both messages, the session with
  // its world's stamp, the account's billing preference, connection and persona, and what the
  // history cache lacks. The world's parsed definition is cached per process by its stamp;
  // completeTurn writes the reply and gives the lock back in one statement at the end.
  app.post<{ Params: { id: string } }>('/api/sessions/:id/messages', async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) throw notSignedIn();
    const body = parseWith(sendBody, request.body);
    const release = await admit(reply);
    const sessionId = request.params.id;
    const lock = randomUUID();
    const result = await startTurn(
      db,
      { tokenHash: hashToken(token), sessionId, lockToken: lock, leaseSeconds: ctx.config.limits.turnLeaseSeconds, content: body.content, expectedMessageCount: body.expectedMessageCount, userMessageId: newId('msg'), replyId: newId('msg') },
      histories,
    );
    if (result.status === 'unauthenticated') throw notSignedIn();
    // sliding expiry, as every signed-in request has it (../accounts/auth.ts)
    const renewed = await renewIfDue(db, result.login, ctx.config.auth.sessionTtlDays).catch(() => null);
    if (renewed) sendRenewedCookie(ctx, reply, token, renewed);
    if (result.status === 'not-found') throw new HttpError(404, 'NOT_FOUND', 'No such session.');
    if (result.status === 'busy') throw new HttpError(409, 'SESSION_BUSY', SESSION_BUSY_MESSAGE);
    if (result.status === 'stale') throw new HttpError(409, 'STALE_CONVERSATION', 'The conversation changed in another tab. Reload it before sending.');
    if (result.status === 'room') throw roomSessionRefusal();
    if (result.status === 'group') throw groupSessionRefusal();
    const { session, login } = result;
    learnLogin(ctx, request, login.accountId);
    const auth: TurnAuth = { account: { id: login.accountId, username: login.username, displayName: login.displayName } };
    // The account's preference, connection and persona came with the session (one statement).
    const reads: Promise<TurnReads> = worldForViewer(db, session.world_id, { accountId: auth.account.id }, session.world).then((version) => {
      const { billingPreference, connection, persona } = session.account;
      const metering = meteringOf(ctx, auth.account.id, billingPreference ?? 'auto', connection ? openConnection(ctx, connection) : null);
      // Usage rows of private calls are written by completeTurn with the reply (runGeneration
      // writes what a failed turn leaves); official calls write theirs with their charge.
      const usage: UsageRecord[] = [];
      return { world: version.world, metering: { ...metering, recordUsage: async (r) => void usage.push(r) }, persona: enginePersonaOf(persona), usage };
    });
    reads.catch(() => {}); // awaited in runGeneration; a failure there ends the turn as an error event
    let state: WorldState;
    try {
      // The session's current state: the last reply's, plus what interface actions and events did since.
      state = JSON.parse(result.state) as WorldState;
    } catch (err) {
      const shown = publicErrorOf(err);
      await markTurnFailed(ctx, { sessionId, replyId: result.replyId, fresh: true, code: shown.code, message: shown.message, lockToken: lock });
      throw err;
    }
    await runGeneration(
      request,
      reply,
      auth,
      session,
      { id: result.replyId, fresh: true },
      { history: historyOf(result.messages), userMessage: body.content, state },
      (out) => ({ content: out.result.displayText, raw: out.rawReply, swipes: [swipeOf(out)], active: 0 }),
      lock,
      reads,
      release,
    );
  });

  /** The last exchange (user message + reply) for regenerate and continue; releases the lock if refused. */
  async function lastExchange(auth: Authenticated, session: SessionRow, lock: string, refusal: [code: string, message: string]) {
    try {
      await settleStreamingReplies(db, session.id);
      const messages = await sessionMessages(db, session.id);
      const last = messages.at(-1);
      if (last?.role !== 'assistant' || messages.at(-2)?.role !== 'user') throw new HttpError(409, refusal[0], refusal[1]);
      const world = await playableWorld(db, session.world_id, auth.account.id);
      const user = messages.at(-2)!;
      const base = {
        history: historyOf(messages.slice(0, -2)),
        userMessage: user.content,
        // the state the original turn started from (stored with the player's message; older
        // messages without one: the state after the messages before it)
        state: user.state_snapshot ? (JSON.parse(user.state_snapshot) as WorldState) : snapshotOf(world, messages, messages.length - 2, session),
      };
      return { last, base };
    } catch (err) {
      await releaseTurnLock(ctx, session.id, lock);
      throw err;
    }
  }

  /**
   * A reply to the last message when it is the player's, left unanswered (its turn failed: the
   * failure is on it; or its reply was deleted): a new reply, from the state its turn started from.
   * Null when the last message is not the player's; releases the lock if refused.
   */
  async function answerLast(auth: Authenticated, session: SessionRow, lock: string) {
    try {
      await settleStreamingReplies(db, session.id);
      const messages = await sessionMessages(db, session.id);
      const last = messages.at(-1);
      if (last?.role !== 'user') return null;
      const world = await playableWorld(db, session.world_id, auth.account.id);
      const base = {
        history: historyOf(messages.slice(0, -1)),
        userMessage: last.content,
        state: last.state_snapshot ? (JSON.parse(last.state_snapshot) as WorldState) : snapshotOf(world, messages, messages.length - 1, session),
      };
      const id = newId('msg');
      await db.transaction(async (tx) => {
        await tx.query(`insert into chat_messages (id, session_id, position, role, content, status) values ($1, $2, $3, 'assistant', '', 'streaming')`, [
          id,
          session.id,
          last.position + 1,
        ]);
        await tx.query('update chat_sessions set message_count = $2, updated_at = now() where id = $1', [session.id, last.position + 2]);
      });
      return { target: { id, fresh: true }, base };
    } catch (err) {
      await releaseTurnLock(ctx, session.id, lock);
      throw err;
    }
  }

  /**
   * Regenerate the last reply: the earlier reply stays as a swipe. When the last message is the
   * player's, left unanswered (a failed turn's Retry), a reply to it is written.
   */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/regenerate', async (request, reply) => {
    const release = await admit(reply);
    const auth = await requireAuth(ctx, request, reply);
    learnLogin(ctx, request, auth.account.id);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    if (session.is_room) throw roomSessionRefusal();
    if (session.is_group) throw groupSessionRefusal();
    const lock = await lockSession(auth.account.id, session.id);
    const retry = await answerLast(auth, session, lock);
    if (retry) {
      await runGeneration(request, reply, auth, session, retry.target, retry.base, (out) => ({ content: out.result.displayText, raw: out.rawReply, swipes: [swipeOf(out)], active: 0 }), lock, undefined, release);
      return;
    }
    const { last, base } = await lastExchange(auth, session, lock, ['NOTHING_TO_REGENERATE', 'The last message is not a reply to regenerate.']);
    try {
      await db.query(`update chat_messages set status = 'streaming', error_message = null where id = $1`, [last.id]);
    } catch (err) {
      await releaseTurnLock(ctx, session.id, lock);
      throw err;
    }
    const previous = (JSON.parse(last.swipes) as Swipe[]).filter((s) => s.content !== '');
    // a reply a failure left (before failures stopped being kept as replies) is replaced as a new one
    await runGeneration(request, reply, auth, session, { id: last.id, fresh: last.status === 'failed' }, base, (out) => {
      const swipes = [...previous, swipeOf(out)];
      return { content: out.result.displayText, raw: out.rawReply, swipes, active: swipes.length - 1 };
    }, lock, undefined, release);
  });

  /** Continue the last reply where it stopped. */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/continue', async (request, reply) => {
    const release = await admit(reply);
    const auth = await requireAuth(ctx, request, reply);
    learnLogin(ctx, request, auth.account.id);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    if (session.is_room) throw roomSessionRefusal();
    if (session.is_group) throw groupSessionRefusal();
    const lock = await lockSession(auth.account.id, session.id);
    const { last, base } = await lastExchange(auth, session, lock, ['NOTHING_TO_CONTINUE', 'There is no reply to continue.']);
    await runGeneration(request, reply, auth, session, { id: last.id, fresh: false }, { ...base, prefix: last.raw_content ?? last.content }, (out) => {
      const swipes = JSON.parse(last.swipes) as Swipe[];
      const index = Math.min(last.active_swipe_index, Math.max(0, swipes.length - 1));
      swipes[index] = swipeOf(out);
      return { content: out.result.displayText, raw: out.rawReply, swipes, active: index };
    }, lock, undefined, release);
  });

  /** Stop a running generation (on whichever replica runs it). */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/stop', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownedSession(db, request.params.id, auth.account.id);
    running.get(request.params.id)?.abort(new Error('Stopped by the player'));
    await ctx.store.publish('chat:stop', request.params.id);
    // The lock goes with the stop, wherever the turn ran (or if nothing runs any more).
    await breakTurnLock(ctx, auth.account.id, request.params.id);
    return { ok: true };
  });

  /** Swipe the last reply left or right: its content and the session state follow the chosen alternative. */
  app.post<{ Params: { id: string; direction: string } }>('/api/sessions/:id/swipe/:direction', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    if (request.params.direction !== 'left' && request.params.direction !== 'right') throw new HttpError(404, 'NOT_FOUND', 'Swipe left or right.');
    const step = request.params.direction === 'left' ? -1 : 1;
    const session = await db.transaction(async (tx) => {
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
      return session;
    });
    await changedRoom(session);
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
    const session = await ownedSession(db, request.params.id, auth.account.id);
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
    await changedRoom(session);
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
    const lock = await lockSession(auth.account.id, session.id);
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
      await releaseTurnLock(ctx, session.id, lock);
    }
    await changedRoom(session);
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
    return { id, name: body.name, messageCount: session.message_count, createdAt: new Date().toISOString() };
  });

  app.post<{ Params: { id: string; checkpointId: string } }>('/api/sessions/:id/checkpoints/:checkpointId/restore', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    // ownership before the lock: another account gets 404 and never learns that the session is busy
    const owned = await ownedSession(db, request.params.id, auth.account.id);
    const lock = await lockSession(auth.account.id, request.params.id);
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
        // Later checkpoints saved messages that are now gone: they are removed (as a revert does), so
        // every checkpoint left restores exactly what it saved.
        await tx.query('delete from chat_checkpoints where session_id = $1 and message_count > $2', [session.id, cp.message_count]);
      });
    } finally {
      await releaseTurnLock(ctx, request.params.id, lock);
    }
    await changedRoom(owned);
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
