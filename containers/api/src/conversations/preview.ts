import { completeChat } from '@yumina/ai';
import { HttpError, parseWith } from '@yumina/http';
import { assetPath } from '@yumina/sandbox';
import { sharedTokenCounter } from '@yumina/tokens';
import { assemblePrompt, runTurn, startSession, toProviderMessages, type WorldDefinition, type WorldState } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { whenClientGone } from '../event-stream.ts';
import { worldForViewer } from '../worlds/version.ts';
import { samplingRequest } from './sampling.ts';

const turnBody = z.strictObject({
  message: z.string().trim().min(1).max(4000),
  history: z.array(z.strictObject({ role: z.enum(['user', 'assistant']), content: z.string().max(16_000) })).max(40),
  /** The state the page holds (the preview keeps it client-side; nothing is stored). */
  state: z.record(z.string(), z.unknown()).nullable(),
  seed: z.string().max(64).default('preview'),
});

/** The version a guest gets: the live one of a published world (a held edit is never previewed). */
async function publishedWorld(ctx: AppContext, id: string): Promise<WorldDefinition> {
  return (await worldForViewer(ctx.db.read, id, { accountId: null })).world;
}

/**
 * Guest preview: a published world tried without an account. Nothing is persisted: the page
 * holds the history and state, turns run on the platform's official provider within a per-address
 * hourly allowance (GUEST_PREVIEW_TURNS_PER_HOUR, 0 = guests cannot send), never on credits.
 */
export async function previewRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const canSend = () => ctx.config.guestPreviewTurnsPerHour > 0 && !!ctx.config.ai.official;

  app.get<{ Params: { worldId: string } }>('/api/worlds/:worldId/preview', async (request) => {
    const world = await publishedWorld(ctx, request.params.worldId);
    const start = startSession(world as never, { now: new Date(), seed: 'preview', sessionId: 'preview' });
    // The live cover and portrait, for the character's chat bubbles (public, as the live version is).
    const pictures = await ctx.db.read.query<{ cover: string | null; avatar: string | null }>(
      'select live_cover_asset_id as cover, live_avatar_asset_id as avatar from worlds where id = $1',
      [request.params.worldId],
    );
    const { cover = null, avatar = null } = pictures.rows[0] ?? {};
    return {
      world,
      coverUrl: cover ? assetPath(request.params.worldId, cover) : null,
      avatarUrl: avatar ? assetPath(request.params.worldId, avatar) : null,
      state: start.state,
      greetings: start.greetings,
      capabilities: { canSendMessage: canSend(), canPersistSession: false, canUseSessionApis: false, requiresAuth: true },
    };
  });

  app.post<{ Params: { worldId: string } }>('/api/worlds/:worldId/preview/turn', async (request, reply) => {
    const body = parseWith(turnBody, request.body);
    const world = await publishedWorld(ctx, request.params.worldId);
    if (!canSend()) throw new HttpError(403, 'SIGN_IN_TO_PLAY', 'Sign in to talk with this world.');
    const limit = await ctx.store.rateLimit(`preview:${request.ip}`, ctx.config.guestPreviewTurnsPerHour, 3600);
    if (!limit.allowed) {
      throw new HttpError(429, 'RATE_LIMITED', 'The preview allowance is used up for now. Sign in to keep playing.', { 'retry-after': String(limit.retryAfter) });
    }
    const official = ctx.config.ai.official!;
    const counter = sharedTokenCounter();
    const options = { now: new Date(), seed: body.seed, sessionId: 'preview' };
    const state = (body.state ?? startSession(world as never, options).state) as WorldState;
    const prompt = assemblePrompt(world, state, {
      ...options,
      history: [...body.history, { role: 'user', content: body.message }],
      countTokens: (t) => counter.countText(t),
      budgetTokens: Math.min(world.settings.maxContext - world.settings.maxTokens, 16_000),
    });
    // a guest who leaves stops the call; the platform's first-byte and idle deadlines apply as to every call
    const abort = new AbortController();
    const stopListening = whenClientGone(reply, () => abort.abort(new Error('The client went away')));
    const result = await completeChat(
      { baseUrl: official.baseUrl, apiKey: official.apiKey, privateNetwork: ctx.config.ai.privateNetworkAccess, ...(official.kind !== 'openai' ? { kind: official.kind } : {}) },
      { model: official.defaultModel, messages: toProviderMessages(prompt.messages) as never, maxTokens: Math.min(world.settings.maxTokens, 1000), ...samplingRequest(world.settings) },
      { timeoutMs: 60_000, maxReplyBytes: ctx.config.ai.replyMaxBytes, signal: abort.signal, ...ctx.config.ai.deadlines },
    ).finally(stopListening);
    const turn = runTurn(world, state, { ...options, userMessage: body.message, aiReply: result.content, skippedEntries: prompt.skippedEntries });
    return { displayText: turn.displayText, state: turn.state, stateChanges: turn.stateChanges, notifications: turn.notifications, audioCommands: turn.audioCommands };
  });
}
