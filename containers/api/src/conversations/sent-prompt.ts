import { HttpError, parseWith } from '@yumina/http';
import { isPlatformId } from '@yumina/sandbox';
import { type AssembledPrompt, dynamicBlockForPlayer, type FiredEntry } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { readKeptPrompt, sessionMembers } from '@yumina/conversations';
import { ownedSession } from './model.ts';

/** One message of a kept prompt; a message of the conversation itself has `content: null` (it is in the conversation). */
export interface SentMessage {
  role: 'system' | 'user' | 'assistant';
  step: number;
  source: string;
  content: string | null;
}

/** What was sent for a reply, as kept in chat_prompts (migration 096) and rebuilt from chat_prompt_records (migration 170). */
export interface SentPrompt {
  model: string;
  builtAt: string;
  tokenCount: number;
  /** Oldest conversation messages left out for the budget. */
  droppedHistory: number;
  /** Conversation messages sent (their text elided here but for the latest). */
  historyCount: number;
  messages: SentMessage[];
  firedEntries: FiredEntry[];
  skippedEntries: AssembledPrompt['skippedEntries'];
}

/**
 * The record of a prompt as the engine built it (assemblePrompt's labelled messages): the
 * conversation's messages are elided, as they are stored once already, except the latest (the
 * player's turn); a continued reply's text so far comes last.
 */
export function sentPromptOf(prompt: AssembledPrompt, model: string, now: Date, prefix?: string): SentPrompt {
  let lastHistory = -1;
  prompt.messages.forEach((m, i) => {
    if (m.source === 'history') lastHistory = i;
  });
  const messages: SentMessage[] = prompt.messages.map((m, i) => ({
    role: m.role,
    step: m.step,
    source: m.source,
    content: m.source === 'history' && i !== lastHistory ? null : m.content,
  }));
  if (prefix) messages.push({ role: 'assistant', step: 10, source: 'continue', content: prefix });
  return {
    model,
    builtAt: now.toISOString(),
    tokenCount: prompt.tokenCount,
    droppedHistory: prompt.droppedHistory,
    historyCount: prompt.messages.filter((m) => m.source === 'history').length,
    messages,
    firedEntries: prompt.firedEntries,
    skippedEntries: prompt.skippedEntries,
  };
}

const params = z.object({
  id: z.string().refine((v) => isPlatformId(v, 'session'), 'not a session id'),
  messageId: z.string().refine((v) => isPlatformId(v, 'message'), 'not a message id'),
});

/**
 * "What was sent" (GET /api/sessions/:id/messages/:messageId/prompt): for the player's own
 * message, or the reply to it, the prompt that reply was written from. Only the session's owner
 * sees it; anyone else gets 404, as for a session that does not exist.
 */
export async function sentPromptRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  app.get<{ Params: { id: string; messageId: string } }>('/api/sessions/:id/messages/:messageId/prompt', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const p = parseWith(params, request.params, 'path');
    const session = await ownedSession(db, p.id, auth.account.id);
    reply.header('cache-control', 'no-store');
    // The message itself when it is a reply; the reply right after it when it is the player's.
    // a record this release wrote (chat_prompt_records), else one an older release kept whole
    const { rows } = await db.query<{ reply_id: string; role: string; prompt: unknown }>(
      `select r.id as reply_id, m.role, coalesce(k.record, p.prompt) as prompt
         from chat_messages m
         join chat_messages r on r.session_id = m.session_id and r.position = case when m.role = 'user' then m.position + 1 else m.position end
         left join chat_prompt_records k on k.message_id = r.id
         left join chat_prompts p on p.message_id = r.id
        where m.session_id = $1 and m.id = $2 and r.role = 'assistant'`,
      [p.id, p.messageId],
    );
    const row = rows[0];
    if (!row?.prompt) throw new HttpError(404, 'NOT_FOUND', 'Nothing was sent for that message (a greeting, or a reply written before prompts were kept).');
    const prompt = (await readKeptPrompt(db, p.id, row.prompt)) as unknown as SentPrompt;
    if (!session.is_room) return { messageId: p.messageId, replyId: row.reply_id, prompt };
    // A room's host sees what the AI was sent but for the other players' own values (docs/ROOMS.md)
    const me = (await sessionMembers(db, p.id)).find((m) => m.accountId === auth.account.id);
    const messages = prompt.messages.map((m) => (m.source === 'format:dynamic' && m.content ? { ...m, content: dynamicBlockForPlayer(m.content, me?.name ?? null) } : m));
    return { messageId: p.messageId, replyId: row.reply_id, prompt: { ...prompt, messages } };
  });
}
