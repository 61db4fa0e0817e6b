import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';
import { worldForViewer } from '../worlds/version.ts';
import { type WorldDefinition, type WorldState } from '@yumina/world';

export interface MessageRow {
  id: string;
  session_id: string;
  position: number;
  role: 'user' | 'assistant' | 'system';
  content: string;
  raw_content: string | null;
  status: 'complete' | 'streaming' | 'failed';
  error_message: string | null;
  /** On a player's message: the code of the failure of the turn that answered it (issue 30 A2); null otherwise. */
  error_code?: string | null;
  state_changes: string;
  state_snapshot: string | null;
  swipes: string;
  active_swipe_index: number;
  model: string | null;
  token_count: number | null;
  prompt_tokens: number | null;
  credits_charged: string | number | null;
  /** Of prompt_tokens: read from the provider's cache, written to it (null when not reported or before migration 155). */
  cached_tokens?: number | null;
  cache_write_tokens?: number | null;
  credits_estimate?: string | number | null;
  generation_time_ms: number | null;
  compacted: boolean;
  attachments: string;
  created_at: Date;
  /** The reply was cut at AI_REPLY_MAX_BYTES. */
  truncated: boolean;
  /** In a room: the member who wrote a player's message, and the name it was written under (null elsewhere). */
  participant_id?: string | null;
  author_name?: string | null;
}

export interface SessionRow {
  id: string;
  world_id: string;
  account_id: string;
  title: string;
  seed: string;
  state: string;
  initial_state: string;
  summary: string | null;
  /** Session memory (prompt step 9), edited by the player; '' when none. */
  memory?: string;
  message_count: number;
  branched_from: string | null;
  created_at: Date;
  updated_at: Date;
  /** The session is a room (docs/ROOMS.md): ownedSession says so. */
  is_room?: boolean;
  /** A group scene (docs/GROUPS.md): replies are written through the scene. */
  is_group?: boolean;
  /** The session's running total of its replies (migration 155). */
  spent_replies?: number;
  spent_tokens_in?: string | number;
  spent_cached_tokens?: string | number;
  spent_tokens_out?: string | number;
  spent_credits?: string | number;
  spent_estimate?: string | number;
}

/** A swipe: one alternative reply with the state it leads to. */
export interface Swipe {
  content: string;
  rawContent: string;
  snapshot: WorldState;
  stateChanges: unknown[];
}

export function messageView(m: MessageRow) {
  return {
    id: m.id,
    position: m.position,
    role: m.role,
    content: m.content,
    /** The reply as the model wrote it, directives included (content is what the player reads); only when it differs (absent: the same as content). */
    ...(m.raw_content !== null && m.raw_content !== m.content ? { rawContent: m.raw_content } : {}),
    status: m.status,
    errorMessage: m.error_message,
    /** A player's message whose turn failed: the failure (shown beside it with a retry; no reply was kept). */
    failure: m.role === 'user' && m.error_code ? { code: m.error_code, message: m.error_message ?? '' } : null,
    stateChanges: JSON.parse(m.state_changes) as unknown[],
    stateSnapshot: m.state_snapshot ? (JSON.parse(m.state_snapshot) as unknown) : null,
    swipes: (JSON.parse(m.swipes) as Swipe[]).map((s) => ({ content: s.content, snapshot: s.snapshot })),
    activeSwipeIndex: m.active_swipe_index,
    model: m.model,
    tokenCount: m.token_count,
    /** The prompt's tokens (null for replies written before they were kept). */
    promptTokens: m.prompt_tokens,
    /** Platform credits this reply cost; null when it ran on the player's own connection. */
    creditsCharged: m.credits_charged === null ? null : Number(m.credits_charged),
    /** Of promptTokens: read from the provider's prompt cache, and written to it (null when the provider did not say). */
    cachedTokens: m.cached_tokens ?? null,
    cacheWriteTokens: m.cache_write_tokens ?? null,
    /** On the player's own connection: the reply at the platform's price of its model, when the platform prices it (null otherwise). */
    creditsEstimate: m.credits_estimate === null || m.credits_estimate === undefined ? null : Number(m.credits_estimate),
    generationTimeMs: m.generation_time_ms,
    compacted: m.compacted,
    truncated: m.truncated,
    attachments: JSON.parse(m.attachments) as unknown[],
    createdAt: m.created_at.toISOString(),
    /** In a room: who wrote the player's message, under which name (absent on a single player's session). */
    ...(m.participant_id ? { participantId: m.participant_id, authorName: m.author_name ?? '' } : m.author_name ? { authorName: m.author_name } : {}),
  };
}

export function sessionView(s: SessionRow) {
  return {
    id: s.id,
    worldId: s.world_id,
    title: s.title,
    messageCount: s.message_count,
    branchedFrom: s.branched_from,
    memory: s.memory ?? '',
    /**
     * What the session's replies used and cost, every reply written in it (regenerated and
     * continued ones too): tokens sent (of them read from the provider's cache) and written, platform
     * credits charged, and on the player's own key the platform's estimate where it prices the model.
     */
    spent: {
      replies: s.spent_replies ?? 0,
      tokensIn: Number(s.spent_tokens_in ?? 0),
      cachedTokens: Number(s.spent_cached_tokens ?? 0),
      tokensOut: Number(s.spent_tokens_out ?? 0),
      credits: Number(s.spent_credits ?? 0),
      creditsEstimate: Number(s.spent_estimate ?? 0),
    },
    state: JSON.parse(s.state) as unknown,
    createdAt: s.created_at.toISOString(),
    updatedAt: s.updated_at.toISOString(),
  };
}

/** The session if the account owns it; 404 otherwise (never revealing other players' sessions). */
export async function ownedSession(db: Queryable, sessionId: string, accountId: string, lock = false): Promise<SessionRow> {
  const { rows } = await db.query<SessionRow & Record<string, unknown>>(
    `select s.*, exists (select 1 from chat_rooms r where r.session_id = s.id) as is_room,
            exists (select 1 from chat_groups g where g.session_id = s.id) as is_group
       from chat_sessions s where s.id = $1 and s.account_id = $2${lock ? ' for update of s' : ''}`,
    [sessionId, accountId],
  );
  if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such session.');
  return rows[0];
}

/** The answer to a single player's turn route on a room: its replies go through the room, to every member. */
/** The answer to a single character's turn route on a group scene: its characters answer through the scene. */
export const groupSessionRefusal = () =>
  new HttpError(409, 'GROUP_SESSION', 'This session is a group scene: write, regenerate and continue through the scene, so that its characters answer.');

export const roomSessionRefusal = () =>
  new HttpError(409, 'ROOM_SESSION', 'This session is a room: write, regenerate and continue through the room, so that every member sees the reply.');

/** A room's session for any current member of it (the host included); 404 for anyone else. */
export async function memberSession(db: Queryable, sessionId: string, accountId: string): Promise<SessionRow> {
  const { rows } = await db.query<SessionRow & Record<string, unknown>>(
    `select s.* from chat_sessions s
      where s.id = $1 and exists (select 1 from chat_rooms r where r.session_id = s.id)
        and (s.account_id = $2 or exists (select 1 from session_participants p where p.session_id = s.id and p.account_id = $2 and p.left_at is null))`,
    [sessionId, accountId],
  );
  if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such room.');
  return rows[0];
}

/** A world the account may play, in the version it gets (worlds/version.ts): the live one, or its own working copy. */
export async function playableWorld(db: Queryable, worldId: string, accountId: string | null): Promise<WorldDefinition> {
  return (await worldForViewer(db, worldId, { accountId })).world;
}

export async function sessionMessages(db: Queryable, sessionId: string): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where session_id = $1 order by position', [sessionId]);
  return rows;
}

/** History for the prompt: complete messages only (failed and partial replies are not sent). */
export function historyOf(messages: readonly Pick<MessageRow, 'role' | 'content' | 'status'>[]): HistoryMessage[] {
  const history: HistoryMessage[] = [];
  for (const m of messages) {
    if (m.status !== 'complete' || m.role === 'system') continue;
    // the same row (kept from turn to turn by the send path's history cache) gives the same
    // message, whose token count the counter then keeps in its per-row cache
    let message = historyMessages.get(m);
    if (message?.content !== m.content) {
      message = { role: m.role, content: m.content };
      historyMessages.set(m, message);
    }
    history.push(message);
  }
  return history;
}

interface HistoryMessage {
  role: 'user' | 'assistant';
  content: string;
}

const historyMessages = new WeakMap<object, HistoryMessage>();
