import { meteredStream } from '@yumina/ai';
import { HttpError, parseWith, publicErrorOf } from '@yumina/http';
import { sharedTokenCounter } from '@yumina/tokens';
import { assemblePrompt, toProviderMessages, type WorldState } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { meteringFor } from '../ai/metering.ts';
import type { AppContext } from '../context.ts';
import { openEventStream, whenClientGone } from '../event-stream.ts';
import { canPlay, sessionAccess, stateForViewer } from '@yumina/conversations';
import { historyOf, ownedSession, playableWorld, sessionMessages } from './model.ts';

/** Calls per minute per account from world code (the sandbox's ai.complete). */
export const AI_COMPLETE_PER_MINUTE = 20;

const body = z.strictObject({
  messages: z
    .array(z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(32_000) }))
    .min(1)
    .max(50),
  model: z.string().max(200).optional(),
  maxTokens: z.number().int().min(1).max(8192).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** false: only these messages; true or 'matched': with the world's prompt for this session (entries that match now); 'all': with every enabled entry. */
  includeLorebook: z.union([z.boolean(), z.enum(['all', 'matched'])]).default(false),
  stream: z.boolean().default(false),
});

/**
 * POST /api/sessions/:id/ai/complete — the sandbox API's `ai.complete`: a side call by world
 * code, on the account's own key or credits (metered like any call), rate limited, streamed as
 * server-sent events when asked.
 */
export async function aiCompleteRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post<{ Params: { id: string } }>('/api/sessions/:id/ai/complete', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const input = parseWith(body, request.body);
    // the session's owner, or a room's member who plays (on their own key or credits, as anywhere: it is their interface that asks)
    const access = await sessionAccess(ctx.db.primary, request.params.id, auth.account.id);
    if (!access) throw new HttpError(404, 'NOT_FOUND', 'No such session.');
    if (!canPlay(access.role)) throw new HttpError(403, 'SPECTATOR', 'Spectators read along; their interface does not call the AI.');
    const session = await ownedSession(ctx.db.primary, request.params.id, access.room?.hostAccountId ?? auth.account.id);
    const limit = await ctx.store.rateLimit(`ai-complete:${auth.account.id}`, AI_COMPLETE_PER_MINUTE, 60);
    if (!limit.allowed) throw new HttpError(429, 'RATE_LIMITED', 'World code is calling the AI too often.', { 'retry-after': String(limit.retryAfter) });
    const world = await playableWorld(ctx.db.primary, session.world_id, access.room?.hostAccountId ?? auth.account.id);
    // in a room, what the member's interface chose for them in this world applies to their own call
    const metering = await meteringFor(ctx, auth.account.id, session.world_id);
    const model = input.model ?? metering.selection.defaultModel ?? ctx.config.ai.official?.defaultModel ?? 'default';

    let context: { role: 'system' | 'user' | 'assistant'; content: string }[] = [];
    if (input.includeLorebook === 'all') {
      const lore = world.entries.filter((e) => e.enabled !== false && e.role !== 'greeting').map((e) => e.content);
      if (lore.length) context = [{ role: 'system', content: lore.join('\n\n') }];
    } else if (input.includeLorebook) {
      const history = historyOf(await sessionMessages(ctx.db.primary, session.id));
      const counter = sharedTokenCounter();
      const prompt = assemblePrompt(world, stateForViewer(JSON.parse(session.state) as WorldState, auth.account.id), {
        now: new Date(),
        seed: session.seed,
        sessionId: session.id,
        history: history.length ? history : [{ role: 'user', content: input.messages.at(-1)!.content }],
        countTokens: (t) => counter.countText(t, model),
      });
      context = (toProviderMessages(prompt.messages) as typeof context).filter((m) => m.role === 'system');
    }
    const request_ = { model, messages: [...context, ...input.messages], maxTokens: input.maxTokens ?? 1024, temperature: input.temperature };

    // A caller who leaves stops the provider call at once (what arrived is billed, as for a stop).
    const controller = new AbortController();
    whenClientGone(reply, () => controller.abort(new Error('The client went away')));
    const options = { purpose: 'world-ui', signal: controller.signal, maxReplyBytes: ctx.config.ai.replyMaxBytes };
    if (!input.stream) {
      let text = '';
      for await (const event of meteredStream(metering, request_, options)) if (event.type === 'delta') text += event.text;
      return { content: text };
    }
    const stream = openEventStream(reply);
    let text = '';
    try {
      for await (const event of meteredStream(metering, request_, options)) {
        if (event.type === 'delta') {
          text += event.text;
          stream.write('delta', { text: event.text });
        }
      }
      stream.write('done', { content: text });
    } catch (err) {
      request.log.warn({ err }, 'ai.complete failed');
      stream.write('error', { ...publicErrorOf(err), requestId: request.id });
    } finally {
      reply.raw.end();
    }
  });
}
