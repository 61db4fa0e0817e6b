import type { Queryable } from '@yumina/db';
import { participantOf, type Participant, type SessionRole } from './participants.ts';
import { TURN_LOCK_TTL_SECONDS } from './turn.ts';

/**
 * Rooms (issue 45, docs/ROOMS.md): a session several accounts play together. Players' messages
 * wait in the room's queue (room_queue) until the AI answers the round's messages together; the
 * statement that starts the reply moves them into the conversation with their authors. What
 * starts a reply is the room's trigger mode (manual: the host; timer: N seconds after the first
 * message collected; round: once every player online has written; instant: each message); who may
 * write is its speech mode (free, or turn-based: the participant holding the turn).
 *
 * The round's state is derived, never stored: `replying` while the session's turn lock is held,
 * `collecting` while messages wait, else `waiting`.
 */

export const TRIGGER_MODES = ['manual', 'timer', 'round', 'instant'] as const;
export const SPEECH_MODES = ['free', 'turns'] as const;
export type TriggerMode = (typeof TRIGGER_MODES)[number];
export type SpeechMode = (typeof SPEECH_MODES)[number];
export type RoundState = 'waiting' | 'collecting' | 'replying';

export interface RoomSettings {
  triggerMode: TriggerMode;
  /** Timer mode: seconds from the first message collected to the reply (2–600). */
  timerSeconds: number;
  speechMode: SpeechMode;
}

export interface Room extends RoomSettings {
  sessionId: string;
  worldId: string;
  /** The host: the session's owner, who pays. */
  hostAccountId: string;
  title: string;
  /** Turn-based speech: who may write now (null: nobody until the host passes the turn). */
  turnParticipantId: string | null;
  /** Timer mode: when the collected messages go to the AI (null: no timer running). */
  collectUntil: Date | null;
  maxPlayers: number;
  maxSpectators: number;
  endedAt: Date | null;
  /** Raised by every change of the room or its queue (migration 110): a member applies only newer status. */
  version: number;
  /** A reply is being written (the session's turn lock is held and has not expired). */
  replying: boolean;
  /** The lock's token while replying (for a replica that finds the reply's writer gone). */
  turnToken: string | null;
  createdAt: Date;
}

export interface QueuedMessage {
  id: string;
  participantId: string;
  authorName: string;
  content: string;
  createdAt: Date;
}

export function roundStateOf(room: Pick<Room, 'replying'>, queued: number): RoundState {
  if (room.replying) return 'replying';
  return queued > 0 ? 'collecting' : 'waiting';
}

function roomOf(r: Record<string, unknown>): Room {
  return {
    sessionId: r.session_id as string,
    worldId: r.world_id as string,
    hostAccountId: r.account_id as string,
    title: r.title as string,
    triggerMode: r.trigger_mode as TriggerMode,
    timerSeconds: r.timer_seconds as number,
    speechMode: r.speech_mode as SpeechMode,
    turnParticipantId: r.turn_participant_id as string | null,
    collectUntil: r.collect_until as Date | null,
    maxPlayers: r.max_players as number,
    maxSpectators: r.max_spectators as number,
    endedAt: r.ended_at as Date | null,
    version: Number(r.version),
    replying: r.replying as boolean,
    turnToken: (r.replying as boolean) ? (r.turn_token as string | null) : null,
    createdAt: r.room_created_at as Date,
  };
}

/**
 * Whether a reply is being written: the session's turn lock is held (and has not expired) and a
 * reply is streaming (an interface action holds the lock a moment too, writing no reply).
 */
const REPLYING = `(s.turn_token is not null and s.turn_until >= now() and exists (select 1 from chat_messages m where m.session_id = s.id and m.status = 'streaming'))`;

const ROOM_COLUMNS = `r.session_id, s.world_id, s.account_id, s.title, r.trigger_mode, r.timer_seconds, r.speech_mode, r.turn_participant_id,
  r.collect_until, r.max_players, r.max_spectators, r.ended_at, r.version, r.created_at as room_created_at, s.turn_token,
  ${REPLYING} as replying`;

/** The room of a session, or null when the session is not a room. */
export async function roomOfSession(db: Queryable, sessionId: string): Promise<Room | null> {
  const { rows } = await db.query<Record<string, unknown>>(
    `select ${ROOM_COLUMNS} from chat_rooms r join chat_sessions s on s.id = r.session_id where r.session_id = $1`,
    [sessionId],
  );
  return rows[0] ? roomOf(rows[0]) : null;
}

/** An account's access to a session: its role, the room (null on a single player's session) and its participant row. */
export interface SessionAccess {
  role: SessionRole;
  room: Room | null;
  participant: Participant | null;
  /** The name the member's messages go under now: their active persona's, else their display name (null outside a room). */
  name: string | null;
}

const ACCESS_SQL = {
  name: 'conversations.session_access',
  text: `select ${ROOM_COLUMNS}, s.id as sid, (r.session_id is not null) as is_room,
                p.id as p_id, p.kind as p_kind, p.account_id as p_account_id, p.role as p_role, p.position as p_position,
                p.joined_at as p_joined_at, p.left_at as p_left_at, p.barred as p_barred,
                coalesce(pe.name, a.display_name) as p_name
           from chat_sessions s
           left join chat_rooms r on r.session_id = s.id
           left join session_participants p on p.session_id = s.id and p.account_id = $2 and p.left_at is null
           left join accounts a on a.id = p.account_id
           left join personas pe on pe.account_id = p.account_id and pe.is_active
          where s.id = $1 and (s.account_id = $2 or (r.session_id is not null and p.id is not null))`,
};

/**
 * Who `accountId` is to the session, or null when it is nobody there (not the owner, not a current
 * member of its room): callers answer 404 then, never revealing the session.
 */
export async function sessionAccess(db: Queryable, sessionId: string, accountId: string): Promise<SessionAccess | null> {
  const { rows } = await db.query<Record<string, unknown>>(ACCESS_SQL, [sessionId, accountId]);
  const r = rows[0];
  if (!r) return null;
  const participant = r.p_id
    ? participantOf({
        id: r.p_id,
        session_id: sessionId,
        kind: r.p_kind,
        account_id: r.p_account_id,
        role: r.p_role,
        position: r.p_position,
        joined_at: r.p_joined_at,
        left_at: r.p_left_at,
        barred: r.p_barred,
      })
    : null;
  if (!r.is_room) return { role: 'owner', room: null, participant: null, name: null };
  const room = roomOf(r);
  return { role: participant && participant.role !== 'character' ? participant.role : 'host', room, participant, name: (r.p_name as string | null) ?? null };
}

/** Makes a session a room, its owner the host (the first participant). */
export async function createRoom(
  db: Queryable,
  input: { sessionId: string; hostAccountId: string; hostParticipantId: string; settings: RoomSettings; maxPlayers: number; maxSpectators: number },
): Promise<void> {
  await db.query(
    `insert into chat_rooms (session_id, trigger_mode, timer_seconds, speech_mode, turn_participant_id, max_players, max_spectators)
     values ($1, $2, $3, $4, null, $5, $6)`,
    [input.sessionId, input.settings.triggerMode, input.settings.timerSeconds, input.settings.speechMode, input.maxPlayers, input.maxSpectators],
  );
  await db.query(`insert into session_participants (id, session_id, kind, account_id, role, position) values ($1, $2, 'human', $3, 'host', 0)`, [
    input.hostParticipantId,
    input.sessionId,
    input.hostAccountId,
  ]);
  // turn-based rooms start with the host holding the turn
  if (input.settings.speechMode === 'turns') await db.query('update chat_rooms set turn_participant_id = $2 where session_id = $1', [input.sessionId, input.hostParticipantId]);
}

/** Changes a room's modes; switching to turn-based speech hands the turn to the host when nobody holds it. */
export async function updateRoomSettings(db: Queryable, sessionId: string, settings: Partial<RoomSettings>): Promise<void> {
  await db.query(
    `update chat_rooms r set trigger_mode = coalesce($2, trigger_mode), timer_seconds = coalesce($3, timer_seconds), speech_mode = coalesce($4, speech_mode),
            collect_until = case when coalesce($2, trigger_mode) = 'timer' then collect_until else null end,
            turn_participant_id = case when coalesce($4, speech_mode) = 'turns' and turn_participant_id is null
                                       then (select id from session_participants where session_id = $1 and role = 'host') else turn_participant_id end,
            updated_at = now()
      where session_id = $1`,
    [sessionId, settings.triggerMode ?? null, settings.timerSeconds ?? null, settings.speechMode ?? null],
  );
}

/** Hands the turn to a current player (or the host); false when that participant cannot hold it. */
export async function passTurn(db: Queryable, sessionId: string, participantId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `update chat_rooms set turn_participant_id = $2, updated_at = now()
      where session_id = $1 and ended_at is null
        and exists (select 1 from session_participants where id = $2 and session_id = $1 and left_at is null and role in ('host', 'player'))`,
    [sessionId, participantId],
  );
  return (rowCount ?? 0) > 0;
}

/** The player after `participantId` in list order (the host included), wrapping around; null when there is none. */
export async function nextInTurn(db: Queryable, sessionId: string, participantId: string | null): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `select id from session_participants where session_id = $1 and left_at is null and role in ('host', 'player') order by position, joined_at, id`,
    [sessionId],
  );
  if (rows.length === 0) return null;
  const at = rows.findIndex((r) => r.id === participantId);
  return rows[(at + 1) % rows.length]!.id;
}

export async function endRoom(db: Queryable, sessionId: string): Promise<boolean> {
  const { rowCount } = await db.query('update chat_rooms set ended_at = now(), collect_until = null, updated_at = now() where session_id = $1 and ended_at is null', [sessionId]);
  await db.query('delete from room_queue where session_id = $1', [sessionId]);
  await db.query('update room_invites set revoked_at = coalesce(revoked_at, now()) where session_id = $1', [sessionId]);
  return (rowCount ?? 0) > 0;
}

function queuedOf(r: Record<string, unknown>): QueuedMessage {
  return {
    id: r.id as string,
    participantId: r.participant_id as string,
    authorName: r.author_name as string,
    content: r.content as string,
    createdAt: r.created_at as Date,
  };
}

/** The room and its queue as one statement reads them (one snapshot: the version goes with this queue). */
export async function roomWithQueue(db: Queryable, sessionId: string): Promise<{ room: Room; queue: QueuedMessage[] } | null> {
  const { rows } = await db.query<Record<string, unknown>>(
    `select ${ROOM_COLUMNS},
            coalesce((select json_agg(json_build_object('id', q.id, 'participant_id', q.participant_id, 'author_name', q.author_name, 'content', q.content, 'created_at', q.created_at)
                                      order by q.created_at, q.id)
                        from room_queue q where q.session_id = r.session_id), '[]') as queue
       from chat_rooms r join chat_sessions s on s.id = r.session_id where r.session_id = $1`,
    [sessionId],
  );
  const r = rows[0];
  if (!r) return null;
  return { room: roomOf(r), queue: (r.queue as Record<string, unknown>[]).map((q) => queuedOf({ ...q, created_at: new Date(q.created_at as string) })) };
}

/** Marks a change the room's row does not show (a reply ended): its version rises. */
export async function touchRoom(db: Queryable, sessionId: string): Promise<void> {
  await db.query('update chat_rooms set updated_at = now() where session_id = $1', [sessionId]);
}

export async function roomQueue(db: Queryable, sessionId: string): Promise<QueuedMessage[]> {
  const { rows } = await db.query<Record<string, unknown>>('select * from room_queue where session_id = $1 order by created_at, id', [sessionId]);
  return rows.map(queuedOf);
}

export type QueueResult =
  | { status: 'queued'; message: QueuedMessage; queue: QueuedMessage[]; collectUntil: Date | null; version: number; replying: boolean }
  | { status: 'ended' | 'not-your-turn' | 'full' };

/**
 * Queues a member's message for the next reply, in one transaction on the room's row: refused when
 * the room ended, when speech is turn-based and the writer does not hold the turn, or when
 * `maxQueued` messages wait already. In timer mode the first message collected starts the timer.
 */
export async function queueMessage(
  db: Queryable,
  input: { id: string; sessionId: string; participantId: string; authorName: string; content: string; maxQueued: number },
): Promise<QueueResult> {
  const { rows } = await db.query<Record<string, unknown>>(
    'select ended_at, speech_mode, turn_participant_id, trigger_mode, timer_seconds, collect_until from chat_rooms where session_id = $1 for update',
    [input.sessionId],
  );
  const room = rows[0];
  if (!room || room.ended_at) return { status: 'ended' };
  if (room.speech_mode === 'turns' && room.turn_participant_id !== input.participantId) return { status: 'not-your-turn' };
  const waiting = await roomQueue(db, input.sessionId);
  if (waiting.length >= input.maxQueued) return { status: 'full' };
  const { rows: inserted } = await db.query<Record<string, unknown>>(
    'insert into room_queue (id, session_id, participant_id, author_name, content) values ($1, $2, $3, $4, $5) returning *',
    [input.id, input.sessionId, input.participantId, input.authorName, input.content],
  );
  // the timer starts with the round's first message (the insert's trigger raised the version already)
  // (with the room's row locked, a reply's start, which locks it too, is either before this or after)
  const { rows: after } = await db.query<{ collect_until: Date | null; version: string; replying: boolean }>(
    `update chat_rooms r set collect_until = case when trigger_mode = 'timer' and collect_until is null then now() + make_interval(secs => timer_seconds) else collect_until end
       from chat_sessions s
      where r.session_id = $1 and s.id = r.session_id
      returning r.collect_until, r.version, ${REPLYING} as replying`,
    [input.sessionId],
  );
  const message = queuedOf(inserted[0]!);
  const row = after[0];
  return { status: 'queued', message, queue: [...waiting, message], collectUntil: row?.collect_until ?? null, version: Number(row?.version ?? 0), replying: row?.replying ?? false };
}

/** Takes a queued message back (its author, or the host with `anyAuthor`); false when it is no longer queued. */
export async function withdrawQueued(db: Queryable, input: { sessionId: string; queuedId: string; participantId: string; anyAuthor: boolean }): Promise<boolean> {
  const { rowCount } = await db.query('delete from room_queue where session_id = $1 and id = $2 and ($4 or participant_id = $3)', [
    input.sessionId,
    input.queuedId,
    input.participantId,
    input.anyAuthor,
  ]);
  return (rowCount ?? 0) > 0;
}

/** A room message in the conversation, as a room turn reads its history. */
export interface RoomHistoryMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
  status: 'complete' | 'streaming' | 'failed';
  authorName: string | null;
}

export type StartRoomTurnResult =
  | { status: 'busy' | 'empty' | 'ended' }
  | {
      status: 'started';
      /** The session's state as the turn starts (JSON text). */
      state: string;
      /** The round's messages, now the conversation's, oldest first. */
      round: { id: string; position: number; participantId: string; authorName: string; content: string; createdAt: Date }[];
      /** The conversation before the round. */
      history: RoomHistoryMessage[];
      replyPosition: number;
    };

/**
 * Starts a room's reply, in one transaction: takes the session's turn lock (busy when a reply is
 * being written), settles replies a writer left `streaming`, moves the queued messages into the
 * conversation with their authors (each with the state the turn starts from, where a regenerated
 * reply starts again), adds the streaming reply after them and stops the room's timer. `empty`
 * when nothing waits (nothing written, the lock not taken).
 */
export async function startRoomTurn(db: Queryable, input: { sessionId: string; lockToken: string; replyId: string; newMessageId: () => string }): Promise<StartRoomTurnResult> {
  const { rows: roomRows } = await db.query<{ ended_at: Date | null }>('select ended_at from chat_rooms where session_id = $1 for update', [input.sessionId]);
  if (!roomRows[0] || roomRows[0].ended_at) return { status: 'ended' };
  const queued = await roomQueue(db, input.sessionId);
  if (queued.length === 0) return { status: 'empty' };
  const { rows: locked } = await db.query<{ state: string }>(
    `update chat_sessions set turn_token = $2, turn_until = now() + make_interval(secs => $3), updated_at = now()
      where id = $1 and (turn_token is null or turn_until < now()) returning state`,
    [input.sessionId, input.lockToken, TURN_LOCK_TTL_SECONDS],
  );
  if (!locked[0]) return { status: 'busy' };
  const state = locked[0].state;
  await db.query(`update chat_messages set status = 'failed', error_message = 'The reply was interrupted before it was finished.' where session_id = $1 and status = 'streaming'`, [
    input.sessionId,
  ]);
  const { rows: before } = await db.query<{ role: RoomHistoryMessage['role']; content: string; status: RoomHistoryMessage['status']; author_name: string | null; position: number }>(
    'select role, content, status, author_name, position from chat_messages where session_id = $1 order by position',
    [input.sessionId],
  );
  let position = (before.at(-1)?.position ?? -1) + 1;
  const round: Extract<StartRoomTurnResult, { status: 'started' }>['round'] = [];
  for (const q of queued) {
    const id = input.newMessageId();
    await db.query(
      `insert into chat_messages (id, session_id, position, role, content, state_snapshot, participant_id, author_name, created_at)
       values ($1, $2, $3, 'user', $4, $5, $6, $7, $8)`,
      [id, input.sessionId, position, q.content, state, q.participantId, q.authorName, q.createdAt],
    );
    round.push({ id, position, participantId: q.participantId, authorName: q.authorName, content: q.content, createdAt: q.createdAt });
    position++;
  }
  await db.query(`insert into chat_messages (id, session_id, position, role, content, status) values ($1, $2, $3, 'assistant', '', 'streaming')`, [
    input.replyId,
    input.sessionId,
    position,
  ]);
  await db.query('delete from room_queue where session_id = $1 and id = any($2)', [input.sessionId, queued.map((q) => q.id)]);
  await db.query('update chat_sessions set message_count = $2 where id = $1', [input.sessionId, position + 1]);
  await db.query('update chat_rooms set collect_until = null, updated_at = now() where session_id = $1', [input.sessionId]);
  return {
    status: 'started',
    state,
    round,
    history: before.map((m) => ({ role: m.role, content: m.content, status: m.status, authorName: m.author_name })),
    replyPosition: position,
  };
}

/** Rooms whose timer ran out with messages waiting and no reply being written (a replica's fallback sweep). */
export async function roomsDue(db: Queryable, limit = 50): Promise<string[]> {
  const { rows } = await db.query<{ session_id: string }>(
    `select r.session_id from chat_rooms r join chat_sessions s on s.id = r.session_id
      where r.collect_until < now() and r.ended_at is null and (s.turn_token is null or s.turn_until < now())
      order by r.collect_until limit $1`,
    [limit],
  );
  return rows.map((r) => r.session_id);
}

/**
 * A room's conversation as the model reads it: each player's message under its writer's name, and
 * the messages of one round (a player's messages between two replies) as one message.
 */
export function roomHistory(messages: readonly RoomHistoryMessage[]): { role: 'user' | 'assistant'; content: string }[] {
  const out: { role: 'user' | 'assistant'; content: string }[] = [];
  for (const m of messages) {
    if (m.status !== 'complete' || m.role === 'system') continue;
    const content = m.role === 'user' && m.authorName ? `${m.authorName}: ${m.content}` : m.content;
    const last = out.at(-1);
    if (last && last.role === m.role && m.role === 'user') last.content += `\n\n${content}`;
    else out.push({ role: m.role, content });
  }
  return out;
}
