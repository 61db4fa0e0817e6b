import { randomBytes } from 'node:crypto';
import { newId } from '@yumina/accounts';
import { ChatFormatError, chatMarkdown, chatText, readSillyTavernChat, sillyTavernChat, type Transcript } from '@yumina/conversations';
import { HttpError } from '@yumina/http';
import { characterName, startSession } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import { bodyAsItArrives } from '../body-bytes.ts';
import type { AppContext } from '../context.ts';
import { sessionPage } from './history-page.ts';
import { ownedSession, playableWorld, sessionMessages, type Swipe } from './model.ts';
import { enginePersona } from './persona.ts';

/** The largest chat file imported (SillyTavern chats of many thousand messages stay well under it). */
export const CHAT_IMPORT_LIMIT = 8 * 1024 * 1024;

/** A file name from a title: letters, digits and dashes (any script), never empty. */
const fileName = (name: string) => name.normalize('NFKC').replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'chat';

const FORMATS = {
  jsonl: { type: 'application/jsonl; charset=utf-8', write: (transcript: Transcript) => sillyTavernChat(transcript) },
  md: { type: 'text/markdown; charset=utf-8', write: (transcript: Transcript, title: string) => chatMarkdown(transcript, title) },
  txt: { type: 'text/plain; charset=utf-8', write: (transcript: Transcript) => chatText(transcript) },
} as const;

/**
 * Chats in and out (issue 49 point 10):
 *  - GET /api/sessions/:id/export.jsonl: the session as a SillyTavern chat (each reply with its
 *    swipes), which SillyTavern imports; export.md and export.txt: a readable transcript.
 *  - POST /api/worlds/:worldId/sessions/import (the `.jsonl` file as the body, `?name=` its file
 *    name): a new session of that world holding the chat's messages, swipes and dates, and a
 *    report in plain words of what was not carried. A file that is not a SillyTavern chat is a 400
 *    and creates nothing.
 * Only the session's player exports it; anyone who may play the world imports into it.
 */
export async function chatTransferRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.get<{ Params: { id: string; format: string } }>('/api/sessions/:id/export.:format', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const format = FORMATS[request.params.format as keyof typeof FORMATS];
    if (!Object.hasOwn(FORMATS, request.params.format) || !format) throw new HttpError(404, 'NOT_FOUND', 'A chat exports as export.jsonl (SillyTavern), export.md or export.txt.');
    const session = await ownedSession(db, request.params.id, auth.account.id);
    const world = await playableWorld(db, session.world_id, auth.account.id).catch(() => null);
    const persona = await enginePersona(db, auth.account.id);
    const messages = (await sessionMessages(db, session.id)).filter((message) => message.status === 'complete');
    const transcript: Transcript = {
      userName: persona?.name || auth.account.displayName,
      characterName: world ? characterName(world) : session.title,
      createdAt: session.created_at.toISOString(),
      messages: messages.map((message) => {
        const swipes = (JSON.parse(message.swipes) as Swipe[]).map((swipe) => swipe.content);
        const shown = swipes.length > 0 ? swipes : [message.content];
        const active = Math.min(message.active_swipe_index, shown.length - 1);
        shown[active] = message.content;
        return { role: message.role, content: message.content, swipes: message.role === 'assistant' ? shown : [message.content], activeSwipe: message.role === 'assistant' ? active : 0, sentAt: message.created_at.toISOString() };
      }),
    };
    const name = `${fileName(session.title)}.${request.params.format}`;
    reply
      .header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`)
      .header('cache-control', 'no-store')
      .type(format.type);
    return format.write(transcript, session.title);
  });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', bodyAsItArrives);
    scope.post<{ Params: { worldId: string }; Querystring: { name?: string } }>('/api/worlds/:worldId/sessions/import', { bodyLimit: CHAT_IMPORT_LIMIT }, async (request, reply) => {
      const auth = await requireAuth(ctx, request, reply);
      const world = await playableWorld(db, request.params.worldId, auth.account.id);
      const body = request.body;
      if (!Buffer.isBuffer(body) || body.length === 0) throw new HttpError(400, 'EMPTY_UPLOAD', 'Send the chat file (.jsonl) as the request body.');
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(body);
      } catch {
        throw new HttpError(400, 'CHAT_UNREADABLE', 'The file is not UTF-8 text: a SillyTavern chat (.jsonl) is.');
      }
      let read: ReturnType<typeof readSillyTavernChat>;
      try {
        read = readSillyTavernChat(text);
      } catch (error) {
        if (error instanceof ChatFormatError) throw new HttpError(400, error.code, error.message);
        throw error;
      }
      if (read.transcript.messages.some((message) => /\u0000/.test(message.content) || message.swipes.some((swipe) => /\u0000/.test(swipe)))) {
        throw new HttpError(400, 'CHAT_UNREADABLE', 'The chat holds a U+0000 character, which no message may hold.');
      }
      const notCarried = [...read.notCarried];
      const character = characterName(world);
      const persona = await enginePersona(db, auth.account.id);
      const player = persona?.name || auth.account.displayName;
      if (read.names.character && read.names.character !== character) notCarried.unshift(`The chat was with "${read.names.character}"; its replies now come from this world's character, "${character}".`);
      if (read.names.user && read.names.user !== player) notCarried.unshift(`Your name in the chat was "${read.names.user}"; here your messages carry your own name, "${player}".`);
      if (world.variables.length > 0) notCarried.push("The world's variables start from their first values: a SillyTavern chat holds none of this world's state.");

      const id = newId('cnv');
      const seed = randomBytes(8).toString('hex');
      const start = startSession(world as never, { now: new Date(), seed, sessionId: id, accountName: auth.account.displayName, persona });
      const initial = JSON.stringify(start.state);
      const title = (typeof request.query.name === 'string' && request.query.name.replace(/\.jsonl$/i, '').trim()) || `${world.name} (imported chat)`;
      const messages = read.transcript.messages;
      await db.transaction(async (tx) => {
        await tx.query(
          `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count) values ($1, $2, $3, $4, $5, $6, $6, $7)`,
          [id, request.params.worldId, auth.account.id, title.slice(0, 200), seed, initial, messages.length],
        );
        const swipes = messages.map((message) =>
          message.role === 'assistant' ? JSON.stringify(message.swipes.map((content): Swipe => ({ content, rawContent: content, snapshot: start.state, stateChanges: [] }))) : '[]',
        );
        // One statement for the whole chat, in order (positions 0…n-1).
        await tx.query(
          `insert into chat_messages (id, session_id, position, role, content, raw_content, swipes, active_swipe_index, created_at)
           select m.id, $1, m.position, m.role, m.content, m.content, m.swipes, m.active, coalesce(m.sent_at, now())
             from unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[], $8::timestamptz[]) as m(id, position, role, content, swipes, active, sent_at)`,
          [
            id,
            messages.map(() => newId('msg')),
            messages.map((_, index) => index),
            messages.map((message) => message.role),
            messages.map((message) => message.content),
            swipes,
            messages.map((message) => message.activeSwipe),
            messages.map((message) => message.sentAt),
          ],
        );
      });
      const swipeCount = messages.reduce((sum, message) => sum + (message.swipes.length > 1 ? message.swipes.length : 0), 0);
      reply.code(201);
      return {
        ...(await sessionPage(db, id, auth.account.id)),
        report: { messages: messages.length, swipes: swipeCount, notCarried },
      };
    });
  });
}
