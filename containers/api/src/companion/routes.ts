import { privateConnectionUsable } from '@yumina/ai';
import {
  acceptQuote,
  buildCompanionMessages,
  buildPromptContext,
  COMPANION_LIMITS,
  generationRequestSchema,
  NOTEBOOK_BOUNDS,
  type NotebookMutation,
  type NotebookRequest,
  notebookRequestSchema,
  parseCompanionReply,
  preferencesRequestSchema,
} from '@yumina/companion';
import type { Config } from '@yumina/config';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../accounts/auth.ts';
import { type PrivateConnection, privateConnection } from '../accounts/ai-connection.ts';
import type { AppContext } from '../context.ts';
import { whenClientGone } from '../event-stream.ts';
import { mutateNotebook, readNotebook } from './notebook-store.ts';
import { readPreferences, writePreferences } from './preferences.ts';
import { companionCompletion } from './provider.ts';
import { claimScope, scopeStillCurrent } from './scope.ts';
import { provisionNotebookTable } from './table.ts';

/**
 * The companion routes of seed 001 §4 behind the game auth guard (platform login):
 *   GET  /api/game/npc/companion/config    what the panel needs (account id, enabled, model, limits)
 *   POST /api/game/npc/companion           one reply from the player's private AI connection
 *   GET  /api/game/npc/companion/notebook  the notebook, for the panel
 *   POST /api/game/npc/companion/notebook  visits, introduction markers, notes, reset (revision-checked)
 *   PUT  /api/game/npc/companion/preferences  occasional visits / proactive comments, per account
 */

export interface CompanionRouteOptions {
  /** Overrides the configuration's GAME_COMPANION_DISABLED. */
  disabled?: boolean;
}

/** GAME_COMPANION_DISABLED=1 as parsed by packages/config (`companion.disabled`), when present. */
export function companionDisabledByConfig(config: Config): boolean {
  const c = config as Config & { companion?: { disabled?: boolean }; game?: { companionDisabled?: boolean } };
  return c.companion?.disabled === true || c.game?.companionDisabled === true;
}

const SETTINGS_PATH = '/app/settings#ai-config';
const MODEL_BROWSER_PATH = '/app/models';
const PREFERENCE_WRITES_PER_MINUTE = 30;
/** A slot outlives the 20 s deadline a little, and expires on its own if a process dies holding it. */
const SLOT_TTL_MS = COMPANION_LIMITS.generationDeadlineMs + 10_000;

async function gameAuth(ctx: AppContext, request: FastifyRequest, reply: FastifyReply) {
  const auth = await authenticate(ctx, request, reply);
  if (!auth) throw new HttpError(401, 'UNAUTHENTICATED', 'Adventure mode needs a platform account. Sign in to continue.');
  return auth;
}

async function loadConnection(ctx: AppContext, accountId: string): Promise<PrivateConnection | null> {
  try {
    return await privateConnection(ctx, accountId);
  } catch (err) {
    // A key sealed under another server key cannot be used; treat as not configured.
    if ((err as { code?: unknown }).code === 'SECRETS_KEY_MISMATCH' || (err as Error).name === 'SecretsKeyMismatchError') return null;
    throw err;
  }
}

async function ensureTable(ctx: AppContext): Promise<void> {
  if (!(await provisionNotebookTable(ctx))) {
    throw new HttpError(503, 'NOTEBOOK_UNAVAILABLE', 'The companion notebook is not available yet. Please try again in a moment.', { 'retry-after': '5' });
  }
}

export async function companionRoutes(app: FastifyInstance, ctx: AppContext, options: CompanionRouteOptions = {}): Promise<void> {
  const disabled = () => options.disabled ?? companionDisabledByConfig(ctx.config);
  const refuseWhenDisabled = () => {
    if (disabled()) throw new HttpError(403, 'COMPANION_DISABLED', 'The companion is turned off on this server. Adventure mode still works.');
  };

  // Provisioning after the port is bound: never delays start-up; a deferral is retried on a notebook request.
  app.addHook('onListen', async () => {
    void provisionNotebookTable(ctx);
  });

  app.get('/api/game/npc/companion/config', async (request, reply) => {
    const auth = await gameAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const connection = await loadConnection(ctx, auth.account.id);
    const usable = privateConnectionUsable(connection);
    return {
      accountId: auth.account.id,
      enabled: !disabled(),
      provider: { configured: connection !== null, usable, privateEnabled: connection?.privateEnabled ?? false },
      model: connection?.defaultModel ?? null,
      preferences: await readPreferences(ctx, auth.account.id),
      settingsPath: SETTINGS_PATH,
      modelBrowserPath: MODEL_BROWSER_PATH,
      limits: {
        generationBodyMaxBytes: COMPANION_LIMITS.generationBodyMaxBytes,
        notebookBodyMaxBytes: COMPANION_LIMITS.notebookBodyMaxBytes,
        generationsPerMinute: COMPANION_LIMITS.generationsPerMinute,
        activeGenerationsPerAccount: COMPANION_LIMITS.activeGenerationsPerAccount,
        notebookRequestsPerMinute: COMPANION_LIMITS.notebookRequestsPerMinute,
        generationDeadlineMs: COMPANION_LIMITS.generationDeadlineMs,
        outputTokens: COMPANION_LIMITS.outputTokens,
        messageMaxChars: 2_000,
        notebook: NOTEBOOK_BOUNDS,
      },
    };
  });

  app.post('/api/game/npc/companion', { bodyLimit: COMPANION_LIMITS.generationBodyMaxBytes }, async (request, reply) => {
    const auth = await gameAuth(ctx, request, reply);
    const accountId = auth.account.id;
    refuseWhenDisabled();
    const body = parseWith(generationRequestSchema, request.body);
    if (body.accountId !== accountId) {
      throw new HttpError(403, 'ACCOUNT_MISMATCH', 'This game tab belongs to another account. Reload the game to continue.');
    }
    // The private provider is checked before anything else can call out; there is no fallback.
    const connection = await loadConnection(ctx, accountId);
    if (!privateConnectionUsable(connection)) {
      throw new HttpError(409, 'PRIVATE_PROVIDER_REQUIRED', `Set up and enable your own AI connection at ${SETTINGS_PATH} to talk with the companion.`);
    }
    const slotKey = `companion:active:${accountId}`;
    const slot = await ctx.store.acquireSlot(slotKey, COMPANION_LIMITS.activeGenerationsPerAccount, SLOT_TTL_MS);
    if (!slot) throw new HttpError(429, 'GENERATION_ACTIVE', 'The companion is still answering your previous message.', { 'retry-after': '2' });
    try {
      const limit = await ctx.store.rateLimit(`companion:generate:${accountId}`, COMPANION_LIMITS.generationsPerMinute, 60);
      if (!limit.allowed) {
        throw new HttpError(429, 'RATE_LIMITED', 'Too many companion messages; wait a moment.', { 'retry-after': String(limit.retryAfter) });
      }
      const verdict = await claimScope(ctx.store, accountId, body);
      if (verdict !== 'current') {
        throw new HttpError(409, 'STALE_REQUEST', `This request belongs to an earlier ${verdict === 'stale-run' ? 'run' : verdict === 'stale-board' ? 'board' : 'request'}; it was not sent.`);
      }
      await ensureTable(ctx);
      // Read, then wait for the model with no transaction open, then write against what was read.
      const notebook = await readNotebook(ctx, accountId);
      const base = body.notebook ?? { revision: notebook.revision, epoch: notebook.epoch };
      const messages = buildCompanionMessages(buildPromptContext(body.context, notebook), body.message);
      const model = body.model ?? connection.defaultModel;

      const abort = new AbortController();
      const stopListening = whenClientGone(reply, () => abort.abort(new Error('client went away')));
      let raw: string;
      try {
        raw = await companionCompletion(connection, model, messages, { signal: abort.signal, ...ctx.config.ai.deadlines }, ctx.config.ai.privateNetworkAccess);
      } finally {
        stopListening();
      }
      const parsed = parseCompanionReply(raw);
      if (!parsed.reply) throw new HttpError(502, 'AI_EMPTY_REPLY', 'The model sent an empty reply.');
      const quote = parsed.quote === null ? null : acceptQuote(parsed.quote, body.message);

      // A reply for a board that was replaced meanwhile is answered but not remembered.
      let saved = false;
      let notebookState = { revision: notebook.revision, epoch: notebook.epoch };
      if (await scopeStillCurrent(ctx.store, accountId, body)) {
        const { level, cycle } = body.context;
        const mutations: NotebookMutation[] = [
          {
            op: 'turns',
            turns: [
              ...(body.proactive ? [] : [{ role: 'player' as const, text: body.message, level, cycle }]),
              { role: 'companion' as const, text: parsed.reply, level, cycle },
            ],
          },
        ];
        if (quote?.accepted) mutations.push({ op: 'statement', text: quote.text, level, cycle });
        const write = await mutateNotebook(ctx, accountId, mutations, base, Date.now());
        saved = write.status === 'applied';
        notebookState = { revision: write.notebook.revision, epoch: write.notebook.epoch };
      }
      reply.header('cache-control', 'no-store');
      return {
        requestId: body.requestId,
        runId: body.runId,
        boardId: body.boardId,
        reply: parsed.reply,
        model,
        remembered: quote?.accepted ? quote.text : null,
        notebook: { saved, ...notebookState },
      };
    } finally {
      await ctx.store.releaseSlot(slotKey, slot).catch(() => {});
    }
  });

  app.put('/api/game/npc/companion/preferences', { bodyLimit: 1024 }, async (request, reply) => {
    const auth = await gameAuth(ctx, request, reply);
    const limit = await ctx.store.rateLimit(`companion:preferences:${auth.account.id}`, PREFERENCE_WRITES_PER_MINUTE, 60);
    if (!limit.allowed) {
      throw new HttpError(429, 'RATE_LIMITED', 'Too many preference changes; wait a moment.', { 'retry-after': String(limit.retryAfter) });
    }
    const change = parseWith(preferencesRequestSchema, request.body);
    reply.header('cache-control', 'no-store');
    return { preferences: await writePreferences(ctx, auth.account.id, change) };
  });

  app.get('/api/game/npc/companion/notebook', async (request, reply) => {
    const auth = await gameAuth(ctx, request, reply);
    refuseWhenDisabled();
    await ensureTable(ctx);
    reply.header('cache-control', 'no-store');
    return { notebook: await readNotebook(ctx, auth.account.id) };
  });

  app.post('/api/game/npc/companion/notebook', { bodyLimit: COMPANION_LIMITS.notebookBodyMaxBytes }, async (request, reply) => {
    const auth = await gameAuth(ctx, request, reply);
    refuseWhenDisabled();
    const limit = await ctx.store.rateLimit(`companion:notebook:${auth.account.id}`, COMPANION_LIMITS.notebookRequestsPerMinute, 60);
    if (!limit.allowed) {
      throw new HttpError(429, 'RATE_LIMITED', 'Too many notebook requests; wait a moment.', { 'retry-after': String(limit.retryAfter) });
    }
    const body = parseWith(notebookRequestSchema, request.body) as NotebookRequest;
    await ensureTable(ctx);
    const write = await mutateNotebook(ctx, auth.account.id, [body.mutation], body.base, Date.now());
    reply.header('cache-control', 'no-store');
    if (write.status === 'conflict') {
      return reply.code(409).send({
        error: {
          code: 'NOTEBOOK_CONFLICT',
          message:
            write.reason === 'reset'
              ? 'The notebook was cleared since this was read; nothing was changed.'
              : 'The notebook changed since this was read; nothing was changed. Read it again and re-apply.',
        },
        reason: write.reason,
        revision: write.notebook.revision,
        epoch: write.notebook.epoch,
        notebook: write.notebook,
      });
    }
    if (write.status === 'invalid') {
      const messages = { 'notes-full': `At most ${NOTEBOOK_BOUNDS.pinnedNotes} pinned notes.`, 'empty-text': 'The text is empty.', 'unknown-note': 'No such note.' };
      return reply.code(write.reason === 'unknown-note' ? 404 : 400).send({
        error: { code: write.reason === 'notes-full' ? 'NOTES_FULL' : write.reason === 'unknown-note' ? 'NOT_FOUND' : 'INVALID_REQUEST', message: messages[write.reason] },
        notebook: write.notebook,
      });
    }
    return { status: 'applied', changed: write.changed, notebook: write.notebook };
  });
}
