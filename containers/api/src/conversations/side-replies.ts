import { meteredComplete } from '@yumina/ai';
import { HttpError, parseWith } from '@yumina/http';
import { isPlatformId } from '@yumina/sandbox';
import { sharedTokenCounter } from '@yumina/tokens';
import { assemblePrompt, toProviderMessages, type WorldState } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { meteringFor } from '../ai/metering.ts';
import type { AppContext } from '../context.ts';
import { stateForViewer } from '@yumina/conversations';
import { enginePersona } from './persona.ts';
import { historyOf, ownedSession, playableWorld, sessionMessages } from './model.ts';

/** Side replies per minute per account (impersonate and translate together). */
export const SIDE_REPLIES_PER_MINUTE = 20;

const sessionParams = z.object({ id: z.string().refine((v) => isPlatformId(v, 'session'), 'not a session id') });
const messageParams = sessionParams.extend({ messageId: z.string().refine((v) => isPlatformId(v, 'message'), 'not a message id') });
const impersonateBody = z.strictObject({
  /** What the player began writing: the model carries on from it. */
  draft: z.string().max(4000).default(''),
});
const translateBody = z.strictObject({
  /** The language to translate into, as the player names it (a BCP 47 tag such as "de" or "pt-BR", or a name). */
  language: z
    .string()
    .trim()
    .min(2)
    .max(40)
    .regex(/^[\p{L}][\p{L}\p{M} ()-]*$/u, 'a language tag or name (letters, spaces, hyphens)'),
});

/** Language tags the page sends (navigator.language), named for the model. */
function languageName(tag: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' }).of(tag) ?? tag;
  } catch {
    return tag; // a name already ("German")
  }
}

/**
 * Replies written beside the conversation, never stored in it (issue 50): on the player's own
 * connection or credits, metered like any call, rate limited, only for the session's owner.
 *
 * - POST /api/sessions/:id/impersonate `{ draft? }` → `{ content }`: the model writes the player's
 *   next line, from the world's prompt and the conversation, for the player to edit and send.
 * - POST /api/sessions/:id/messages/:messageId/translate `{ language }` → `{ content, language }`:
 *   a message's text in the player's language, the original unchanged.
 */
export async function sideReplyRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  async function limited(accountId: string) {
    const limit = await ctx.store.rateLimit(`side-reply:${accountId}`, SIDE_REPLIES_PER_MINUTE, 60);
    if (!limit.allowed) throw new HttpError(429, 'RATE_LIMITED', 'Too many requests for a moment; try again shortly.', { 'retry-after': String(limit.retryAfter) });
  }

  app.post<{ Params: { id: string } }>('/api/sessions/:id/impersonate', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const p = parseWith(sessionParams, request.params, 'path');
    const input = parseWith(impersonateBody, request.body ?? {});
    const session = await ownedSession(db, p.id, auth.account.id);
    await limited(auth.account.id);
    const [world, rows, persona, metering] = await Promise.all([
      playableWorld(db, session.world_id, auth.account.id),
      sessionMessages(db, session.id),
      enginePersona(db, auth.account.id),
      meteringFor(ctx, auth.account.id, session.world_id),
    ]);
    const model = metering.selection.defaultModel ?? ctx.config.ai.official?.defaultModel ?? 'default';
    const counter = sharedTokenCounter();
    const history = historyOf(rows);
    const prompt = assemblePrompt(world, stateForViewer(JSON.parse(session.state) as WorldState, auth.account.id), {
      now: new Date(),
      seed: session.seed,
      sessionId: session.id,
      persona,
      accountName: auth.account.displayName ?? auth.account.username,
      model,
      history,
      countTokens: (t) => counter.countText(t, model),
      budgetTokens: Math.max(1, world.settings.maxContext - world.settings.maxTokens),
    });
    const player = persona?.name ?? world.settings.playerName;
    const instruction =
      `Write ${player}'s next message in this conversation, as ${player} would write it: in their voice, first person, ` +
      `one message only, without any reply from the other characters and without notes or quotation marks around it.` +
      (input.draft.trim() ? ` It begins with: ${input.draft.trim()}` : '');
    const messages = [...(toProviderMessages(prompt.messages) as { role: 'system' | 'user' | 'assistant'; content: string }[]), { role: 'system' as const, content: instruction }];
    const result = await meteredComplete(metering, { model, messages, maxTokens: Math.min(world.settings.maxTokens, 600) }, { purpose: 'impersonate', maxReplyBytes: ctx.config.ai.replyMaxBytes });
    const content = result.content.trim();
    const draft = input.draft.trim();
    // A model that repeats the beginning it was given is not doubled.
    return { content: draft && !content.startsWith(draft) ? `${draft} ${content}` : content };
  });

  app.post<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/messages/:messageId/translate', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const p = parseWith(messageParams, request.params, 'path');
    const input = parseWith(translateBody, request.body);
    const session = await ownedSession(db, p.id, auth.account.id);
    const { rows } = await db.query<{ content: string }>(`select content from chat_messages where session_id = $1 and id = $2 and status = 'complete'`, [session.id, p.messageId]);
    const message = rows[0];
    if (!message) throw new HttpError(404, 'NOT_FOUND', 'No such message (or it is still being written).');
    await limited(auth.account.id);
    const metering = await meteringFor(ctx, auth.account.id, session.world_id);
    const model = metering.selection.defaultModel ?? ctx.config.ai.official?.defaultModel ?? 'default';
    const language = languageName(input.language);
    const messages = [
      {
        role: 'system' as const,
        content: `Translate the user's text into ${language}. Keep its Markdown, its line breaks and the *actions between asterisks*. Answer with the translation only.`,
      },
      { role: 'user' as const, content: message.content },
    ];
    const result = await meteredComplete(metering, { model, messages, maxTokens: 4000, temperature: 0.2 }, { purpose: 'translate', maxReplyBytes: ctx.config.ai.replyMaxBytes });
    return { content: result.content.trim(), language };
  });
}
