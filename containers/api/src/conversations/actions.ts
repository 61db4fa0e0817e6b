/**
 * What a world's interface (and the default chat) does between turns, on the server: interface
 * actions (`executeAction`: the world's `action` rule triggers and reactions), custom reaction
 * events (`spatial:zone-enter` and the like), `setVariable` (session or player-global scope),
 * `injectContext` (one-shot context for the next prompt), `clearPendingChoices`, session memory (prompt step 9), and the
 * player's model and provider choice in this world (`setModel`, `setPreferredProvider`). Each change to a
 * session's state runs under the session's lock, in one transaction, and answers the new state
 * with what the engine said should happen (notifications, audio commands, AI requests).
 */
import { balance } from '@yumina/billing';
import { HttpError, parseWith } from '@yumina/http';
import { isPlatformId } from '@yumina/sandbox';
import { dispatchEvents, normalizeState, type WorldDefinition, type WorldEvent, type WorldState } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Authenticated } from '@yumina/accounts';
import { requireAuth } from '../accounts/auth.ts';
import { effectivePreference, worldAiChoice } from '../ai/metering.ts';
import type { AppContext } from '../context.ts';
import { canPlay, changesForViewer, type SessionAccess, sessionAccess, sessionMembers, stateForViewer } from '@yumina/conversations';
import { emitRoomEvent } from '../rooms/room-bus.ts';
import { ownedSession, playableWorld } from './model.ts';
import { enginePersona } from './persona.ts';
import { acquireTurnLock, releaseTurnLock } from './turn-lock.ts';

const MAX_MEMORY = 20_000;
/** Event types the engine emits itself; the interface may not forge them. */
const RESERVED_EVENTS = new Set(['message:user', 'message:ai', 'turn:complete', 'state:changed', 'session:start', 'action']);
/** World-scoped per player: global variables live in world storage under this key prefix. */
export const GLOBAL_VARIABLE_PREFIX = 'global:';

const actionId = z.string().min(1).max(200).regex(/^[\w.:-]+$/, 'letters, digits and . _ : - only');
const eventBody = z
  .looseObject({
    type: z
      .string()
      .max(100)
      .regex(/^[a-z][\w-]*:[\w-]+$/, 'a namespaced event type such as spatial:zone-enter')
      .refine((type) => !RESERVED_EVENTS.has(type), 'is an event the engine emits itself'),
  })
  .refine((event) => JSON.stringify(event).length <= 16_000, 'the event is too large');
const variableBody = z
  .strictObject({
    value: z.unknown().refine((v) => v !== undefined && JSON.stringify(v).length <= 64_000, 'must be a JSON value up to 64 KB'),
    scope: z.enum(['session', 'global']).default('session'),
    /** In a room: the player (account id) the value is for alone (docs/ROOMS.md). */
    targetUserId: z.string().regex(/^acc_[A-Za-z0-9_-]{1,64}$/, 'is not an account id').optional(),
  })
  .refine((b) => !(b.targetUserId && b.scope === 'global'), { message: 'a global variable is already per player; targetUserId goes with scope "session"', path: ['targetUserId'] });
const contextBody = z.strictObject({ message: z.string().trim().min(1).max(8_000), role: z.enum(['system', 'user']).default('system') });
const memoryBody = z.strictObject({ memory: z.string().max(MAX_MEMORY) });
const modelName = z.string().trim().min(1).max(200);
const modelBody = z.strictObject({ model: modelName, worldId: z.string().refine((v) => isPlatformId(v, 'world'), 'is not a world id').optional() });
const worldModelBody = z.strictObject({ model: modelName });
const providerBody = z.strictObject({
  provider: z.enum(['official', 'private']),
  /** The player said yes, in the platform's own page, to this world's switch to credits. */
  consent: z.literal(true).optional(),
});

export interface DispatchAnswer {
  state: WorldState;
  stateChanges: unknown[];
  notifications: unknown[];
  audioCommands: unknown[];
  aiRequests: unknown[];
  firedRules: string[];
  firedReactions: string[];
}

export async function playerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  /**
   * Runs `events` against the session's current state (after `prepare`, which may change it first)
   * under the session's lock, and stores the result in one transaction. In a room any member who
   * plays may (the host's world version, the host's lock); every member hears of the new state,
   * each with their own per-player values only.
   */
  async function dispatch(
    auth: Authenticated,
    sessionId: string,
    events: (state: WorldState, world: WorldDefinition) => WorldEvent[],
    prepare?: (state: WorldState, world: WorldDefinition, access: SessionAccess) => unknown[],
  ): Promise<DispatchAnswer> {
    const access = await sessionAccess(db, sessionId, auth.account.id);
    if (!access) throw new HttpError(404, 'NOT_FOUND', 'No such session.');
    if (!canPlay(access.role)) throw new HttpError(403, 'SPECTATOR', 'Spectators read along; they cannot act in the room.');
    const owner = access.room?.hostAccountId ?? auth.account.id;
    const lock = await acquireTurnLock(ctx, owner, sessionId);
    let answer: DispatchAnswer;
    try {
      const persona = await enginePersona(db, auth.account.id);
      answer = await db.transaction(async (tx) => {
        const session = await ownedSession(tx, sessionId, owner, true);
        const world = await playableWorld(tx, session.world_id, owner);
        const state = normalizeState(world as never, JSON.parse(session.state) as WorldState);
        const direct = prepare?.(state, world, access) ?? [];
        const result = dispatchEvents(world as never, state, events(state, world), {
          now: new Date(),
          seed: session.seed,
          sessionId: session.id,
          persona,
          accountName: auth.account.displayName,
        });
        await tx.query('update chat_sessions set state = $2, updated_at = now() where id = $1', [session.id, JSON.stringify(result.state)]);
        return {
          state: result.state,
          stateChanges: [...direct, ...result.stateChanges],
          notifications: result.notifications,
          audioCommands: result.audioCommands,
          aiRequests: result.aiRequests,
          firedRules: result.firedRules.map((r) => r.ruleId),
          firedReactions: result.firedReactions.map((r) => r.reactionId),
        };
      });
    } finally {
      await releaseTurnLock(ctx, sessionId, lock);
    }
    if (!access.room) return answer;
    await emitRoomEvent(ctx.store, sessionId, 'state', { state: answer.state, stateChanges: answer.stateChanges, by: access.participant?.id ?? null }).catch((err: unknown) =>
      ctx.log.warn({ err, sessionId }, 'room not told of a state change'),
    );
    return { ...answer, state: stateForViewer(answer.state, auth.account.id), stateChanges: changesForViewer(answer.stateChanges, auth.account.id) };
  }

  /** executeAction(actionId): the world's `action` rule triggers and reactions fire. */
  app.post<{ Params: { id: string; actionId: string } }>('/api/sessions/:id/actions/:actionId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const id = parseWith(actionId, request.params.actionId, 'actionId');
    return dispatch(auth, request.params.id, () => [{ type: 'action', actionId: id }]);
  });

  /** A custom reaction event from the interface, such as {type: 'spatial:zone-enter', zone: 'forest'}. */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/events', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const event = parseWith(eventBody, request.body) as WorldEvent;
    return dispatch(auth, request.params.id, () => [event]);
  });

  /**
   * setVariable(id, value, {scope}): a session variable changes (rules and reactions see the
   * `state:changed` event); a global one is kept per player and world, across sessions.
   */
  app.put<{ Params: { id: string; variableId: string } }>('/api/sessions/:id/variables/:variableId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const variableId = parseWith(actionId, request.params.variableId, 'variableId');
    const body = parseWith(variableBody, request.body);
    if (body.scope === 'global') {
      const session = await ownedSession(db, request.params.id, auth.account.id).catch(async (err: unknown) => {
        // a room's member keeps their own global values of its world too
        const member = await sessionAccess(db, request.params.id, auth.account.id);
        if (!member?.room || !canPlay(member.role)) throw err;
        return { world_id: member.room.worldId };
      });
      await db.query(
        `insert into world_storage (account_id, world_id, key, value) values ($1, $2, $3, $4)
         on conflict (account_id, world_id, key) do update set value = excluded.value, updated_at = now()`,
        [auth.account.id, session.world_id, `${GLOBAL_VARIABLE_PREFIX}${variableId}`, JSON.stringify(body.value)],
      );
      return { globalVariables: await globalVariables(auth.account.id, session.world_id) };
    }
    let change: { variableId: string; oldValue: unknown; newValue: unknown } | null = null;
    // a room's members (by account), whose own values the host's interface may set
    const roomPlayers = new Set<string>();
    if (body.targetUserId) for (const m of await sessionMembers(db, request.params.id)) if (m.accountId) roomPlayers.add(m.accountId);
    return dispatch(
      auth,
      request.params.id,
      // a per-player value is the interface's and its player's: rules and reactions see the shared state
      () => (change && !body.targetUserId && JSON.stringify(change.oldValue) !== JSON.stringify(change.newValue) ? [{ type: 'state:changed', ...change }] : []),
      (state, world, access) => {
        const variable = world.variables.find((v) => v.id === variableId);
        if (!variable) throw new HttpError(404, 'NOT_FOUND', `This world has no variable "${variableId}".`);
        const kind = variable.type === 'json' ? null : variable.type;
        if (kind && (typeof body.value !== kind || (kind === 'number' && !Number.isFinite(body.value))))
          throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: value: "${variableId}" holds a ${kind}.`);
        // Numbers stay within the variable's bounds, as the engine keeps them.
        const value =
          kind === 'number' ? Math.min(variable.max ?? Infinity, Math.max(variable.min ?? -Infinity, body.value as number)) : body.value;
        const target = body.targetUserId;
        if (target) {
          if (!access.room) throw new HttpError(400, 'INVALID_REQUEST', 'Invalid request body: targetUserId: only a room has players of its own.');
          const self = target === auth.account.id;
          if (!self && access.role !== 'host') throw new HttpError(403, 'HOST_ONLY', "Only the host's interface sets another player's values.");
          if (!self && !roomPlayers.has(target)) throw new HttpError(404, 'NOT_FOUND', 'No such player in this room.');
          const values = (state.playerVariables ??= {});
          const own = (values[target] ??= {});
          change = { variableId, oldValue: Object.hasOwn(own, variableId) ? own[variableId] : state.variables[variableId], newValue: value };
          own[variableId] = value;
          return [{ ...change, targetUserId: target, source: 'interface' }];
        }
        change = { variableId, oldValue: state.variables[variableId], newValue: value };
        state.variables[variableId] = value;
        return [{ ...change, source: 'interface' }];
      },
    );
  });

  /** injectContext(message, {role}): one-shot context the next prompt carries (step 11). */
  app.post<{ Params: { id: string } }>('/api/sessions/:id/context', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(contextBody, request.body);
    return dispatch(
      auth,
      request.params.id,
      () => [],
      (state) => {
        if (state.pendingContext.length >= 20) throw new HttpError(409, 'TOO_MUCH_CONTEXT', 'At most 20 context messages can wait for the next reply.');
        state.pendingContext.push({ role: body.role, content: body.message, source: 'interface' });
        return [];
      },
    );
  });

  /**
   * clearPendingChoices(): the choices the latest reply offered are no longer pending (stored with
   * the session's state, so a reload does not bring them back). Answers like an action.
   */
  app.delete<{ Params: { id: string } }>('/api/sessions/:id/choices', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    return dispatch(
      auth,
      request.params.id,
      () => [],
      (state) => {
        state.pendingChoices = [];
        return [];
      },
    );
  });

  /** Session memory (prompt step 9): what the player wants the story to keep in mind. */
  app.put<{ Params: { id: string } }>('/api/sessions/:id/memory', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(memoryBody, request.body);
    await ownedSession(db, request.params.id, auth.account.id);
    await db.query('update chat_sessions set memory = $2, updated_at = now() where id = $1 and account_id = $3', [request.params.id, body.memory, auth.account.id]);
    return { memory: body.memory };
  });

  async function globalVariables(accountId: string, worldId: string): Promise<Record<string, unknown>> {
    const { rows } = await db.query<{ key: string; value: string }>(
      `select key, value from world_storage where account_id = $1 and world_id = $2 and key like $3 order by key`,
      [accountId, worldId, `${GLOBAL_VARIABLE_PREFIX}%`],
    );
    const out: Record<string, unknown> = {};
    for (const row of rows) {
      try {
        out[row.key.slice(GLOBAL_VARIABLE_PREFIX.length)] = JSON.parse(row.value);
      } catch {
        out[row.key.slice(GLOBAL_VARIABLE_PREFIX.length)] = row.value;
      }
    }
    return out;
  }

  /**
   * What the player page needs besides the session: the player's global variables for this world,
   * the selected model, the preferred provider and the plan. The provider and model are what a turn
   * in this world uses: the world's interface choices for the player (world_ai_choices) over the
   * account's.
   */
  app.get<{ Params: { worldId: string } }>('/api/worlds/:worldId/player', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const [globals, billing, connection, choice] = await Promise.all([
      globalVariables(auth.account.id, request.params.worldId),
      balance(db, auth.account.id),
      db.query<{ default_model: string | null; private_enabled: boolean }>('select default_model, private_enabled from ai_connections where account_id = $1', [
        auth.account.id,
      ]),
      worldAiChoice(ctx, auth.account.id, request.params.worldId),
    ]);
    // The provider a turn would use now: 'auto' without a connection of the player's is the platform's credits.
    const hasConnection = connection.rows[0]?.private_enabled === true;
    const preference = effectivePreference(choice.provider ?? billing.preference, hasConnection, !!ctx.config.ai.official) === 'official' ? 'official' : 'private';
    const ownModel = choice.model ?? connection.rows[0]?.default_model ?? null;
    const selectedModel = preference === 'private' ? ownModel : (ctx.config.ai.official?.defaultModel ?? ownModel);
    return { globalVariables: globals, selectedModel, preferredProvider: preference, userPlan: billing.plan };
  });

  /**
   * The platform's own model picker: the model the player's own connection writes with, account-wide.
   * On a world's page (`worldId`) the player's pick there also drops what that world's interface
   * chose, so that the pick is what the next turn uses.
   */
  app.put('/api/player/model', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(modelBody, request.body);
    const { rowCount } = await db.query('update ai_connections set default_model = $2, updated_at = now() where account_id = $1', [auth.account.id, body.model]);
    if (!rowCount) throw new HttpError(409, 'NO_CONNECTION', 'Connect your own AI provider in Settings to choose a model.');
    if (body.worldId) await db.query('update world_ai_choices set model = null, updated_at = now() where account_id = $1 and world_id = $2', [auth.account.id, body.worldId]);
    return { selectedModel: body.model };
  });

  /** A world's interface choices for the player (setModel, setPreferredProvider): stored for this world alone. */
  async function chooseForWorld(accountId: string, worldId: string, choice: { provider?: 'official' | 'private'; model?: string }): Promise<void> {
    await playableWorld(db, worldId, accountId); // a world the player can open, or 404
    await db.query(
      `insert into world_ai_choices (account_id, world_id, provider, model) values ($1, $2, $3, $4)
       on conflict (account_id, world_id) do update
         set provider = coalesce(excluded.provider, world_ai_choices.provider), model = coalesce(excluded.model, world_ai_choices.model), updated_at = now()`,
      [accountId, worldId, choice.provider ?? null, choice.model ?? null],
    );
  }

  /** setModel(id) from a world's interface: the model of the player's own connection, in this world only. */
  app.put<{ Params: { worldId: string } }>('/api/worlds/:worldId/player/model', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(worldModelBody, request.body);
    const { rows } = await db.query('select 1 from ai_connections where account_id = $1', [auth.account.id]);
    if (!rows[0]) throw new HttpError(409, 'NO_CONNECTION', 'Connect your own AI provider in Settings to choose a model.');
    await chooseForWorld(auth.account.id, request.params.worldId, { model: body.model });
    return { selectedModel: body.model };
  });

  /**
   * setPreferredProvider from a world's interface, for this world only: 'private' needs a
   * connection of the player's; 'official' the platform's key and, when the world's turns would
   * move from the player's own connection to credits, the player's consent: the first call answers
   * `consentRequired`, the platform's page asks the player (web/src/player/sandbox-bridge.ts) and
   * calls again with `consent: true` only after a yes.
   */
  app.put<{ Params: { worldId: string } }>('/api/worlds/:worldId/player/provider', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(providerBody, request.body);
    const { worldId } = request.params;
    const [connection, billing, choice] = await Promise.all([
      db.query<{ private_enabled: boolean }>('select private_enabled from ai_connections where account_id = $1', [auth.account.id]),
      balance(db, auth.account.id),
      worldAiChoice(ctx, auth.account.id, worldId),
    ]);
    if (body.provider === 'official') {
      if (!ctx.config.ai.official) return { ok: false, error: 'This server has no official AI provider.' };
      const now = effectivePreference(choice.provider ?? billing.preference, connection.rows[0]?.private_enabled === true, true);
      if (now !== 'official' && !body.consent)
        return { ok: false, consentRequired: true, error: "The player's consent is needed before this world's turns spend credits." };
    }
    if (body.provider === 'private' && !connection.rows[0]) return { ok: false, error: 'Connect your own AI provider in Settings first.' };
    await chooseForWorld(auth.account.id, worldId, { provider: body.provider });
    return { ok: true, provider: body.provider };
  });
}
