import { synthesizeSpeech } from '@yumina/ai';
import { HttpError, parseWith } from '@yumina/http';
import { isPlatformId } from '@yumina/sandbox';
import { spokenText } from '@yumina/world/speech';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import { privateConnection } from '../accounts/ai-connection.ts';
import type { AppContext } from '../context.ts';
import { ownedSession } from './model.ts';

/** Spoken replies per minute per account. */
export const SPEECH_PER_MINUTE = 30;
/** The longest text sent to be spoken (OpenAI's own limit is 4096 characters). */
const SPEECH_MAX_CHARS = 4096;

const params = z.object({
  id: z.string().refine((v) => isPlatformId(v, 'session'), 'not a session id'),
  messageId: z.string().refine((v) => isPlatformId(v, 'message'), 'not a message id'),
});
const body = z.strictObject({
  /** The provider's voice name (OpenAI's: alloy, nova, …; other servers name their own). */
  voice: z.string().trim().min(1).max(100).regex(/^[\w.:-]+$/, 'letters, digits and . _ : - only'),
  /** The speech model; unset: tts-1. */
  model: z.string().trim().min(1).max(200).optional(),
  /** *Actions between asterisks*: read (default) or skipped. */
  actions: z.enum(['read', 'skip']).default('read'),
});

/**
 * POST /api/sessions/:id/messages/:messageId/speech (issue 50, voice): a message of the player's
 * own session read aloud by the player's own connection's OpenAI-compatible `/audio/speech`,
 * answered with the audio. Only the account's own connection (the platform's key does not pay
 * for speech); 409 NO_CONNECTION without one; the provider's refusal as any provider error.
 */
export async function speechRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  app.post<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/messages/:messageId/speech', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const p = parseWith(params, request.params, 'path');
    const input = parseWith(body, request.body);
    const session = await ownedSession(db, p.id, auth.account.id);
    const { rows } = await db.query<{ content: string }>(`select content from chat_messages where session_id = $1 and id = $2 and status = 'complete'`, [session.id, p.messageId]);
    if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such message (or it is still being written).');
    const text = spokenText(rows[0].content, input.actions).slice(0, SPEECH_MAX_CHARS);
    if (!text) throw new HttpError(422, 'NOTHING_TO_SAY', 'That message has nothing to read aloud.');
    const connection = await privateConnection(ctx, auth.account.id);
    if (!connection || connection.kind !== 'openai') throw new HttpError(409, 'NO_CONNECTION', 'The provider’s voices need your own OpenAI-compatible connection (Settings → AI connection).');
    const limit = await ctx.store.rateLimit(`speech:${auth.account.id}`, SPEECH_PER_MINUTE, 60);
    if (!limit.allowed) throw new HttpError(429, 'RATE_LIMITED', 'Too many spoken replies for a moment; try again shortly.', { 'retry-after': String(limit.retryAfter) });
    const controller = new AbortController();
    reply.raw.once('close', () => controller.abort(new Error('The client went away')));
    const speech = await synthesizeSpeech(
      { baseUrl: connection.baseUrl, apiKey: connection.apiKey, privateNetwork: ctx.config.ai.privateNetworkAccess },
      { model: input.model ?? 'tts-1', input: text, voice: input.voice },
      { signal: controller.signal, timeoutMs: 60_000 },
    );
    reply.header('cache-control', 'no-store').type(speech.contentType);
    return reply.send(speech.audio);
  });
}
