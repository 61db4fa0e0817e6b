import type { Queryable } from '@yumina/db';

/**
 * The participants of a session (docs/ROOMS.md): one model for the humans of a room (its host,
 * players and spectators) and the characters of a group scene. A session without participants is
 * a single player's, played by its owner (chat_sessions.account_id); a room's owner is its host,
 * who pays for its replies. Membership is a row of session_participants; a member who left or was
 * removed keeps the row (`left_at`; `barred` keeps them out for good), so their messages keep
 * their author.
 */

export type HumanRole = 'host' | 'player' | 'spectator';
export type ParticipantRole = HumanRole | 'character';

export interface Participant {
  id: string;
  sessionId: string;
  kind: 'human' | 'character';
  accountId: string | null;
  role: ParticipantRole;
  position: number;
  joinedAt: Date;
  leftAt: Date | null;
  barred: boolean;
}

/** A current member as the room shows them: the name their messages carry (persona-aware), their picture. */
export interface Member {
  id: string;
  kind: 'human' | 'character';
  role: ParticipantRole;
  accountId: string | null;
  /** The active persona's name, else the account's display name. */
  name: string;
  /** The active persona's avatar, else the account's picture. */
  picture: string | null;
  position: number;
  joinedAt: Date;
}

/** Who an account is to a session: its owner (a single player, or a room's host) or a member of the room. */
export type SessionRole = 'owner' | HumanRole;

/** May write messages and act through the world's interface. */
export const canPlay = (role: SessionRole): boolean => role !== 'spectator';
/** May change the room and the conversation (the owner of a single player's session, or a room's host). */
export const canHost = (role: SessionRole): boolean => role === 'owner' || role === 'host';

export function participantOf(r: Record<string, unknown>): Participant {
  return {
    id: r.id as string,
    sessionId: r.session_id as string,
    kind: r.kind as Participant['kind'],
    accountId: r.account_id as string | null,
    role: r.role as ParticipantRole,
    position: r.position as number,
    joinedAt: r.joined_at as Date,
    leftAt: r.left_at as Date | null,
    barred: r.barred as boolean,
  };
}

const MEMBERS_SQL = {
  name: 'conversations.members',
  text: `select p.id, p.kind, p.role, p.account_id, p.position, p.joined_at,
                coalesce(pe.name, a.display_name, '') as name, coalesce(pe.avatar, a.picture) as picture
           from session_participants p
           left join accounts a on a.id = p.account_id
           left join personas pe on pe.account_id = p.account_id and pe.is_active
          where p.session_id = $1 and p.left_at is null
          order by p.position, p.joined_at, p.id`,
};

/** The session's current members (those who have not left), in list order. */
export async function sessionMembers(db: Queryable, sessionId: string): Promise<Member[]> {
  const { rows } = await db.query<Record<string, unknown>>(MEMBERS_SQL, [sessionId]);
  return rows.map((r) => ({
    id: r.id as string,
    kind: r.kind as Member['kind'],
    role: r.role as ParticipantRole,
    accountId: r.account_id as string | null,
    name: r.name as string,
    picture: r.picture as string | null,
    position: r.position as number,
    joinedAt: r.joined_at as Date,
  }));
}

/** The account's participant row in the session (also one who left or was barred), or null. */
export async function participantOfAccount(db: Queryable, sessionId: string, accountId: string): Promise<Participant | null> {
  const { rows } = await db.query<Record<string, unknown>>('select * from session_participants where session_id = $1 and account_id = $2', [sessionId, accountId]);
  return rows[0] ? participantOf(rows[0]) : null;
}

/**
 * Adds an account to a session as `role` (or brings back one who left, unless barred), after the
 * members already there. Returns the participant, or why not: `barred`, or `full` when the
 * room holds `max` members of that kind of role already (players and the host count together).
 */
export async function joinSession(
  db: Queryable,
  input: { id: string; sessionId: string; accountId: string; role: HumanRole; max: number },
): Promise<{ status: 'joined'; participant: Participant; already: boolean } | { status: 'barred' | 'full' }> {
  const known = await participantOfAccount(db, input.sessionId, input.accountId);
  if (known?.barred) return { status: 'barred' };
  if (known && !known.leftAt) return { status: 'joined', participant: known, already: true };
  const counted = input.role === 'spectator' ? ['spectator'] : ['host', 'player'];
  const { rows: count } = await db.query<{ n: number }>(
    'select count(*)::int as n from session_participants where session_id = $1 and left_at is null and role = any($2)',
    [input.sessionId, counted],
  );
  if ((count[0]?.n ?? 0) >= input.max) return { status: 'full' };
  const { rows } = await db.query<Record<string, unknown>>(
    `insert into session_participants (id, session_id, kind, account_id, role, position)
     values ($1, $2, 'human', $3, $4, (select coalesce(max(position) + 1, 0) from session_participants where session_id = $2))
     on conflict (session_id, account_id) where account_id is not null
       do update set role = excluded.role, left_at = null, joined_at = now(), position = excluded.position
     returning *`,
    [input.id, input.sessionId, input.accountId, input.role],
  );
  return { status: 'joined', participant: participantOf(rows[0]!), already: false };
}

/** A member leaves (or is removed, and with `bar` kept out for good). False when they were not a member. */
export async function leaveSession(db: Queryable, input: { sessionId: string; participantId: string; bar?: boolean }): Promise<boolean> {
  const { rowCount } = await db.query(
    `update session_participants set left_at = coalesce(left_at, now()), barred = barred or $3
      where session_id = $1 and id = $2 and kind = 'human' and role <> 'host' and (left_at is null or $3)`,
    [input.sessionId, input.participantId, input.bar === true],
  );
  return (rowCount ?? 0) > 0;
}
