import { randomUUID } from 'node:crypto';
import { hashToken, newId, renewIfDue, SESSION_COOKIE } from '@yumina/accounts';
import type { MeteringContext, UsageRecord } from '@yumina/ai';
import { recordUsage } from '@yumina/billing';
import {
  CARD_MODES,
  failGroupReply,
  GROUP_MAX,
  GROUP_MIN,
  type GroupCharacter,
  groupCharacters,
  groupOfSession,
  HistoryCache,
  pickSpeakers,
  type GroupSceneMessage,
  releaseTurn,
  REPLY_MODES,
  speakerHistory,
  startGroupTurn,
  type StartGroupTurnResult,
  writeGroupReply,
} from '@yumina/conversations';
import { HttpError, parseWith, publicErrorOf } from '@yumina/http';
import { assetPath, isPlatformId } from '@yumina/sandbox';
import { createRandom, entrySchema, startSession, type WorldDefinition, type WorldState } from '@yumina/world';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { notSignedIn, requireAuth, sendRenewedCookie } from '../accounts/auth.ts';
import { openConnection } from '../accounts/ai-connection.ts';
import { meteringOf } from '../ai/metering.ts';
import type { AppContext } from '../context.ts';
import { type EventStream, openEventStream, whenClientGone } from '../event-stream.ts';
import { generateTurn, swipeOf, replyFigures } from '../conversations/generate.ts';
import { messageView, type MessageRow, ownedSession, playableWorld, type Swipe } from '../conversations/model.ts';
import { startNewSession } from '../conversations/new-session.ts';
import { enginePersona, enginePersonaOf } from '../conversations/persona.ts';
import { SESSION_BUSY_MESSAGE } from '../conversations/turn-lock.ts';
import { worldForViewer } from '../worlds/version.ts';
import { groupGreetingOf, type SceneCharacter, speakerWorld, talkativenessOf } from './speaker-world.ts';

const worldId = z.string().refine((v) => isPlatformId(v, 'world'), 'is not a world id');
const participantId = z.string().refine((v) => isPlatformId(v, 'participant'), 'is not a character of this scene');
const characterList = z
  .array(worldId)
  .min(GROUP_MIN, `a group scene has ${GROUP_MIN} to ${GROUP_MAX} characters`)
  .max(GROUP_MAX, `a group scene has ${GROUP_MIN} to ${GROUP_MAX} characters`)
  .refine((ids) => new Set(ids).size === ids.length, 'each character once');
const createBody = z.strictObject({
  /** The characters; omitted: those the scene's world (a group world) names. */
  characters: characterList.optional(),
  /** The world whose state, rules and interface the scene plays in; the first character's by default. */
  sceneWorldId: worldId.optional(),
  replyMode: z.enum(REPLY_MODES).default('natural'),
  cardMode: z.enum(CARD_MODES).default('swap'),
  autoReplies: z.number().int().min(0).max(20).default(0),
})
  .refine((b) => b.characters || b.sceneWorldId, { message: 'name the characters, or a group world (sceneWorldId) that names them', path: ['characters'] });
/** A group world's characters as its author sets them: 2–8, or none (no longer a group world). */
const worldCharactersBody = z.strictObject({ characters: z.union([z.array(worldId).length(0), characterList]) });
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
  /** The scenes' messages of this process (only the new ones travel with a request's first statement). */
  const sceneHistories = new HistoryCache(4_000_000);

  /** The characters a group world names, in order (the world must be one the viewer may open). */
  async function groupWorldCharacters(groupWorldId: string, accountId: string): Promise<string[]> {
    await playableWorld(db, groupWorldId, accountId);
    const { rows } = await db.query<{ character_world_id: string }>('select character_world_id from world_characters where world_id = $1 order by position', [groupWorldId]);
    return rows.map((r) => r.character_world_id);
  }

  /** A group world's characters with the names the viewer sees (the live name of a world not theirs). */
  app.get<{ Params: { id: string } }>('/api/worlds/:id/characters', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await playableWorld(db, request.params.id, auth.account.id);
    const { rows } = await db.query<{ id: string; name: string }>(
      `select w.id, case when w.owner_id = $2 then w.name else coalesce(w.live_name, w.name) end as name
         from world_characters c join worlds w on w.id = c.character_world_id
        where c.world_id = $1 and (w.owner_id = $2 or (w.status = 'published' and w.live_definition is not null))
        order by c.position`,
      [request.params.id, auth.account.id],
    );
    return { characters: rows };
  });

  /**
   * The author makes a world a group world: its characters (2–8 of the author's own worlds or
   * published ones, not itself), or none. A player starts a scene of them from the world's page,
   * played in this world (its state, rules and interface).
   */
  app.put<{ Params: { id: string } }>('/api/worlds/:id/characters', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(worldCharactersBody, request.body);
    const worldOf = request.params.id;
    const { rows: owned } = await db.query('select 1 from worlds where id = $1 and owner_id = $2', [worldOf, auth.account.id]);
    if (!owned[0]) throw new HttpError(404, 'NOT_FOUND', 'No such world of yours.');
    if (body.characters.includes(worldOf)) throw new HttpError(400, 'VALIDATION_FAILED', 'A group world cannot be one of its own characters.', undefined);
    const { rows: usable } = await db.query<{ id: string }>(
      `select id from worlds where id = any($1) and (owner_id = $2 or (status = 'published' and live_definition is not null))`,
      [body.characters, auth.account.id],
    );
    const missing = body.characters.filter((id) => !usable.some((u) => u.id === id));
    if (missing.length) throw new HttpError(404, 'NOT_FOUND', `No world of yours or published world ${missing[0]}: a group world's characters are worlds players can open.`);
    await db.transaction(async (tx) => {
      await tx.query('delete from world_characters where world_id = $1', [worldOf]);
      for (const [position, id] of body.characters.entries())
        await tx.query('insert into world_characters (world_id, character_world_id, position) values ($1, $2, $3)', [worldOf, id, position]);
    });
    reply.header('cache-control', 'no-store');
    return { characters: body.characters };
  });

  app.post('/api/groups', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(createBody, request.body);
    // a group world's own characters when none are named (its author's choice)
    const named = body.characters ?? (await groupWorldCharacters(body.sceneWorldId!, auth.account.id));
    if (named.length < GROUP_MIN)
      throw new HttpError(400, 'NOT_A_GROUP_WORLD', 'This world names no characters of a group scene: choose 2 to 8 characters.');
    // every character a world the player may open (404 otherwise), read before anything is written
    const characters = await Promise.all(
      named.map(async (id) => {
        const world = await playableWorld(db, id, auth.account.id);
        const { rows } = await db.query<{ card_source: string | null }>('select card_source from worlds where id = $1', [id]);
        return { id, world, cardSource: rows[0]?.card_source ?? null };
      }),
    );
    const sceneId = body.sceneWorldId ?? named[0]!;
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
    const [group, characters, pictures, scene] = await Promise.all([
      groupOfSession(db, sessionId),
      groupCharacters(db, sessionId),
      // each character's face: its world's cover (the live one of a world the player does not own)
      db.query<{ id: string; world_id: string; cover: string | null }>(
        `select p.id, w.id as world_id, case when w.owner_id = $2 then w.cover_asset_id else w.live_cover_asset_id end as cover
           from session_participants p join worlds w on w.id = p.world_id where p.session_id = $1 and p.kind = 'character'`,
        [sessionId, accountId],
      ),
      // the world the scene plays in (its state, rules and interface)
      db.query<{ world_id: string }>('select world_id from chat_sessions where id = $1', [sessionId]),
    ]);
    if (!group) throw new HttpError(404, 'NOT_FOUND', 'No such group scene.');
    const picture = new Map(pictures.rows.map((r) => [r.id, r.cover ? assetPath(r.world_id, r.cover) : null]));
    return { group, sceneWorldId: scene.rows[0]?.world_id ?? null, characters: characters.map((c) => ({ ...characterView(c), picture: picture.get(c.id) ?? null })) };
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
   * scene's turn lock `lock`: a stop or the client leaving aborts it; `end` is written whatever
   * happens, and the lock given back unless the last reply's statement gave it back already.
   */
  async function streamed(reply: FastifyReply, sessionId: string, lock: string, work: (signal: AbortSignal, stream: EventStream, released: () => void) => Promise<number>): Promise<void> {
    const controller = new AbortController();
    running.set(sessionId, controller);
    const stream = openEventStream(reply);
    whenClientGone(reply, () => controller.abort(new Error('The client went away')));
    let replies = 0;
    let lockGiven = false;
    try {
      replies = await work(controller.signal, stream, () => (lockGiven = true));
    } catch (err) {
      const shown = publicErrorOf(err);
      stream.write('reply:error', { code: shown.code, message: shown.message });
    } finally {
      running.delete(sessionId);
      if (!lockGiven) await releaseTurn(db, { sessionId, lockToken: lock }).catch(() => {});
      stream.write('end', { replies, stopped: controller.signal.aborted });
      reply.raw.end();
    }
  }

  /**
   * What a request of a scene reads and takes in one statement (@yumina/conversations'
   * startGroupTurn: the login of the cookie, the scene if that account owns it, the lock, the
   * player's message, the characters with their worlds' stamps, the account's rows, the state and
   * the messages), with the refusals answered before anything streams.
   */
  async function startRequest(
    request: FastifyRequest,
    reply: FastifyReply,
    input: { content: string | null; speaker: string | null; regenerate?: boolean },
  ): Promise<{ started: Extract<StartGroupTurnResult, { status: 'started' }>; lock: string; ready: Promise<{ cast: Map<string, SceneCharacter>; scene: WorldDefinition; turn: TurnReads }> }> {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) throw notSignedIn();
    const sessionId = (request.params as { id: string }).id;
    const lock = randomUUID();
    const started = await startGroupTurn(db, { tokenHash: hashToken(token), sessionId, lockToken: lock, content: input.content, userMessageId: newId('msg'), speaker: input.speaker, regenerate: input.regenerate }, sceneHistories);
    if (started.status === 'unauthenticated') throw notSignedIn();
    // sliding expiry, as every signed-in request has it (../accounts/auth.ts)
    const renewed = await renewIfDue(db, started.login, ctx.config.auth.sessionTtlDays).catch(() => null);
    if (renewed) sendRenewedCookie(ctx, reply, token, renewed);
    if (started.status === 'not-found') throw new HttpError(404, 'NOT_FOUND', 'No such group scene.');
    if (started.status === 'no-such-speaker') throw new HttpError(404, 'NOT_FOUND', 'No such character in this scene.');
    if (started.status === 'choose') throw new HttpError(400, 'CHOOSE_SPEAKER', 'Choose who replies (this scene lets the player choose).');
    if (started.status === 'busy') throw new HttpError(409, 'SESSION_BUSY', SESSION_BUSY_MESSAGE);
    // the worlds and the account's metering, awaited in the stream (a world that can no longer be opened ends it with reply:error; the lock is given back there)
    const ready = (async () => {
      const accountId = started.login.accountId;
      const { session } = started;
      // the worlds' parsed definitions from the per-process cache, by the stamps the statement read
      const scene = (await worldForViewer(db, session.world_id, { accountId }, session.world)).world;
      const cast = new Map<string, SceneCharacter>();
      await Promise.all(
        started.characters.map(async (c) => {
          if (!c.worldId) return;
          const world = await worldForViewer(db, c.worldId, { accountId }, c.world).then((v) => v.world, () => null);
          if (world) cast.set(c.id, { participantId: c.id, name: c.name || world.name, world, isScene: c.worldId === session.world_id });
        }),
      );
      const { billingPreference, connection, persona } = session.account;
      const metering = meteringOf(ctx, accountId, billingPreference ?? 'auto', connection ? openConnection(ctx, connection) : null);
      // usage rows of private calls are written with each reply (writeGroupReply); a failed reply's on their own
      const usage: UsageRecord[] = [];
      const engine = enginePersonaOf(persona);
      const turn: TurnReads = {
        metering: { ...metering, recordUsage: async (r) => void usage.push(r) },
        usage,
        persona: engine,
        playerName: engine?.name ?? started.login.displayName ?? 'Player',
      };
      return { cast, scene, turn };
    })();
    ready.catch(() => {});
    return { started, lock, ready };
  }

  /**
   * A message to the scene and its replies, as one event stream: `message` (the player's, stored
   * first), then for each speaker `speaker` {participantId, name, messageId}, `delta`s and `reply`
   * (the stored reply) or `reply:error`; `end` with the number of replies. With `speaker` the
   * player picks who replies (alone); without `content` the characters go on from where they are.
   * One statement starts it (startRequest) and one stores each reply (writeGroupReply, the last
   * one giving the lock back); the scene's messages are kept for the request, not read again.
   */
  app.post<{ Params: { id: string } }>('/api/groups/:id/replies', async (request, reply) => {
    const body = parseWith(replyBody, request.body);
    const sessionId = request.params.id;
    const { started, lock, ready } = await startRequest(request, reply, { content: body.content ?? null, speaker: body.speaker ?? null });
    const { characters, messages } = started;
    await streamed(reply, sessionId, lock, async (signal, stream, released) => {
      let replies = 0;
      if (body.content && started.userMessage) {
        const row = started.userMessage as unknown as MessageRow;
        messages.push({ id: row.id, position: row.position, role: 'user', content: row.content, status: 'complete', participantId: null, authorName: row.author_name ?? null });
        stream.write('message', { message: messageView(row) });
      }
      const { cast, scene, turn } = await ready;
      const random = createRandom(`${started.session.seed}|${sessionId}|${Date.now()}`);
      const lastComplete = messages.findLast((m) => m.status === 'complete');
      // the first speakers answer the message; in auto mode characters then go on, one at a time;
      // a character the player chose replies alone
      let budget = body.speaker ? 0 : started.autoReplies;
      let queue = pickSpeakers(started.replyMode, characters, {
        text: body.content ?? lastComplete?.content ?? '',
        lastSpeakerId: body.content ? null : (messages.findLast((m) => m.status === 'complete' && m.role === 'assistant')?.participantId ?? null),
        chosenId: body.speaker,
        random,
      });
      while (queue.length > 0 && !signal.aborted) {
        const speaker = queue.shift()!;
        const last = queue.length === 0 && budget === 0;
        const written = await writeReply(speaker, cast, scene, started, turn, lock, last, signal, stream, messages);
        if (!written) break;
        replies++;
        if (last) released();
        if (queue.length === 0 && budget > 0) {
          budget--;
          const mode = started.replyMode === 'in-turn' ? 'in-turn' : 'natural';
          queue = pickSpeakers(mode, characters, { text: written.content, lastSpeakerId: speaker.id, random }).slice(0, 1);
        }
      }
      return replies;
    });
  });

  /** Regenerates the scene's last reply as the same character: the earlier text stays as a swipe. Streams as `replies` does. */
  app.post<{ Params: { id: string } }>('/api/groups/:id/regenerate', async (request, reply) => {
    const sessionId = request.params.id;
    const { started, lock, ready } = await startRequest(request, reply, { content: null, speaker: null, regenerate: true });
    const last = started.messages.at(-1);
    const speaker = started.characters.find((c) => c.id === last?.participantId);
    if (!last || last.role !== 'assistant' || !speaker) {
      await releaseTurn(db, { sessionId, lockToken: lock });
      throw new HttpError(409, 'NOTHING_TO_REGENERATE', "The last message is not a character's reply to regenerate.");
    }
    await streamed(reply, sessionId, lock, async (signal, stream, released) => {
      const { cast, scene, turn } = await ready;
      const again = { id: last.id, swipes: JSON.parse(started.lastSwipes ?? '[]') as Swipe[] };
      const written = await writeReply(speaker, cast, scene, started, turn, lock, true, signal, stream, started.messages.slice(0, -1), again);
      if (written) released();
      return written ? 1 : 0;
    });
  });

  /**
   * One character's reply: written with its card and the scene so far (`messages`, the request's
   * copy, to which the reply is added), streamed, then stored in one statement that also renews the
   * lock for the next reply or, for the `last`, gives it back. Null when it failed or was stopped
   * (stored as failed with what arrived), or when the lock was no longer ours (a stop from another
   * replica: then nothing more is written).
   */
  async function writeReply(
    speaker: GroupCharacter,
    cast: Map<string, SceneCharacter>,
    scene: WorldDefinition,
    started: Extract<StartGroupTurnResult, { status: 'started' }>,
    turn: TurnReads,
    lock: string,
    last: boolean,
    signal: AbortSignal,
    stream: EventStream,
    messages: GroupSceneMessage[],
    /** Regenerate: the speaker's reply written again, its text so far kept as a swipe. */
    again?: { id: string; swipes: Swipe[] },
  ): Promise<{ content: string } | null> {
    const { session } = started;
    const me = cast.get(speaker.id);
    if (!me) {
      stream.write('reply:error', { participantId: speaker.id, code: 'CHARACTER_GONE', message: `${speaker.name}'s world can no longer be opened.` });
      return null;
    }
    const { history, userMessage } = speakerHistory(messages, speaker.id, turn.playerName);
    const replyId = again?.id ?? newId('msg');
    stream.write('speaker', { participantId: speaker.id, name: me.name, messageId: replyId });
    let text = '';
    try {
      const others = [...cast.values()].filter((c) => c.participantId !== speaker.id);
      const out = await generateTurn(ctx, {
        accountId: started.login.accountId,
        accountName: turn.playerName,
        persona: turn.persona,
        metering: turn.metering,
        sessionId: session.id,
        seed: `${session.seed}|${replyId}`,
        world: speakerWorld(scene, me, others, started.cardMode),
        choicesOfWorld: session.world_id,
        state: JSON.parse(started.state) as WorldState,
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
      const state = JSON.stringify(out.result.state);
      const row = await writeGroupReply(db, {
        sessionId: session.id,
        lockToken: lock,
        replyId,
        fresh: !again,
        participantId: speaker.id,
        authorName: me.name,
        content: swipe.content,
        rawContent: swipe.rawContent,
        stateChanges: JSON.stringify(out.result.stateChanges),
        state,
        swipes: JSON.stringify(swipes),
        activeSwipeIndex: swipes.length - 1,
        ...replyFigures(out),
        usage: turn.usage.splice(0),
        last,
      });
      // the lock was broken (a stop from elsewhere): nothing was written, nothing more is
      if (!row) return null;
      // the request's copy of the scene and state go on from this reply
      started.state = state;
      if (out.summary !== null) session.summary = out.summary;
      messages.push({ id: replyId, position: row.position as number, role: 'assistant', content: swipe.content, status: 'complete', participantId: speaker.id, authorName: me.name });
      // the view of the stored row, its JSON columns from the values in hand (not parsed back)
      const view = messageView({ ...(row as unknown as MessageRow), swipes: '[]', state_snapshot: null, state_changes: '[]' });
      const message = { ...view, stateChanges: out.result.stateChanges, stateSnapshot: out.result.state, swipes: swipes.map((x) => ({ content: x.content, snapshot: x.snapshot })) };
      stream.write('reply', { message, state: out.result.state });
      return { content: swipe.content };
    } catch (err) {
      const stopped = signal.aborted;
      const shown = stopped ? { code: 'AI_ABORTED', message: 'Stopped before the reply was finished.' } : publicErrorOf(err);
      if (!stopped) ctx.log.warn({ err, sessionId: session.id }, 'group reply failed');
      // usage rows the failed call recorded (a partial reply is charged too), written on their own
      for (const record of turn.usage.splice(0)) await recordUsage(db, record).catch((e: unknown) => ctx.log.error({ err: e, sessionId: session.id }, 'usage row not written'));
      // the failure stays visible on the reply (with what arrived); "reply now" tries again. A
      // regenerated reply stays as it was.
      await failGroupReply(db, { sessionId: session.id, lockToken: lock, replyId, fresh: !again, participantId: speaker.id, authorName: me.name, partial: text, code: shown.code, message: shown.message });
      messages.push({ id: replyId, position: -1, role: 'assistant', content: text, status: 'failed', participantId: speaker.id, authorName: me.name });
      stream.write('reply:error', { messageId: replyId, participantId: speaker.id, code: shown.code, message: shown.message, stopped });
      return null;
    }
  }
}

/** What a request of a scene reads once for all its replies: the account's metering (usage rows kept for each reply's statement), persona and name. */
interface TurnReads {
  metering: MeteringContext;
  usage: UsageRecord[];
  persona: ReturnType<typeof enginePersonaOf>;
  playerName: string;
}

/** The world's first greeting entry (or a new one, the schema's defaults filled) to carry a group greeting through session start's macros. */
function greetingEntry(world: WorldDefinition): WorldDefinition['entries'][number] {
  return (
    world.entries.find((e) => e.role === 'greeting') ??
    entrySchema.parse({ id: 'group-greeting', name: 'Group greeting', content: '', role: 'greeting', apiRole: 'assistant', section: 'chat-history' })
  );
}
