import { type UsageLedgerRow, usageLedgerInsertFromJson, usageLedgerJson } from '@yumina/billing';
import type { Queryable } from '@yumina/db';
import type { HistoryCache } from './history-cache.ts';
import { storePromptSql } from './prompt-record.ts';

/**
 * The persistence of a turn (issue 24): what a send reads and writes, in as few statements as
 * the semantics allow, each a named prepared statement (parsed and planned once per connection).
 *
 *  - `startTurn`: one statement reads the login of the cookie, checks that its account owns the
 *    session, takes the session's turn lock (a token on its row), settles replies left `streaming`
 *    as failed (no turn writes them any more), stores the user message and the streaming reply and
 *    counts them on the session; it answers the session with the stamp of its world's versions (so
 *    the world's parsed definition can come from a per-process cache:
 *    containers/api/src/worlds/version.ts), the account's billing preference, connection and
 *    persona, the session's state and the history before the turn. With a HistoryCache, only the
 *    messages the cache does not hold travel (./history-cache.ts);
 *  - `completeTurn`: one statement writes the reply (its `truncated` flag included), the session's
 *    new state and the turn's usage rows and gives the lock back, returning the columns of the
 *    reply that the caller does not hold; `releaseTurn` ends a turn that failed;
 *  - `lockTurn` and `breakTurn`: the same lock for the routes that write a session's messages
 *    otherwise (regenerate, continue, revert, restore, world actions) and for `stop`.
 */

const INTERRUPTED = 'The reply was interrupted before it was finished.';

/** The stamp of the world a session plays: which version a viewer gets and when it last changed. */
export interface WorldStamp {
  owner_id: string;
  status: 'saved' | 'unpublished' | 'published' | 'held';
  revision: number;
  updated_at: Date;
  live_revision: number | null;
  live_updated_at: Date | null;
  has_live: boolean;
}

export interface TurnSessionRow {
  id: string;
  world_id: string;
  seed: string;
  summary: string | null;
  memory: string;
  message_count: number;
  /** Null when the world is gone. */
  world: WorldStamp | null;
  /** The account's rows a turn needs (one statement instead of one each). */
  account: TurnAccountRows;
}

export interface TurnHistoryMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
  status: 'complete' | 'streaming' | 'failed';
}

/** What a turn reads of the account beside its session: billing preference, private connection (sealed), active persona. */
export interface TurnAccountRows {
  /** Null when the account has no billing row yet (the default preference applies). */
  billingPreference: string | null;
  connection: {
    base_url: string;
    default_model: string;
    key_ciphertext: Buffer | null;
    key_iv: Buffer | null;
    key_tag: Buffer | null;
    key_id: string | null;
    key_last4: string | null;
    private_enabled: boolean;
    /** The connection's wire protocol (migration 140). */
    kind: string;
  } | null;
  persona: { name: string; description: string; appearance: string; personality: string; backstory: string } | null;
}

/** The session, its world's stamp and the account's rows, from the head row of START_SQL. */
export function sessionOf(r: Record<string, unknown>): TurnSessionRow {
  return {
    id: r.id as string,
    world_id: r.world_id as string,
    seed: r.seed as string,
    summary: r.summary as string | null,
    memory: (r.memory as string | null) ?? '',
    message_count: r.message_count as number,
    world: r.world_found
      ? {
          owner_id: r.owner_id as string,
          status: r.world_status as WorldStamp['status'],
          revision: r.revision as number,
          updated_at: r.world_updated_at as Date,
          live_revision: r.live_revision as number | null,
          live_updated_at: r.live_updated_at as Date | null,
          has_live: r.has_live as boolean,
        }
      : null,
    account: {
      // What the world's interface chose for the player in this world overrides the account's choice there.
      billingPreference: (r.world_provider as string | null) ?? (r.billing_preference as string | null) ?? null,
      connection: r.has_connection
        ? {
            base_url: r.base_url as string,
            default_model: (r.world_model as string | null) ?? (r.default_model as string),
            key_ciphertext: r.key_ciphertext as Buffer | null,
            key_iv: r.key_iv as Buffer | null,
            key_tag: r.key_tag as Buffer | null,
            key_id: r.key_id as string | null,
            key_last4: r.key_last4 as string | null,
            private_enabled: r.private_enabled as boolean,
            kind: (r.kind as string | null) ?? 'openai',
          }
        : null,
      persona: r.has_persona
        ? {
            name: r.persona_name as string,
            description: (r.persona_description as string | null) ?? '',
            appearance: (r.persona_appearance as string | null) ?? '',
            personality: (r.persona_personality as string | null) ?? '',
            backstory: (r.persona_backstory as string | null) ?? '',
          }
        : null,
    },
  };
}

const SETTLE_SQL = {
  name: 'conversations.settle_streaming',
  text: `update chat_messages set status = 'failed', error_message = $2 where session_id = $1 and status = 'streaming'`,
};

/** Replies of a session still `streaming` while its lock is held by the caller: no turn writes them any more. */
export async function settleStreamingReplies(db: Queryable, sessionId: string): Promise<number> {
  const { rowCount } = await db.query(SETTLE_SQL, [sessionId, INTERRUPTED]);
  return rowCount ?? 0;
}

/** How long a turn lock holds when its holder never gives it back (a process that died): a last resort. */
export const TURN_LOCK_TTL_SECONDS = 180;

/**
 * The lease of a turn that sends (startTurn, `leaseSeconds` unset): its turn renews it while it
 * runs (renewTurn, every third of it), so a turn whose replica died frees its session within a
 * lease instead of TURN_LOCK_TTL_SECONDS (the chaos drill, issue 51).
 */
export const TURN_LEASE_SECONDS = 30;

const RENEW_SQL = {
  name: 'conversations.turn_renew',
  text: `update chat_sessions set turn_until = now() + make_interval(secs => $3) where id = $1 and turn_token = $2`,
};

/** Extends the lock `lockToken` holds by `seconds` from now (nothing when another holds it). */
export async function renewTurn(db: Queryable, input: { sessionId: string; lockToken: string; seconds: number }): Promise<void> {
  await db.query(RENEW_SQL, [input.sessionId, input.lockToken, input.seconds]);
}

// One statement starts a turn. Its CTEs all run on one snapshot: the login (the cookie's token,
// live), the session if that account owns it with its lock as it was (`snap`: a lock held then,
// even if given back since, is busy, so a turn never starts from a snapshot older than the last
// turn's end), the count and history of its messages, then the writes, which happen only if the
// lock is taken (`own`, re-checked on the row as it is when updated: two sends at once, one wins)
// and the count the client last saw matches: the lock and the count on the session's row, the
// settle of replies left `streaming` (no turn writes them any more), the user message (with the
// state the turn starts from as its snapshot: a regeneration or continuation of its reply starts
// from it again, interface actions taken before the turn included) and the streaming reply. Its select reads the same snapshot, so it sees the history before this turn (a
// reply settled here still reads `streaming`; only complete messages make the prompt's history).
// It answers one row, none without a login: the login, the session with its world's stamp and the
// account's rows a turn needs, the state, the count, and of the history only the messages at
// positions from $8 on (all of them when the caller holds none), with fingerprints of the tuple
// versions below $8 and of all of them (see HistoryCache).
const START_SQL = {
  name: 'conversations.turn_start',
  text: `with login as (select l.id as login_id, l.account_id, l.expires_at, l.last_seen_at, a.username, a.display_name
                         from login_sessions l join accounts a on a.id = l.account_id
                        where l.token_hash = $7 and l.ended_at is null and l.expires_at > now()),
              snap as (select s.id, (s.turn_token is not null and s.turn_until >= now()) as busy,
                              exists (select 1 from chat_rooms r where r.session_id = s.id) as room,
                              exists (select 1 from chat_groups g where g.session_id = s.id) as grp
                         from chat_sessions s join login on login.account_id = s.account_id where s.id = $3),
              n as (select count(*)::int as c,
                           (bit_xor(h) filter (where position < $8))::text as fp_known,
                           bit_xor(h)::text as fp_all,
                           json_agg(json_build_array(role, content, status) order by position) filter (where position >= $8) as changed
                      from (select position, role, content, status, hashtextextended(xmin::text, position) as h
                              from chat_messages where session_id = (select id from snap)) m),
              own as (update chat_sessions set turn_token = $9, turn_until = now() + make_interval(secs => $10),
                             message_count = (select c from n) + 2, updated_at = now()
                       where id = (select id from snap where not busy and not room and not grp) and (turn_token is null or turn_until < now())
                         and ($6::int is null or (select c from n) = $6::int)
                   returning state),
              settled as (update chat_messages set status = 'failed', error_message = $5
                           where session_id = (select id from own, snap) and status = 'streaming'),
              u as (insert into chat_messages (id, session_id, position, role, content, state_snapshot) select $1, $3, c, 'user', $4, (select state from own) from n where exists (select 1 from own)),
              a as (insert into chat_messages (id, session_id, position, role, content, status) select $2, $3, c + 1, 'assistant', '', 'streaming' from n where exists (select 1 from own))
         select login.login_id, login.account_id, login.username, login.display_name, login.expires_at as login_expires_at, login.last_seen_at as login_last_seen_at,
                (snap.id is not null) as found, coalesce(snap.busy, false) as busy, coalesce(snap.room, false) as room, coalesce(snap.grp, false) as grp,
                s.id, s.world_id, s.seed, s.summary, s.memory, s.message_count,
                w.owner_id, w.status as world_status, w.revision, w.updated_at as world_updated_at, w.live_revision, w.live_updated_at,
                (w.live_definition is not null) as has_live, (w.id is not null) as world_found,
                b.preference as billing_preference, wc.provider as world_provider, wc.model as world_model,
                (cn.account_id is not null) as has_connection, cn.base_url, cn.default_model, cn.key_ciphertext, cn.key_iv, cn.key_tag, cn.key_id, cn.key_last4, cn.private_enabled, cn.kind,
                (p.id is not null) as has_persona, p.name as persona_name, p.description as persona_description,
                p.appearance as persona_appearance, p.personality as persona_personality, p.backstory as persona_backstory,
                (select state from own) as turn_state, n.c, n.fp_known, n.fp_all, n.changed
           from login
          cross join n
           left join snap on true
           left join chat_sessions s on s.id = snap.id
           left join worlds w on w.id = s.world_id
           left join billing_accounts b on b.account_id = login.account_id
           left join ai_connections cn on cn.account_id = login.account_id
           left join world_ai_choices wc on wc.account_id = login.account_id and wc.world_id = s.world_id
           left join personas p on p.account_id = login.account_id and p.is_active`,
};

/** The history below `position` when the cached one no longer matches (a message was edited, deleted or settled). */
const HISTORY_SQL = {
  name: 'conversations.turn_history',
  text: `select role, content, status from chat_messages where session_id = $1 and position < $2 order by position`,
};

export interface StartTurnInput {
  /** SHA-256 of the login cookie's token (login_sessions.token_hash). */
  tokenHash: Buffer;
  sessionId: string;
  /** The turn lock's token: completeTurn or releaseTurn gives the lock back with it. */
  lockToken: string;
  /** How long the lock holds unless renewed (renewTurn); default TURN_LEASE_SECONDS. */
  leaseSeconds?: number;
  content: string;
  /** The message count the client last saw; a mismatch is `stale` and nothing is written. */
  expectedMessageCount?: number;
  userMessageId: string;
  replyId: string;
}

/** The live login the cookie names: the account, and what its sliding expiry needs. */
export interface TurnLogin {
  id: string;
  accountId: string;
  username: string | null;
  /** The account's display name: `{{user}}` without a persona. */
  displayName: string;
  expiresAt: Date;
  lastSeenAt: Date;
}

export type StartTurnResult =
  | { status: 'unauthenticated' }
  /** Not a session of this account (or none): nothing written. */
  | { status: 'not-found'; login: TurnLogin }
  /** Another turn of the session holds the lock: nothing written. */
  | { status: 'busy'; login: TurnLogin }
  /** The client saw another message count (another tab wrote): nothing written. */
  | { status: 'stale'; login: TurnLogin }
  /** The session is a room: its players write through the room (docs/ROOMS.md); nothing written. */
  | { status: 'room'; login: TurnLogin }
  /** The session is a group scene: its characters answer through the scene (docs/GROUPS.md); nothing written. */
  | { status: 'group'; login: TurnLogin }
  | {
      status: 'started';
      login: TurnLogin;
      session: TurnSessionRow;
      /** Every message before this turn's, oldest first (the prompt keeps the complete ones). */
      messages: TurnHistoryMessage[];
      replyId: string;
      /** The position of the user message; the reply is the next. */
      position: number;
      /** The session's state (JSON text) after the messages were stored. */
      state: string;
    };

/**
 * Starts a turn (see the module comment): the login, the lock and both messages in one statement,
 * plus one read of the history when `cache` held a copy that no longer matches.
 */
export async function startTurn(db: Queryable, input: StartTurnInput, cache?: HistoryCache): Promise<StartTurnResult> {
  const known = cache?.get(input.sessionId);
  const { rows } = await db.query<
    Record<string, unknown> & { found: boolean; busy: boolean; room: boolean; grp: boolean; turn_state: string | null; c: number; fp_known: string | null; fp_all: string | null; changed: [TurnHistoryMessage['role'], string, TurnHistoryMessage['status']][] | null }
  >(START_SQL, [
    input.userMessageId,
    input.replyId,
    input.sessionId,
    input.content,
    INTERRUPTED,
    input.expectedMessageCount ?? null,
    input.tokenHash,
    known?.length ?? 0,
    input.lockToken,
    input.leaseSeconds ?? TURN_LEASE_SECONDS,
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
  if (head.room) return { status: 'room', login };
  if (head.grp) return { status: 'group', login };
  if (head.turn_state === null) {
    if (input.expectedMessageCount !== undefined && input.expectedMessageCount !== head.c && !head.busy) return { status: 'stale', login };
    // busy when looked at, or taken by a send of the same moment (the row's re-check)
    return { status: 'busy', login };
  }
  const changed = (head.changed ?? []).map(([role, content, status]): TurnHistoryMessage => ({ role, content, status }));
  let messages: TurnHistoryMessage[];
  if (!known) messages = changed;
  // (no rows below the cached length: a null fingerprint, as the cache holds it for no rows: '')
  else if (head.c >= known.length && (head.fp_known ?? '') === known.fingerprint) messages = known.messages.concat(changed);
  else {
    cache!.miss();
    const full = await db.query<TurnHistoryMessage & Record<string, unknown>>(HISTORY_SQL, [input.sessionId, head.c]);
    messages = full.rows;
  }
  cache?.set(input.sessionId, { length: head.c, fingerprint: head.fp_all ?? '', messages });
  return { status: 'started', login, session: sessionOf(head), messages, replyId: input.replyId, position: head.c, state: head.turn_state };
}

const COMPLETE_SQL = {
  name: 'conversations.turn_complete',
  text: `with m as (
           update chat_messages set content = $2, raw_content = $3, status = 'complete', error_message = null, state_changes = $4,
                  state_snapshot = $5, swipes = $6, active_swipe_index = $7, model = $8, token_count = $9, generation_time_ms = $10, truncated = $11,
                  prompt_tokens = $17, credits_charged = $18, cached_tokens = $20, cache_write_tokens = $21, credits_estimate = $22
            where id = $1
        returning position, role, compacted, attachments, created_at),
              s as (update chat_sessions set state = $5, summary = coalesce($13, summary), updated_at = now(),
                             spent_replies = spent_replies + 1, spent_tokens_in = spent_tokens_in + coalesce($17, 0),
                             spent_cached_tokens = spent_cached_tokens + coalesce($20, 0), spent_tokens_out = spent_tokens_out + $9,
                             spent_credits = spent_credits + coalesce($18, 0), spent_estimate = spent_estimate + coalesce($22, 0),
                             turn_token = case when turn_token = $15 then null else turn_token end,
                             turn_until = case when turn_token = $15 then null else turn_until end
                     where id = $12 and exists (select 1 from m)),
              usage as (${usageLedgerInsertFromJson('$14', 'exists (select 1 from m)')}),
              -- what was sent for the reply (its latest generation), for the player's "what was sent"
              ${storePromptSql('$19', '$1', '$12', 'exists (select 1 from m)')},
              -- the player's message this reply answers: a failure an earlier attempt left on it is over
              answered as (update chat_messages set error_code = null, error_message = null
                            where session_id = $12 and position = (select position from m) - 1 and error_code is not null),
              -- the oldest complete messages the turn's new story summary folded in (the history it condensed, in order)
              folded as (update chat_messages set compacted = true
                          where id in (select id from chat_messages
                                        where session_id = $12 and status = 'complete' and role in ('user', 'assistant')
                                          and position < (select position from m)
                                        order by position limit $16))
         select position, role, compacted, attachments, created_at from m`,
};

export interface CompleteTurnInput {
  sessionId: string;
  replyId: string;
  content: string;
  rawContent: string;
  /** JSON text of the turn's state changes. */
  stateChanges: string;
  /** JSON text of the state after the turn: the reply's snapshot and the session's state. */
  state: string;
  /** JSON text of the reply's alternatives. */
  swipes: string;
  activeSwipeIndex: number;
  model: string;
  tokenCount: number;
  generationTimeMs: number;
  truncated: boolean;
  /** The prompt's tokens, as the provider reported them (or as counted here). */
  promptTokens?: number | null;
  /** Platform credits the turn was charged; null on the player's own connection. */
  creditsCharged?: number | null;
  /** Of the prompt's tokens: read from the provider's cache, and written to it (null when not reported). */
  cachedTokens?: number | null;
  cacheWriteTokens?: number | null;
  /** On the player's own connection: the reply's cost at the platform's price of its model, when the price table names it. */
  creditsEstimate?: number | null;
  /** What was sent for the reply, packed by packPrompt (./prompt-record.ts), or null to keep none. */
  sentPrompt?: string | null;
  /** A new story summary for the session, or null to keep its summary. */
  summary: string | null;
  /**
   * How many of the oldest history messages (complete user and assistant messages, by position)
   * the new summary folded in: they are marked `compacted`. 0 (the default) marks none.
   */
  compactedCount?: number;
  /** Usage rows of the turn's AI calls not written yet (private connections): written with the reply, or not at all when it is gone. */
  usage?: readonly UsageLedgerRow[];
  /** The turn lock's token: the lock is given back in the same statement (if this token still holds it). */
  lockToken?: string;
}

export interface CompletedReply {
  position: number;
  role: 'user' | 'assistant' | 'system';
  compacted: boolean;
  attachments: string;
  created_at: Date;
}

/** Writes a finished reply, the session's new state and the turn's usage rows and gives the lock back, in one statement. Throws when the reply is gone (then the reply and its usage rows were not written). */
export async function completeTurn(db: Queryable, input: CompleteTurnInput): Promise<CompletedReply> {
  const { rows } = await db.query<CompletedReply & Record<string, unknown>>(COMPLETE_SQL, [
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
    input.sessionId,
    input.summary,
    usageLedgerJson(input.usage ?? []),
    input.lockToken ?? null,
    input.summary === null ? 0 : Math.max(0, Math.floor(input.compactedCount ?? 0)),
    input.promptTokens ?? null,
    input.creditsCharged ?? null,
    input.sentPrompt ?? null,
    input.cachedTokens ?? null,
    input.cacheWriteTokens ?? null,
    input.creditsEstimate ?? null,
  ]);
  if (!rows[0]) throw new Error('The reply was removed while it was being written.');
  return rows[0];
}

const LOCK_SQL = {
  name: 'conversations.turn_lock',
  text: `update chat_sessions set turn_token = $3, turn_until = now() + make_interval(secs => $4)
          where id = $1 and account_id = $2 and (turn_token is null or turn_until < now())`,
};

/** Takes the turn lock of a session `accountId` owns with `lockToken`; false when another turn holds it (or no such session). */
export async function lockTurn(db: Queryable, input: { sessionId: string; accountId: string; lockToken: string }): Promise<boolean> {
  const { rowCount } = await db.query(LOCK_SQL, [input.sessionId, input.accountId, input.lockToken, TURN_LOCK_TTL_SECONDS]);
  return (rowCount ?? 0) > 0;
}

/** `stop`: the session's lock is freed whoever holds it. */
export async function breakTurn(db: Queryable, input: { sessionId: string; accountId: string }): Promise<void> {
  await db.query(`update chat_sessions set turn_token = null, turn_until = null where id = $1 and account_id = $2`, [input.sessionId, input.accountId]);
}

const FAIL_SQL = {
  name: 'conversations.turn_fail',
  text: `with r as (select position, status from chat_messages where id = $1 and session_id = $5),
              gone as (delete from chat_messages where id = $1 and session_id = $5 and $2 and status <> 'complete' returning position),
              back as (update chat_messages set status = 'complete', error_message = null where id = $1 and session_id = $5 and not $2 and status = 'streaming'),
              u as (update chat_messages set error_code = $3, error_message = $4
                     where session_id = $5 and role = 'user' and position = (select position from r) - 1
                       and (not $2 or (select status from r) <> 'complete')),
              s as (update chat_sessions set message_count = message_count - (select count(*) from gone)::int, updated_at = now(),
                           turn_token = case when turn_token = $6 then null else turn_token end,
                           turn_until = case when turn_token = $6 then null else turn_until end
                     where id = $5)
         select (select count(*) from gone)::int as removed`,
};

/**
 * Ends a turn that failed (issue 30 A2), in one statement: the failure is not the world's message.
 * A new reply (`fresh`: a send, or a retry of a player's message left unanswered) is removed; a
 * reply that was being regenerated or continued stays as it was (back to complete, its text
 * untouched); the failure ({code, message}) is kept on the player's message the reply answered,
 * where the player sees it with a retry, and the turn's lock is given back when `lockToken` still
 * holds it. A reply that completed meanwhile is left alone.
 */
export async function failTurn(
  db: Queryable,
  input: { sessionId: string; replyId: string; fresh: boolean; code: string; message: string; lockToken: string | null },
): Promise<void> {
  await db.query(FAIL_SQL, [input.replyId, input.fresh, input.code, input.message, input.sessionId, input.lockToken]);
}

const RELEASE_SQL = {
  name: 'conversations.turn_release',
  text: `with f as (update chat_messages set status = 'failed', content = $2, error_message = $3 where id = $1 and status <> 'complete'),
              l as (update chat_sessions set turn_token = null, turn_until = null where id = $4 and turn_token = $5)
         select 1`,
};

/**
 * Ends a turn that did not complete, in one statement: its reply (if any) becomes `failed` with
 * the text received so far (a reply already complete is left alone), and the lock is given back
 * when `lockToken` still holds it.
 */
export async function releaseTurn(
  db: Queryable,
  input: { sessionId: string | null; lockToken: string | null; failedReply?: { id: string; partial: string; message: string } },
): Promise<void> {
  const reply = input.failedReply;
  await db.query(RELEASE_SQL, [reply?.id ?? null, reply?.partial ?? null, reply?.message ?? null, input.sessionId, input.lockToken]);
}

/**
 * Maintenance: replies left `streaming` by a turn that no longer runs (its process died, its
 * database went away) end as `failed`: those older than `olderThanSeconds` of sessions whose lock
 * is free or expired (a turn holding the lock settles its own).
 */
export async function settleAbandonedReplies(db: Queryable, olderThanSeconds: number): Promise<number> {
  const { rowCount } = await db.query(
    `update chat_messages m set status = 'failed', error_message = $2
       from chat_sessions s
      where s.id = m.session_id and m.status = 'streaming' and m.created_at < now() - make_interval(secs => $1)
        and (s.turn_token is null or s.turn_until < now())`,
    [olderThanSeconds, INTERRUPTED],
  );
  return rowCount ?? 0;
}
