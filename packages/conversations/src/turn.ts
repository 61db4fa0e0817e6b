import type { Queryable } from '@yumina/db';

/**
 * The persistence of a turn (issue 24): what a send reads and writes, in as few statements as
 * the semantics allow, each a named prepared statement (parsed and planned once per connection).
 *
 *  - `turnSession`: the session the account owns, with the stamp of its world's versions (so the
 *    world's parsed definition can come from a per-process cache: containers/api/src/worlds/version.ts);
 *  - `startTurn`: replies left `streaming` are settled as failed (the caller holds the turn lock, so
 *    no turn writes them any more), the history is read (role, content, status only), then one
 *    statement stores the user message and the streaming reply and counts them on the session,
 *    returning the session's current state;
 *  - `completeTurn`: one statement writes the reply (its `truncated` flag included) and the
 *    session's new state, returning the columns of the reply that the caller does not hold.
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
  } | null;
  persona: { name: string; description: string; appearance: string; personality: string; backstory: string } | null;
}

const SESSION_SQL = {
  name: 'conversations.turn_session',
  text: `select s.id, s.world_id, s.seed, s.summary, s.memory, s.message_count,
                w.owner_id, w.status as world_status, w.revision, w.updated_at as world_updated_at, w.live_revision, w.live_updated_at,
                (w.live_definition is not null) as has_live, (w.id is not null) as world_found,
                b.preference as billing_preference,
                (c.account_id is not null) as has_connection, c.base_url, c.default_model, c.key_ciphertext, c.key_iv, c.key_tag, c.key_id, c.key_last4, c.private_enabled,
                (p.id is not null) as has_persona, p.name as persona_name, p.description as persona_description,
                p.appearance as persona_appearance, p.personality as persona_personality, p.backstory as persona_backstory
           from chat_sessions s
           left join worlds w on w.id = s.world_id
           left join billing_accounts b on b.account_id = s.account_id
           left join ai_connections c on c.account_id = s.account_id
           left join personas p on p.account_id = s.account_id and p.is_active
          where s.id = $1 and s.account_id = $2`,
};

/** The session if `accountId` owns it (null otherwise), with its world's stamp. */
export async function turnSession(db: Queryable, sessionId: string, accountId: string): Promise<TurnSessionRow | null> {
  const { rows } = await db.query<Record<string, unknown>>(SESSION_SQL, [sessionId, accountId]);
  const r = rows[0];
  if (!r) return null;
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
      billingPreference: (r.billing_preference as string | null) ?? null,
      connection: r.has_connection
        ? {
            base_url: r.base_url as string,
            default_model: r.default_model as string,
            key_ciphertext: r.key_ciphertext as Buffer | null,
            key_iv: r.key_iv as Buffer | null,
            key_tag: r.key_tag as Buffer | null,
            key_id: r.key_id as string | null,
            key_last4: r.key_last4 as string | null,
            private_enabled: r.private_enabled as boolean,
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

// One statement starts a turn. Its data-modifying CTEs all run on one snapshot: the settle
// (replies left `streaming` become failed), the count of the messages before the turn (the user
// message's position, and the check of the count the client last saw: no rows in `ok` and nothing
// is written), the two inserts and the session's count. Its select reads the same snapshot, so it
// sees the history before this turn (a reply settled here still reads `streaming`; only complete
// messages make the prompt's history): row -1 carries the session's state and the count.
const START_SQL = {
  name: 'conversations.turn_start',
  text: `with settled as (update chat_messages set status = 'failed', error_message = $5 where session_id = $3 and status = 'streaming'),
              n as (select count(*)::int as c from chat_messages where session_id = $3),
              ok as (select c from n where $6::int is null or c = $6::int),
              u as (insert into chat_messages (id, session_id, position, role, content) select $1, $3, c, 'user', $4 from ok),
              a as (insert into chat_messages (id, session_id, position, role, content, status) select $2, $3, c + 1, 'assistant', '', 'streaming' from ok),
              s as (update chat_sessions set message_count = ok.c + 2, updated_at = now() from ok where id = $3 returning state)
         select -1 as position, null as role, null as content, null as status, (select state from s) as state, (select c from n) as c
         union all
         select position, role, content, status, null, null from chat_messages where session_id = $3
         order by 1`,
};

export interface StartTurnInput {
  sessionId: string;
  content: string;
  /** The message count the client last saw; a mismatch is `{ stale: true }` and nothing is written. */
  expectedMessageCount?: number;
  userMessageId: string;
  replyId: string;
}

export type StartTurnResult =
  | { stale: true }
  | {
      stale: false;
      /** Every message before this turn's, oldest first (the prompt keeps the complete ones). */
      messages: TurnHistoryMessage[];
      replyId: string;
      /** The position of the user message; the reply is the next. */
      position: number;
      /** The session's state (JSON text) after the messages were stored. */
      state: string;
    };

/** Starts a turn of a session whose turn lock the caller holds (see the module comment): one statement. */
export async function startTurn(db: Queryable, input: StartTurnInput): Promise<StartTurnResult> {
  const { rows } = await db.query<{ position: number; role: TurnHistoryMessage['role']; content: string; status: TurnHistoryMessage['status']; state: string | null; c: number | null }>(
    START_SQL,
    [input.userMessageId, input.replyId, input.sessionId, input.content, INTERRUPTED, input.expectedMessageCount ?? null],
  );
  const head = rows[0];
  if (!head || head.position !== -1 || head.c === null) throw new Error('The turn could not be started.');
  if (head.state === null) {
    if (input.expectedMessageCount !== undefined && input.expectedMessageCount !== head.c) return { stale: true };
    throw new Error('The session was removed while the turn started.');
  }
  const messages: TurnHistoryMessage[] = new Array(rows.length - 1);
  for (let i = 1; i < rows.length; i++) {
    const r = rows[i]!;
    messages[i - 1] = { role: r.role, content: r.content, status: r.status };
  }
  return { stale: false, messages, replyId: input.replyId, position: head.c, state: head.state };
}

const COMPLETE_SQL = {
  name: 'conversations.turn_complete',
  text: `with m as (
           update chat_messages set content = $2, raw_content = $3, status = 'complete', error_message = null, state_changes = $4,
                  state_snapshot = $5, swipes = $6, active_swipe_index = $7, model = $8, token_count = $9, generation_time_ms = $10, truncated = $11
            where id = $1
        returning position, role, compacted, attachments, created_at),
              s as (update chat_sessions set state = $5, summary = coalesce($13, summary), updated_at = now() where id = $12)
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
  /** A new story summary for the session, or null to keep its summary. */
  summary: string | null;
}

export interface CompletedReply {
  position: number;
  role: 'user' | 'assistant' | 'system';
  compacted: boolean;
  attachments: string;
  created_at: Date;
}

/** Writes a finished reply and the session's new state in one statement. Throws when the reply is gone. */
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
  ]);
  if (!rows[0]) throw new Error('The reply was removed while it was being written.');
  return rows[0];
}
