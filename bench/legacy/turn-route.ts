/**
 * bench/turn.bench.ts only: a copy of the send path as it was before the issue-24 rework of the
 * turn (containers/api/src/conversations/routes.ts `POST /api/sessions/:id/messages` with its
 * runGeneration, generate.ts, model.ts's readers, worlds/version.ts's `worldForViewer` and
 * ai/metering.ts's `meteringFor`), served at `POST /legacy/sessions/:id/messages` by a second app
 * on the same context (pools, store, secrets), so that both paths run interleaved in one run.
 * The turn lock is pinned too (./turn-lock.ts: the session lock plus its holder key, as it was).
 * Shared with the new path: the account readers (login session, billing balance,
 * private connection, persona, usage record: their named statements help both) and what is in
 * packages/ besides the provider client (token counting, history condensing, prompt assembly, the
 * engine's turn). The provider client is pinned too: bench/legacy/ai/ holds copies of
 * packages/ai's outbound.ts (guarded client, a new connection per call), sse.ts, chat.ts and
 * metered.ts as they were before the second round, so changes there show in the ratios.
 * Nothing but the bench imports it.
 */
import { cleanProviderText, condenseHistory, type MeteringContext, selectProvider } from '@yumina/ai';
import { meteredStream } from './ai/metered.ts';
import { acquireTurnLock, markReplyFailed, releaseTurnLock } from './turn-lock.ts';
import { balance } from '@yumina/billing';
import type { Queryable } from '@yumina/db';
import { crossSiteGuard, HttpError, parseWith, publicErrorOf } from '@yumina/http';
import { sharedTokenCounter } from '@yumina/tokens';
import { assemblePrompt, type HistoryMessage, runTurn, toProviderMessages, type WorldDefinition, type WorldState } from '@yumina/world';
import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../../containers/api/src/accounts/auth.ts';
import { privateConnection } from '../../containers/api/src/accounts/ai-connection.ts';
import { newId, SESSION_COOKIE } from '@yumina/accounts';
import { activePersona } from '../../containers/api/src/accounts/personas.ts';
import { creditGate, effectivePreference, usageRecorder } from '../../containers/api/src/ai/metering.ts';
import type { AppContext } from '../../containers/api/src/context.ts';
import { VERSION_COLUMNS, versionOf } from '../../containers/api/src/worlds/version.ts';

interface MessageRow {
  id: string;
  position: number;
  role: 'user' | 'assistant' | 'system';
  content: string;
  raw_content: string | null;
  status: 'complete' | 'streaming' | 'failed';
  error_message: string | null;
  state_changes: string;
  state_snapshot: string | null;
  swipes: string;
  active_swipe_index: number;
  model: string | null;
  token_count: number | null;
  generation_time_ms: number | null;
  compacted: boolean;
  attachments: string;
  created_at: Date;
  truncated: boolean;
}

interface SessionRow {
  id: string;
  world_id: string;
  seed: string;
  state: string;
  summary: string | null;
  memory?: string;
}

const sendBody = z.strictObject({
  content: z.string().trim().min(1, 'must not be empty').max(32_000),
  expectedMessageCount: z.number().int().min(0).optional(),
});

function messageView(m: MessageRow) {
  return {
    id: m.id,
    position: m.position,
    role: m.role,
    content: m.content,
    rawContent: m.raw_content ?? m.content,
    status: m.status,
    errorMessage: m.error_message,
    stateChanges: JSON.parse(m.state_changes) as unknown[],
    stateSnapshot: m.state_snapshot ? (JSON.parse(m.state_snapshot) as unknown) : null,
    swipes: (JSON.parse(m.swipes) as { content: string; snapshot: unknown }[]).map((s) => ({ content: s.content, snapshot: s.snapshot })),
    activeSwipeIndex: m.active_swipe_index,
    model: m.model,
    tokenCount: m.token_count,
    generationTimeMs: m.generation_time_ms,
    compacted: m.compacted,
    truncated: m.truncated,
    attachments: JSON.parse(m.attachments) as unknown[],
    createdAt: m.created_at.toISOString(),
  };
}

/** Today's SSE writer (containers/api/src/event-stream.ts before the rework): one socket write per event. */
function openEventStream(reply: FastifyReply) {
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  return {
    write(event: string, data: unknown) {
      if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
  };
}

async function ownedSession(db: Queryable, sessionId: string, accountId: string): Promise<SessionRow> {
  const { rows } = await db.query<SessionRow & Record<string, unknown>>('select * from chat_sessions where id = $1 and account_id = $2', [sessionId, accountId]);
  if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such session.');
  return rows[0];
}

async function playableWorld(db: Queryable, worldId: string, accountId: string): Promise<WorldDefinition> {
  const { rows } = await db.query(`select ${VERSION_COLUMNS} from worlds where id = $1`, [worldId]);
  const version = rows[0] ? versionOf(rows[0] as never, { accountId }) : null;
  if (!version) throw new HttpError(404, 'NOT_FOUND', 'No such world.');
  return version.world;
}

async function enginePersona(db: Queryable, accountId: string) {
  const persona = await activePersona(db, accountId);
  if (!persona) return null;
  return {
    name: persona.name,
    ...(persona.description.trim() ? { description: persona.description } : {}),
    ...(persona.appearance ? { appearance: persona.appearance } : {}),
    ...(persona.personality ? { personality: persona.personality } : {}),
    ...(persona.backstory ? { backstory: persona.backstory } : {}),
  };
}

async function meteringFor(ctx: AppContext, accountId: string): Promise<MeteringContext> {
  const [prefs, connection] = await Promise.all([balance(ctx.db.primary, accountId), privateConnection(ctx, accountId)]);
  const selection = selectProvider({
    preference: effectivePreference(prefs.preference, !!connection, !!ctx.config.ai.official),
    official: ctx.config.ai.official ?? null,
    privateConnection: connection,
    privateNetwork: ctx.config.ai.privateNetworkAccess,
  });
  return { accountId, selection, recordUsage: usageRecorder(ctx), credits: creditGate(ctx) };
}

async function generateTurn(
  ctx: AppContext,
  input: { accountId: string; accountName: string | null; sessionId: string; seed: string; world: WorldDefinition; state: WorldState; history: HistoryMessage[]; userMessage: string; summary: string | null; memory: string | null; signal: AbortSignal; onDelta(text: string): void },
) {
  const started = Date.now();
  const { world } = input;
  const settings = world.settings;
  const counter = sharedTokenCounter();
  const metering = await meteringFor(ctx, input.accountId);
  const model = metering.selection.defaultModel ?? ctx.config.ai.official?.defaultModel ?? 'default';
  const budget = Math.max(1, settings.maxContext - settings.maxTokens);
  const condensed = await condenseHistory(counter, input.history, { budget, model, summarization: null, signal: input.signal });
  const persona = await enginePersona(ctx.db.primary, input.accountId);
  const common = { now: new Date(), seed: input.seed, sessionId: input.sessionId, persona, accountName: input.accountName, model };
  const history: HistoryMessage[] = [...condensed.kept, { role: 'user', content: input.userMessage }];
  const prompt = assemblePrompt(world, input.state, {
    ...common,
    history,
    summary: condensed.summary?.summary ?? input.summary ?? null,
    memory: input.memory ?? null,
    countTokens: (text) => counter.countText(text, model),
    budgetTokens: budget,
  });
  const messages = toProviderMessages(prompt.messages) as { role: 'system' | 'user' | 'assistant'; content: string }[];
  let reply = '';
  let tokensOut = 0;
  let truncated = false;
  for await (const event of meteredStream(
    metering,
    {
      model,
      messages,
      maxTokens: settings.maxTokens,
      temperature: settings.temperature,
      extraBody: { top_p: settings.topP, frequency_penalty: settings.frequencyPenalty, presence_penalty: settings.presencePenalty },
    },
    { purpose: 'chat', signal: input.signal, maxReplyBytes: ctx.config.ai.replyMaxBytes },
  )) {
    if (event.type === 'delta') {
      reply += event.text;
      input.onDelta(event.text);
    } else if (event.type === 'done') {
      tokensOut = event.result.usage?.tokensOut ?? 0;
      truncated = event.result.truncated === true;
    }
  }
  reply = cleanProviderText(reply);
  const result = runTurn(world, input.state, { ...common, userMessage: input.userMessage, aiReply: reply, skippedEntries: prompt.skippedEntries });
  return { summary: condensed.summary?.summary ?? null, rawReply: reply, result, model, tokenCount: tokensOut || counter.countText(reply, model), generationTimeMs: Date.now() - started, truncated };
}

/** Today's `POST /api/sessions/:id/messages`, at `/legacy/sessions/:id/messages`. */
export async function legacyTurnRoute(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  // what buildApp puts before the API's routes (containers/api/src/app.ts)
  await app.register(fastifyCookie);
  app.addHook('preHandler', crossSiteGuard({ cookieName: SESSION_COOKIE, allowedOrigins: [ctx.config.publicOrigin] }));
  app.post<{ Params: { id: string } }>('/legacy/sessions/:id/messages', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(sendBody, request.body);
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const lock = await acquireTurnLock(ctx, session.id);
    let target: MessageRow;
    let messages: MessageRow[];
    let state: WorldState;
    try {
      await db.query(`update chat_messages set status = 'failed', error_message = $2 where session_id = $1 and status = 'streaming'`, [session.id, 'The reply was interrupted before it was finished.']);
      messages = (await db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where session_id = $1 order by position', [session.id])).rows;
      if (body.expectedMessageCount !== undefined && body.expectedMessageCount !== messages.length) {
        throw new HttpError(409, 'STALE_CONVERSATION', 'The conversation changed in another tab. Reload it before sending.');
      }
      const position = messages.length;
      target = await db.transaction(async (tx) => {
        await tx.query(`insert into chat_messages (id, session_id, position, role, content) values ($1, $2, $3, 'user', $4)`, [newId('msg'), session.id, position, body.content]);
        const { rows } = await tx.query<MessageRow & Record<string, unknown>>(
          `insert into chat_messages (id, session_id, position, role, content, status) values ($1, $2, $3, 'assistant', '', 'streaming') returning *`,
          [newId('msg'), session.id, position + 1],
        );
        await tx.query('update chat_sessions set message_count = $2, updated_at = now() where id = $1', [session.id, position + 2]);
        return rows[0]!;
      });
    } catch (err) {
      await releaseTurnLock(ctx, session.id, lock);
      throw err;
    }
    try {
      state = JSON.parse((await ownedSession(db, session.id, auth.account.id)).state) as WorldState;
    } catch (err) {
      await releaseTurnLock(ctx, session.id, lock);
      await markReplyFailed(ctx, target.id, '', publicErrorOf(err).message);
      throw err;
    }
    const history = messages.filter((m) => m.status === 'complete' && m.role !== 'system').map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content }));
    const controller = new AbortController();
    request.raw.on('close', () => {
      if (!reply.raw.writableEnded) controller.abort(new Error('The client went away'));
    });
    const stream = openEventStream(reply);
    stream.write('start', { messageId: target.id });
    let partial = '';
    let locked = true;
    try {
      const world = await playableWorld(db, session.world_id, auth.account.id);
      const out = await generateTurn(ctx, {
        accountId: auth.account.id,
        accountName: auth.account.username,
        sessionId: session.id,
        seed: session.seed,
        world,
        state,
        history,
        userMessage: body.content,
        summary: session.summary,
        memory: session.memory ?? null,
        signal: controller.signal,
        onDelta: (text) => {
          partial += text;
          stream.write('delta', { text });
        },
      });
      const swipes = [{ content: out.result.displayText, rawContent: out.rawReply, snapshot: out.result.state, stateChanges: out.result.stateChanges }];
      const stateText = JSON.stringify(out.result.state);
      await db.transaction(async (tx) => {
        await tx.query(
          `update chat_messages set content = $2, raw_content = $3, status = 'complete', error_message = null, state_changes = $4,
                  state_snapshot = $5, swipes = $6, active_swipe_index = $7, model = $8, token_count = $9, generation_time_ms = $10, truncated = $11
            where id = $1`,
          [target.id, out.result.displayText, out.rawReply, JSON.stringify(out.result.stateChanges), stateText, JSON.stringify(swipes), 0, out.model, out.tokenCount, out.generationTimeMs, out.truncated],
        );
        await tx.query('update chat_sessions set state = $2, summary = coalesce($3, summary), updated_at = now() where id = $1', [session.id, stateText, out.summary]);
      });
      locked = false;
      await releaseTurnLock(ctx, session.id, lock);
      stream.write('done', {
        message: messageView((await db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where id = $1', [target.id])).rows[0]!),
        state: out.result.state,
        notifications: out.result.notifications,
        audioCommands: out.result.audioCommands,
        aiRequests: out.result.aiRequests,
        skippedEntries: out.result.skippedEntries,
      });
    } catch (err) {
      if (locked) {
        locked = false;
        await releaseTurnLock(ctx, session.id, lock);
      }
      const shown = publicErrorOf(err);
      request.log.warn({ err, sessionId: session.id, messageId: target.id }, 'turn failed');
      await markReplyFailed(ctx, target.id, cleanProviderText(partial), shown.message);
      stream.write('error', { ...shown, stopped: false, requestId: request.id });
    } finally {
      if (locked) await releaseTurnLock(ctx, session.id, lock);
      if (!reply.raw.writableEnded) reply.raw.end();
    }
  });
}
