import { usageLedgerInsertFromJson, usageLedgerJson } from '@yumina/billing';
import type { Queryable } from '@yumina/db';
import type { CardMode, GroupCharacter, ReplyMode, SceneMessage } from './group.ts';
import type { HistoryCache } from './history-cache.ts';
import { storePromptSql } from './prompt-record.ts';
import { type CompleteTurnInput, sessionOf, TURN_LOCK_TTL_SECONDS, type TurnLogin, type TurnSessionRow, type WorldStamp } from './turn.ts';

/**
 * The persistence of a group scene's replies (docs/GROUPS.md), in as few statements as a
 * single character's send (./turn.ts): a request of the scene costs one statement to start and one
 * per reply.
 *
 *  - `startGroupTurn`: one statement reads the login of the cookie, checks that its account owns the
 *    scene, takes the session's turn lock, stores the player's message (if any) and counts it; it
 *    answers the scene's settings, its characters with the stamps of their worlds (their parsed
 *    cards come from the per-process cache: containers/api/src/worlds/version.ts), the session with
 *    its world's stamp, the account's billing preference, connection and persona, the session's
 *    state and the scene's messages before the request (the caller keeps them for the request and
 *    appends each reply it writes: nothing is read again between replies);
 *  - `writeGroupReply`: one statement stores a finished reply (a new one under its speaker's name,
 *    or a regenerated one with its swipes), the session's new state, the reply's usage rows and what
 *    was sent, and either renews the lock for the next reply or gives it back after the last; it
 *    writes nothing when the lock is no longer the caller's (a stop broke it) and answers the stored
 *    row. A reply is stored once it is finished (the event stream carries it meanwhile);
 *  - `failGroupReply`: a reply that failed or was stopped, stored as failed with what arrived (a
 *    regenerated one stays as it was).
 */

const START_SQL = {
  name: 'conversations.group_start',
  text: `with login as (select l.id as login_id, l.account_id, l.expires_at, l.last_seen_at, a.username, a.display_name
                         from login_sessions l join accounts a on a.id = l.account_id
                        where l.token_hash = $1 and l.ended_at is null and l.expires_at > now()),
              snap as (select s.id, (s.turn_token is not null and s.turn_until >= now()) as busy, g.reply_mode, g.card_mode, g.auto_replies
                         from chat_sessions s join login on login.account_id = s.account_id join chat_groups g on g.session_id = s.id where s.id = $2),
              ensemble as (select p.id, p.name, p.world_id, p.muted, p.talkativeness::float8 as talkativeness, p.position,
                                  w.owner_id, w.status, w.revision, w.updated_at, w.live_revision, w.live_updated_at, (w.live_definition is not null) as has_live
                             from session_participants p left join worlds w on w.id = p.world_id
                            where p.session_id = (select id from snap) and p.kind = 'character' and p.left_at is null),
              persona as (select p.* from personas p join login on p.account_id = login.account_id where p.is_active limit 1),
              -- the messages (as startTurn reads them, ./turn.ts): only those from position $9 on travel, with fingerprints of the tuple versions below $9 and of all
              n as (select count(*)::int as c,
                           (bit_xor(h) filter (where position < $9))::text as fp_known,
                           bit_xor(h)::text as fp_all,
                           json_agg(json_build_array(id, position, role, content, status, participant_id, author_name) order by position) filter (where position >= $9) as changed
                      from (select id, position, role, content, status, participant_id, author_name, hashtextextended(xmin::text, position) as h
                              from chat_messages where session_id = (select id from snap)) m),
              -- the writes happen only for a request that can be answered: a chosen speaker of this scene, and a message or a speaker in the 'choose' mode (or a regeneration)
              allowed as (select id from snap where not busy
                             and ($7::text is null or exists (select 1 from ensemble e where e.id = $7))
                             and ($6::text is not null or $7::text is not null or $8 or snap.reply_mode <> 'choose')),
              own as (update chat_sessions set turn_token = $3, turn_until = now() + make_interval(secs => $4),
                             message_count = message_count + (case when $6::text is null then 0 else 1 end),
                             updated_at = case when $6::text is null then updated_at else now() end
                       where id = (select id from allowed) and (turn_token is null or turn_until < now())
                   returning state),
              u as (insert into chat_messages (id, session_id, position, role, content, state_snapshot, author_name)
                    select $5, $2, coalesce((select max(position) + 1 from chat_messages where session_id = $2), 0), 'user', $6, own.state,
                           coalesce((select name from persona), (select display_name from login), 'Player')
                      from own where $6::text is not null
                 returning *)
         select login.login_id, login.account_id, login.username, login.display_name, login.expires_at as login_expires_at, login.last_seen_at as login_last_seen_at,
                (snap.id is not null) as found, coalesce(snap.busy, false) as busy, snap.reply_mode, snap.card_mode, snap.auto_replies,
                s.id, s.world_id, s.seed, s.summary, s.memory, s.message_count,
                w.owner_id, w.status as world_status, w.revision, w.updated_at as world_updated_at, w.live_revision, w.live_updated_at,
                (w.live_definition is not null) as has_live, (w.id is not null) as world_found,
                b.preference as billing_preference, wc.provider as world_provider, wc.model as world_model,
                (cn.account_id is not null) as has_connection, cn.base_url, cn.default_model, cn.key_ciphertext, cn.key_iv, cn.key_tag, cn.key_id, cn.key_last4, cn.private_enabled,
                (p.id is not null) as has_persona, p.name as persona_name, p.description as persona_description,
                p.appearance as persona_appearance, p.personality as persona_personality, p.backstory as persona_backstory,
                (select state from own) as turn_state,
                (select json_agg(e order by e.position, e.id) from ensemble e) as ensemble,
                n.c, n.fp_known, n.fp_all, n.changed,
                (select m.swipes from chat_messages m where m.session_id = snap.id order by m.position desc limit 1) as last_swipes,
                (select row_to_json(u) from u) as user_message
           from login
          cross join n
           left join snap on true
           left join chat_sessions s on s.id = snap.id
           left join worlds w on w.id = s.world_id
           left join billing_accounts b on b.account_id = login.account_id
           left join ai_connections cn on cn.account_id = login.account_id
           left join world_ai_choices wc on wc.account_id = login.account_id and wc.world_id = s.world_id
           left join persona p on true`,
};

export interface StartGroupTurnInput {
  /** SHA-256 of the login cookie's token (login_sessions.token_hash). */
  tokenHash: Buffer;
  sessionId: string;
  lockToken: string;
  /** The player's message, or null (the characters go on, or a chosen one replies). */
  content: string | null;
  userMessageId: string;
  /** The character the player chose to reply now (must be one of the scene's). */
  speaker: string | null;
  /** A regeneration of the last reply (no message, and no choice needed in the 'choose' mode). */
  regenerate?: boolean;
}

/** A character of the scene with the stamp of its world (null when the world is gone). */
export interface EnsembleCharacter extends GroupCharacter {
  world: WorldStamp | null;
}

/** A message of the scene as the request keeps it: what a prompt reads, and what a regeneration needs of the last one. */
export interface GroupSceneMessage extends SceneMessage {
  id: string;
  position: number;
}

export type StartGroupTurnResult =
  | { status: 'unauthenticated' }
  /** Not a group scene of this account: nothing written. */
  | { status: 'not-found'; login: TurnLogin }
  /** The chosen speaker is not a character of the scene: nothing written. */
  | { status: 'no-such-speaker'; login: TurnLogin }
  /** The 'choose' mode and nobody chosen: nothing written. */
  | { status: 'choose'; login: TurnLogin }
  /** Another turn holds the lock: nothing written. */
  | { status: 'busy'; login: TurnLogin }
  | {
      status: 'started';
      login: TurnLogin;
      session: TurnSessionRow;
      replyMode: ReplyMode;
      cardMode: CardMode;
      autoReplies: number;
      characters: EnsembleCharacter[];
      /** The scene's messages before the request, oldest first (the player's new one not among them). */
      messages: GroupSceneMessage[];
      /** JSON text of the swipes of the scene's last message before the request (a regeneration keeps them), null without messages. */
      lastSwipes: string | null;
      /** The player's message as stored (the row), or null without one. */
      userMessage: Record<string, unknown> | null;
      /** The session's state (JSON text). */
      state: string;
    };

type EnsembleRow = {
  id: string;
  name: string | null;
  world_id: string | null;
  muted: boolean;
  talkativeness: number;
  position: number;
  owner_id: string | null;
  status: WorldStamp['status'] | null;
  revision: number | null;
  updated_at: string | null;
  live_revision: number | null;
  live_updated_at: string | null;
  has_live: boolean;
};

/** The messages below `position` when the cached ones no longer match (a message was edited, deleted or swiped). */
const MESSAGES_SQL = {
  name: 'conversations.group_messages',
  text: `select id, position, role, content, status, participant_id, author_name from chat_messages where session_id = $1 and position < $2 order by position`,
};

type MessageTuple = [string, number, SceneMessage['role'], string, SceneMessage['status'], string | null, string | null];
const messageOf = ([id, position, role, content, status, participantId, authorName]: MessageTuple): GroupSceneMessage => ({ id, position, role, content, status, participantId, authorName });

/**
 * Starts a request of a group scene (see the module comment) in one statement, plus one read of
 * the messages when `cache` held a copy that no longer matches. With a cache (a HistoryCache of its
 * own: it holds scene messages), only the messages it lacks travel.
 */
export async function startGroupTurn(db: Queryable, input: StartGroupTurnInput, cache?: HistoryCache): Promise<StartGroupTurnResult> {
  const known = cache?.get(input.sessionId);
  const { rows } = await db.query<Record<string, unknown>>(START_SQL, [
    input.tokenHash,
    input.sessionId,
    input.lockToken,
    TURN_LOCK_TTL_SECONDS,
    input.userMessageId,
    input.content,
    input.speaker,
    input.regenerate === true,
    known?.length ?? 0,
  ]);
  const head = rows[0];
  if (!head) return { status: 'unauthenticated' };
  const login: TurnLogin = {
    id: head.login_id as string,
    accountId: head.account_id as string,
    username: head.username as string | null,
    displayName: head.display_name as string,
    expiresAt: head.login_expires_at as Date,
    lastSeenAt: head.login_last_seen_at as Date,
  };
  if (!head.found) return { status: 'not-found', login };
  const ensemble = (head.ensemble as EnsembleRow[] | null) ?? [];
  if (head.turn_state === null) {
    if (input.speaker && !ensemble.some((c) => c.id === input.speaker)) return { status: 'no-such-speaker', login };
    if (!input.content && !input.speaker && !input.regenerate && head.reply_mode === 'choose') return { status: 'choose', login };
    return { status: 'busy', login };
  }
  const characters = ensemble.map(
    (r): EnsembleCharacter => ({
      id: r.id,
      name: r.name ?? '',
      worldId: r.world_id,
      muted: r.muted,
      talkativeness: Number(r.talkativeness),
      position: r.position,
      world:
        r.owner_id === null
          ? null
          : {
              owner_id: r.owner_id,
              status: r.status!,
              revision: r.revision!,
              updated_at: new Date(r.updated_at!),
              live_revision: r.live_revision,
              live_updated_at: r.live_updated_at === null ? null : new Date(r.live_updated_at),
              has_live: r.has_live,
            },
    }),
  );
  const changed = ((head.changed as MessageTuple[] | null) ?? []).map(messageOf);
  const c = head.c as number;
  let messages: GroupSceneMessage[];
  if (!known) messages = changed;
  else if (c >= known.length && ((head.fp_known as string | null) ?? '') === known.fingerprint) messages = (known.messages as readonly GroupSceneMessage[]).concat(changed);
  else {
    cache!.miss();
    const full = await db.query<{ id: string; position: number; role: SceneMessage['role']; content: string; status: SceneMessage['status']; participant_id: string | null; author_name: string | null }>(MESSAGES_SQL, [input.sessionId, c]);
    messages = full.rows.map((r) => messageOf([r.id, r.position, r.role, r.content, r.status, r.participant_id, r.author_name]));
  }
  // (a copy: the caller adds the request's messages to its own)
  cache?.set(input.sessionId, { length: c, fingerprint: (head.fp_all as string | null) ?? '', messages: messages.slice() });
  const user = head.user_message as Record<string, unknown> | null;
  return {
    status: 'started',
    login,
    session: sessionOf(head),
    replyMode: head.reply_mode as ReplyMode,
    cardMode: head.card_mode as CardMode,
    autoReplies: head.auto_replies as number,
    characters,
    messages,
    lastSwipes: (head.last_swipes as string | null) ?? null,
    userMessage: user ? { ...user, created_at: new Date(user.created_at as string) } : null,
    state: head.turn_state as string,
  };
}

const WRITE_SQL = {
  name: 'conversations.group_reply',
  text: `with held as (select id from chat_sessions where id = $1 and turn_token = $2),
              m as (insert into chat_messages as c (id, session_id, position, role, content, raw_content, status, state_changes, state_snapshot, swipes, active_swipe_index,
                                                    model, token_count, generation_time_ms, truncated, prompt_tokens, credits_charged, participant_id, author_name,
                                                    cached_tokens, cache_write_tokens, credits_estimate)
                    select $3, $1, coalesce((select max(position) + 1 from chat_messages where session_id = $1), 0), 'assistant', $4, $5, 'complete', $6, $7, $8, $9,
                           $10, $11, $12, $13, $14, $15, $16, $17, $25, $26, $27
                      from held
                    on conflict (id) do update set content = excluded.content, raw_content = excluded.raw_content, status = 'complete', error_code = null, error_message = null,
                           state_changes = excluded.state_changes, state_snapshot = excluded.state_snapshot, swipes = excluded.swipes, active_swipe_index = excluded.active_swipe_index,
                           model = excluded.model, token_count = excluded.token_count, generation_time_ms = excluded.generation_time_ms, truncated = excluded.truncated,
                           prompt_tokens = excluded.prompt_tokens, credits_charged = excluded.credits_charged, cached_tokens = excluded.cached_tokens,
                           cache_write_tokens = excluded.cache_write_tokens, credits_estimate = excluded.credits_estimate
                     where c.session_id = excluded.session_id
                 returning *),
              s as (update chat_sessions set state = $7, summary = coalesce($18, summary), updated_at = now(),
                           spent_replies = spent_replies + 1, spent_tokens_in = spent_tokens_in + coalesce($14, 0),
                           spent_cached_tokens = spent_cached_tokens + coalesce($25, 0), spent_tokens_out = spent_tokens_out + $11,
                           spent_credits = spent_credits + coalesce($15, 0), spent_estimate = spent_estimate + coalesce($27, 0),
                           message_count = message_count + (case when $19 then 1 else 0 end),
                           turn_token = case when $20 then null else turn_token end,
                           turn_until = case when $20 then null else now() + make_interval(secs => $21) end
                     where id = $1 and exists (select 1 from m)),
              usage as (${usageLedgerInsertFromJson('$22', 'exists (select 1 from m)')}),
              ${storePromptSql('$23', '$3', '$1', 'exists (select 1 from m)')},
              folded as (update chat_messages set compacted = true
                          where id in (select id from chat_messages
                                        where session_id = $1 and status = 'complete' and role in ('user', 'assistant')
                                          and position < (select position from m)
                                        order by position limit $24))
         select * from m`,
};

/** A character's reply as completeTurn writes a turn's (./turn.ts), and what only a group reply has. */
export interface WriteGroupReplyInput extends Omit<CompleteTurnInput, 'lockToken'> {
  lockToken: string;
  /** A new reply (true) or a regenerated one (false: its row is updated). */
  fresh: boolean;
  participantId: string;
  authorName: string;
  /** The request's last reply: the lock is given back (else renewed for the next). */
  last: boolean;
}

/** Stores a finished reply of a scene (see the module comment); its row, or null when the lock is no longer the caller's (nothing written). */
export async function writeGroupReply(db: Queryable, input: WriteGroupReplyInput): Promise<Record<string, unknown> | null> {
  const { rows } = await db.query<Record<string, unknown>>(WRITE_SQL, [
    input.sessionId,
    input.lockToken,
    input.replyId,
    input.content,
    input.rawContent,
    input.stateChanges,
    input.state,
    input.swipes,
    input.activeSwipeIndex,
    input.model,
    input.tokenCount,
    input.generationTimeMs,
    input.truncated,
    input.promptTokens ?? null,
    input.creditsCharged ?? null,
    input.participantId,
    input.authorName,
    input.summary,
    input.fresh,
    input.last,
    TURN_LOCK_TTL_SECONDS,
    usageLedgerJson(input.usage ?? []),
    input.sentPrompt ?? null,
    input.summary === null ? 0 : Math.max(0, Math.floor(input.compactedCount ?? 0)),
    input.cachedTokens ?? null,
    input.cacheWriteTokens ?? null,
    input.creditsEstimate ?? null,
  ]);
  return rows[0] ?? null;
}

const FAIL_SQL = {
  name: 'conversations.group_reply_failed',
  text: `with held as (select id from chat_sessions where id = $1 and turn_token = $2),
              m as (insert into chat_messages (id, session_id, position, role, content, status, participant_id, author_name, error_code, error_message)
                    select $3, $1, coalesce((select max(position) + 1 from chat_messages where session_id = $1), 0), 'assistant', $4, 'failed', $5, $6, $7, $8
                      from held where $9
                 returning position)
         update chat_sessions set message_count = message_count + 1 where id = $1 and exists (select 1 from m)`,
};

/**
 * A reply that failed or was stopped: a new one is stored as failed with the text that arrived and
 * the failure (seen on it; "reply now" tries again), while the lock is still the caller's; a
 * regenerated one (`fresh` false) stays as it was (nothing is written).
 */
export async function failGroupReply(
  db: Queryable,
  input: { sessionId: string; lockToken: string; replyId: string; fresh: boolean; participantId: string; authorName: string; partial: string; code: string; message: string },
): Promise<void> {
  if (!input.fresh) return;
  await db.query(FAIL_SQL, [input.sessionId, input.lockToken, input.replyId, input.partial, input.participantId, input.authorName, input.code, input.message, input.fresh]);
}
