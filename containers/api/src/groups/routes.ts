import { newId } from '@yumina/accounts';
import {
  CARD_MODES,
  completeTurn,
  GROUP_MAX,
  GROUP_MIN,
  type GroupCharacter,
  groupCharacters,
  groupOfSession,
  pickSpeakers,
  releaseTurn,
  REPLY_MODES,
  type SceneMessage,
  speakerHistory,
  TURN_LOCK_TTL_SECONDS,
} from '@yumina/conversations';
import { HttpError, parseWith, publicErrorOf } from '@yumina/http';
import { assetPath, isPlatformId } from '@yumina/sandbox';
import { createRandom, startSession, type WorldDefinition, type WorldState } from '@yumina/world';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { type EventStream, openEventStream, whenClientGone } from '../event-stream.ts';
import { generateTurn, swipeOf } from '../conversations/generate.ts';
import { messageView, type MessageRow, ownedSession, playableWorld, type Swipe } from '../conversations/model.ts';
import { startNewSession } from '../conversations/new-session.ts';
import { enginePersona } from '../conversations/persona.ts';
import { acquireTurnLock } from '../conversations/turn-lock.ts';
import { groupGreetingOf, type SceneCharacter, speakerWorld, talkativenessOf } from './speaker-world.ts';

const worldId = z.string().refine((v) => isPlatformId(v, 'world'), 'is not a world id');
const participantId = z.string().refine((v) => isPlatformId(v, 'participant'), 'is not a character of this scene');
const createBody = z.strictObject({
  characters: z
    .array(worldId)
    .min(GROUP_MIN, `a group scene has ${GROUP_MIN} to ${GROUP_MAX} characters`)
    .max(GROUP_MAX, `a group scene has ${GROUP_MIN} to ${GROUP_MAX} characters`)
    .refine((ids) => new Set(ids).size === ids.length, 'each character once'),
  /** The world whose state, rules and interface the scene plays in; the first character's by default. */
  sceneWorldId: worldId.optional(),
  replyMode: z.enum(REPLY_MODES).default('natural'),
  cardMode: z.enum(CARD_MODES).default('swap'),
  autoReplies: z.number().int().min(0).max(20).default(0),
});
const settingsBody = z
  .strictObject({ replyMode: z.enum(REPLY_MODES).optional(), cardMode: z.enum(CARD_MODES).optional(), autoReplies: z.number().int().min(0).max(20).optional() })
  .refine((b) => Object.keys(b).length > 0, 'nothing to change');
const characterBody = z
  .strictObject({ muted: z.boolean().optional(), talkativeness: z.number().min(0).max(1).optional() })
  .refine((b) => Object.keys(b).length > 0, 'nothing to change');
const replyBody = z.strictObject({
  /** The player's message; none to let the characters go on (with `speaker`: that one replies now). */
  content: z.string().trim().min(1).max(32_000).optional(),
  speaker: participantId.optional(),
});

const characterView = (c: GroupCharacter) => ({ id: c.id, name: c.name, worldId: c.worldId, muted: c.muted, talkativeness: c.talkativeness, position: c.position });

/**
 * Group scenes (docs/GROUPS.md): a player starts a scene of 2–8 characters (worlds they may play:
 * published ones and their own, imported cards included); each message is answered by the
 * characters the reply mode picks, each reply written with that character's card and the scene's
 * shared state, one after another under the session's turn lock, streamed as one event stream.
 * The session is the player's own: reading it, swipes, edits, checkpoints and branches go through
 * the session's routes as for any session.
 */
export async function groupRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  /** Replies being written, by session: stop aborts them. */
  const running = new Map<string, AbortController>();

  app.post('/api/groups', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(createBody, request.body);
    // every character a world the player may open (404 otherwise), read before anything is written
    const characters = await Promise.all(
      body.characters.map(async (id) => {
        const world = await playableWorld(db, id, auth.account.id);
        const { rows } = await db.query<{ card_source: string | null }>('select card_source from worlds where id = $1', [id]);
        return { id, world, cardSource: rows[0]?.card_source ?? null };
      }),
    );
    const sceneId = body.sceneWorldId ?? body.characters[0]!;
    const scene = characters.find((c) => c.id === sceneId)?.world ?? (await playableWorld(db, sceneId, auth.account.id));
    const persona = await enginePersona(db, auth.account.id);
    const names = characters.map((c) => c.world.name);
    const title = `${names.slice(0, -1).join(', ')} & ${names.at(-1)}`.slice(0, 200);
    // the session of the scene's world, without its own greeting (the characters' group greetings open it), titled by its cast
    const { id } = await startNewSession(ctx, auth, sceneId, { ...scene, name: title, entries: scene.entries.filter((e) => e.role !== 'greeting') } as WorldDefinition, {
      alsoWrite: async (tx, sessionId) => {
        await tx.query('insert into chat_groups (session_id, reply_mode, card_mode, auto_replies) values ($1, $2, $3, $4)', [sessionId, body.replyMode, body.cardMode, body.autoReplies]);
        let position = 0;
        for (const [index, c] of characters.entries()) {
          const pid = newId('ptc');
          await tx.query(
            `insert into session_participants (id, session_id, kind, role, position, world_id, name, talkativeness) values ($1, $2, 'character', 'character', $3, $4, $5, $6)`,
            [pid, sessionId, index, c.id, c.world.name, talkativenessOf(c.cardSource)],
          );
          // group greetings open the scene: each character's, in list order, under its name
          const greeting = groupGreetingOf(c.world, c.cardSource);
          if (!greeting) continue;
          const opened = startSession({ ...c.world, entries: [{ ...greetingEntry(c.world), content: greeting }] } as never, {
            now: new Date(),
            seed: sessionId,
            sessionId,
            accountName: auth.account.displayName,
            persona,
          }).greetings[0];
          if (!opened) continue;
          await tx.query(
            `insert into chat_messages (id, session_id, position, role, content, raw_content, participant_id, author_name) values ($1, $2, $3, 'assistant', $4, $4, $5, $6)`,
            [newId('msg'), sessionId, position++, opened, pid, c.world.name],
          );
        }
        await tx.query('update chat_sessions set message_count = $2 where id = $1', [sessionId, position]);
      },
    });
    reply.code(201);
    return { session: { id }, ...(await groupView(id, auth.account.id)) };
  });

  async function groupView(sessionId: string, accountId: string) {
    const [group, characters, pictures] = await Promise.all([
      groupOfSession(db, sessionId),
      groupCharacters(db, sessionId),
      // each character's face: its world's cover (the live one of a world the player does not own)
      db.query<{ id: string; world_id: string; cover: string | null }>(
        `select p.id, w.id as world_id, case when w.owner_id = $2 then w.cover_asset_id else w.live_cover_asset_id end as cover
           from session_participants p join worlds w on w.id = p.world_id where p.session_id = $1 and p.kind = 'character'`,
        [sessionId, accountId],
      ),
    ]);
    if (!group) throw new HttpError(404, 'NOT_FOUND', 'No such group scene.');
    const picture = new Map(pictures.rows.map((r) => [r.id, r.cover ? assetPath(r.world_id, r.cover) : null]));
    return { group, characters: characters.map((c) => ({ ...characterView(c), picture: picture.get(c.id) ?? null })) };
  }

  /** The player's scenes, newest first: what each is called, who is in it. */
  app.get('/api/groups', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const { rows } = await db.query<{ id: string; title: string; message_count: number; updated_at: Date; names: string[] }>(
      `select s.id, s.title, s.message_count, s.updated_at,
              array(select coalesce(p.name, '') from session_participants p where p.session_id = s.id and p.kind = 'character' order by p.position) as names
         from chat_sessions s join chat_groups g on g.session_id = s.id
        where s.account_id = $1 order by s.updated_at desc limit 50`,
      [auth.account.id],
    );
    return { scenes: rows.map((r) => ({ id: r.id, title: r.title, messageCount: r.message_count, updatedAt: r.updated_at.toISOString(), characters: r.names })) };
  });

  /** A group scene of the account's (404 for anyone else's, and for a session that is not a scene). */
  async function ownScene(sessionId: string, accountId: string) {
    const session = await ownedSession(db, sessionId, accountId);
    const group = await groupOfSession(db, sessionId);
    if (!group) throw new HttpError(404, 'NOT_FOUND', 'No such group scene.');
    return { session, group };
  }

  app.get<{ Params: { id: string } }>('/api/groups/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownScene(request.params.id, auth.account.id);
    return groupView(request.params.id, auth.account.id);
  });

  app.patch<{ Params: { id: string } }>('/api/groups/:id', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(settingsBody, request.body);
    await ownScene(request.params.id, auth.account.id);
    await db.query(
      `update chat_groups set reply_mode = coalesce($2, reply_mode), card_mode = coalesce($3, card_mode), auto_replies = coalesce($4, auto_replies) where session_id = $1`,
      [request.params.id, body.replyMode ?? null, body.cardMode ?? null, body.autoReplies ?? null],
    );
    return groupView(request.params.id, auth.account.id);
  });

  app.patch<{ Params: { id: string; participantId: string } }>('/api/groups/:id/characters/:participantId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(characterBody, request.body);
    await ownScene(request.params.id, auth.account.id);
    const { rowCount } = await db.query(
      `update session_participants set muted = coalesce($3, muted), talkativeness = coalesce($4, talkativeness)
        where session_id = $1 and id = $2 and kind = 'character'`,
      [request.params.id, request.params.participantId, body.muted ?? null, body.talkativeness ?? null],
    );
    if (!rowCount) throw new HttpError(404, 'NOT_FOUND', 'No such character in this scene.');
    return groupView(request.params.id, auth.account.id);
  });

  /** Stops the replies being written (the one streaming ends as stopped; no further speaker starts). */
  app.post<{ Params: { id: string } }>('/api/groups/:id/stop', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ownScene(request.params.id, auth.account.id);
    running.get(request.params.id)?.abort(new Error('Stopped by the player'));
    return { ok: true };
  });

  /**
   * Runs `work` (which writes replies and counts them) as the request's event stream under the
   * scene's turn lock `lock`: a stop or the client leaving aborts it; the lock is given back and
   * `end` written whatever happens.
   */
  async function streamed(reply: FastifyReply, sessionId: string, lock: string, work: (signal: AbortSignal, stream: EventStream) => Promise<number>): Promise<void> {
    const controller = new AbortController();
    running.set(sessionId, controller);
    const stream = openEventStream(reply);
    whenClientGone(reply, () => controller.abort(new Error('The client went away')));
    let replies = 0;
    try {
      replies = await work(controller.signal, stream);
    } catch (err) {
      const shown = publicErrorOf(err);
      stream.write('reply:error', { code: shown.code, message: shown.message });
    } finally {
      running.delete(sessionId);
      await releaseTurn(db, { sessionId, lockToken: lock }).catch(() => {});
      stream.write('end', { replies, stopped: controller.signal.aborted });
      reply.raw.end();
    }
  }

  /**
   * A message to the scene and its replies, as one event stream: `message` (the player's, stored
   * first), then for each speaker `speaker` {participantId, name, messageId}, `delta`s and `reply`
   * (the stored reply) or `reply:error`; `end` with the number of replies. With `speaker` the
   * player picks who replies (alone); without `content` the characters go on from where they are.
   */
  app.post<{ Params: { id: string } }>('/api/groups/:id/replies', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(replyBody, request.body);
    const sessionId = request.params.id;
    const { session, group } = await ownScene(sessionId, auth.account.id);
    const characters = await groupCharacters(db, sessionId);
    if (body.speaker && !characters.some((c) => c.id === body.speaker)) throw new HttpError(404, 'NOT_FOUND', 'No such character in this scene.');
    if (!body.content && !body.speaker && group.replyMode === 'choose') throw new HttpError(400, 'CHOOSE_SPEAKER', 'Choose who replies (this scene lets the player choose).');
    const lock = await acquireTurnLock(ctx, auth.account.id, sessionId);
    const persona = await enginePersona(db, auth.account.id);
    const playerName = persona?.name ?? auth.account.displayName ?? 'Player';
    await streamed(reply, sessionId, lock, async (signal, stream) => {
      let replies = 0;
      if (body.content) {
        const { rows } = await db.query<MessageRow & Record<string, unknown>>(
          `insert into chat_messages (id, session_id, position, role, content, state_snapshot, author_name)
           select $1, $2, coalesce(max(position) + 1, 0), 'user', $3, (select state from chat_sessions where id = $2), $4 from chat_messages where session_id = $2
           returning *`,
          [newId('msg'), sessionId, body.content, playerName],
        );
        await db.query('update chat_sessions set message_count = message_count + 1, updated_at = now() where id = $1', [sessionId]);
        stream.write('message', { message: messageView(rows[0]!) });
      }
      const scene = await playableWorld(db, session.world_id, auth.account.id);
      const cast = await castOf(characters, session.world_id, auth.account.id);
      const random = createRandom(`${session.seed}|${sessionId}|${Date.now()}`);
      // the first speakers answer the message; in auto mode characters then go on, one at a time;
      // a character the player chose replies alone
      let budget = body.speaker ? 0 : group.autoReplies;
      let queue = pickSpeakers(group.replyMode, characters, {
        text: body.content ?? (await lastText(sessionId)),
        lastSpeakerId: body.content ? null : await lastSpeaker(sessionId),
        chosenId: body.speaker,
        random,
      });
      while (queue.length > 0 && !signal.aborted) {
        const speaker = queue.shift()!;
        if (!(await writeReply(speaker, cast, scene, group.cardMode, playerName, persona, session, lock, signal, stream))) break;
        replies++;
        if (queue.length === 0 && budget > 0) {
          budget--;
          const mode = group.replyMode === 'in-turn' ? 'in-turn' : 'natural';
          queue = pickSpeakers(mode, characters, { text: await lastText(sessionId), lastSpeakerId: speaker.id, random }).slice(0, 1);
        }
      }
      return replies;
    });
  });

  /** Regenerates the scene's last reply as the same character: the earlier text stays as a swipe. Streams as `replies` does. */
  app.post<{ Params: { id: string } }>('/api/groups/:id/regenerate', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const sessionId = request.params.id;
    const { session, group } = await ownScene(sessionId, auth.account.id);
    const lock = await acquireTurnLock(ctx, auth.account.id, sessionId);
    const { rows } = await db.query<{ id: string; position: number; participant_id: string | null; swipes: string; role: string }>(
      'select id, position, participant_id, swipes, role from chat_messages where session_id = $1 order by position desc limit 1',
      [sessionId],
    );
    const last = rows[0];
    const characters = await groupCharacters(db, sessionId);
    const speaker = characters.find((c) => c.id === last?.participant_id);
    if (!last || last.role !== 'assistant' || !speaker) {
      await releaseTurn(db, { sessionId, lockToken: lock });
      throw new HttpError(409, 'NOTHING_TO_REGENERATE', "The last message is not a character's reply to regenerate.");
    }
    const persona = await enginePersona(db, auth.account.id);
    const playerName = persona?.name ?? auth.account.displayName ?? 'Player';
    await streamed(reply, sessionId, lock, async (signal, stream) => {
      const scene = await playableWorld(db, session.world_id, auth.account.id);
      const cast = await castOf(characters, session.world_id, auth.account.id);
      const again = { id: last.id, position: last.position, swipes: JSON.parse(last.swipes) as Swipe[] };
      return (await writeReply(speaker, cast, scene, group.cardMode, playerName, persona, session, lock, signal, stream, again)) ? 1 : 0;
    });
  });

  /** The characters with their worlds (their cards), read once per request. */
  async function castOf(characters: readonly GroupCharacter[], sceneWorldId: string, accountId: string): Promise<Map<string, SceneCharacter>> {
    const cast = new Map<string, SceneCharacter>();
    for (const c of characters) {
      if (!c.worldId) continue;
      const world = await playableWorld(db, c.worldId, accountId).catch(() => null);
      if (world) cast.set(c.id, { participantId: c.id, name: c.name || world.name, world, isScene: c.worldId === sceneWorldId });
    }
    return cast;
  }

  /** The scene's messages (before `beforePosition`, when given), oldest first. */
  async function sceneMessages(sessionId: string, beforePosition?: number): Promise<SceneMessage[]> {
    const { rows } = await db.query<{ role: SceneMessage['role']; content: string; status: SceneMessage['status']; participant_id: string | null; author_name: string | null }>(
      'select role, content, status, participant_id, author_name from chat_messages where session_id = $1 and ($2::int is null or position < $2) order by position',
      [sessionId, beforePosition ?? null],
    );
    return rows.map((r) => ({ role: r.role, content: r.content, status: r.status, participantId: r.participant_id, authorName: r.author_name }));
  }

  async function lastText(sessionId: string): Promise<string> {
    const { rows } = await db.query<{ content: string }>(`select content from chat_messages where session_id = $1 and status = 'complete' order by position desc limit 1`, [sessionId]);
    return rows[0]?.content ?? '';
  }

  async function lastSpeaker(sessionId: string): Promise<string | null> {
    const { rows } = await db.query<{ participant_id: string | null }>(
      `select participant_id from chat_messages where session_id = $1 and status = 'complete' and role = 'assistant' order by position desc limit 1`,
      [sessionId],
    );
    return rows[0]?.participant_id ?? null;
  }

  /** One character's reply: stored as streaming under its name, written with its card, completed (the lock stays held). False when it failed or was stopped. */
  async function writeReply(
    speaker: GroupCharacter,
    cast: Map<string, SceneCharacter>,
    scene: WorldDefinition,
    cardMode: 'swap' | 'join',
    playerName: string,
    persona: Awaited<ReturnType<typeof enginePersona>>,
    session: Awaited<ReturnType<typeof ownedSession>>,
    lock: string,
    signal: AbortSignal,
    stream: EventStream,
    /** Regenerate: the speaker's reply written again, its text so far kept as a swipe. */
    again?: { id: string; position: number; swipes: Swipe[] },
  ): Promise<boolean> {
    const me = cast.get(speaker.id);
    if (!me) {
      stream.write('reply:error', { participantId: speaker.id, code: 'CHARACTER_GONE', message: `${speaker.name}'s world can no longer be opened.` });
      return false;
    }
    // the lock is still ours, renewed for this reply (a stop from another replica breaks it: then nothing more is written)
    const held = await db.query('update chat_sessions set turn_until = now() + make_interval(secs => $3) where id = $1 and turn_token = $2', [session.id, lock, TURN_LOCK_TTL_SECONDS]);
    if (!held.rowCount) return false;
    const messages = await sceneMessages(session.id, again?.position);
    const { history, userMessage } = speakerHistory(messages, speaker.id, playerName);
    const { rows: stateRows } = await db.query<{ state: string }>('select state from chat_sessions where id = $1', [session.id]);
    const state = JSON.parse(stateRows[0]!.state) as WorldState;
    const replyId = again?.id ?? newId('msg');
    if (again) {
      await db.query(`update chat_messages set status = 'streaming', error_code = null, error_message = null where id = $1`, [replyId]);
    } else {
      await db.query(
        `insert into chat_messages (id, session_id, position, role, content, status, participant_id, author_name)
         select $1, $2, coalesce(max(position) + 1, 0), 'assistant', '', 'streaming', $3, $4 from chat_messages where session_id = $2`,
        [replyId, session.id, speaker.id, me.name],
      );
      await db.query('update chat_sessions set message_count = message_count + 1 where id = $1', [session.id]);
    }
    stream.write('speaker', { participantId: speaker.id, name: me.name, messageId: replyId });
    let text = '';
    try {
      const others = [...cast.values()].filter((c) => c.participantId !== speaker.id);
      const out = await generateTurn(ctx, {
        accountId: session.account_id,
        accountName: playerName,
        persona,
        sessionId: session.id,
        seed: `${session.seed}|${replyId}`,
        world: speakerWorld(scene, me, others, cardMode),
        choicesOfWorld: session.world_id,
        state,
        history,
        userMessage,
        summary: session.summary,
        memory: session.memory ?? null,
        signal,
        onDelta: (delta) => {
          text += delta;
          stream.write('delta', { messageId: replyId, text: delta });
        },
      });
      const swipe = swipeOf(out);
      const swipes = [...(again?.swipes.filter((x) => x.content !== '') ?? []), swipe];
      await completeTurn(db, {
        sessionId: session.id,
        replyId,
        content: swipe.content,
        rawContent: swipe.rawContent,
        stateChanges: JSON.stringify(out.result.stateChanges),
        state: JSON.stringify(out.result.state),
        swipes: JSON.stringify(swipes),
        activeSwipeIndex: swipes.length - 1,
        model: out.model,
        tokenCount: out.tokenCount,
        generationTimeMs: out.generationTimeMs,
        truncated: out.truncated,
        promptTokens: out.promptTokens,
        creditsCharged: out.creditsCharged,
        sentPrompt: JSON.stringify(out.sentPrompt),
        summary: out.summary,
        compactedCount: out.compactedCount,
      });
      const { rows } = await db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where id = $1', [replyId]);
      stream.write('reply', { message: rows[0] ? messageView(rows[0]) : null, state: out.result.state });
      return true;
    } catch (err) {
      const stopped = signal.aborted;
      const shown = stopped ? { code: 'AI_ABORTED', message: 'Stopped before the reply was finished.' } : publicErrorOf(err);
      if (!stopped) ctx.log.warn({ err, sessionId: session.id }, 'group reply failed');
      // the failure stays visible on the reply (with what arrived); "reply now" tries again. A
      // regenerated reply goes back to what it was.
      if (again) await db.query(`update chat_messages set status = 'complete' where id = $1`, [replyId]);
      else await db.query(`update chat_messages set status = 'failed', content = $2, error_code = $3, error_message = $4 where id = $1`, [replyId, text, shown.code, shown.message]);
      stream.write('reply:error', { messageId: replyId, participantId: speaker.id, code: shown.code, message: shown.message, stopped });
      return false;
    }
  }
}

/** The world's first greeting entry (or a new one) to carry a group greeting through session start's macros. */
function greetingEntry(world: WorldDefinition): WorldDefinition['entries'][number] {
  const first = world.entries.find((e) => e.role === 'greeting');
  return (
    first ?? {
      id: 'group-greeting',
      name: 'Group greeting',
      content: '',
      role: 'greeting',
      apiRole: 'assistant',
      section: 'chat-history',
      position: 0,
      enabled: true,
      keywords: [],
      conditions: [],
      conditionLogic: 'all',
      depth: null,
      matchWholeWords: false,
      secondaryKeywords: [],
      secondaryKeywordLogic: 'AND_ANY',
      preventRecursion: false,
      excludeRecursion: false,
      tags: [],
      folderId: null,
    }
  );
}
