import type { Queryable } from '@yumina/db';

/**
 * Group scenes (docs/GROUPS.md): several characters in one session, on the participant model of
 * rooms (./participants.ts). A character is a participant of kind 'character' whose card is a
 * world (`worldId`); the session's own world holds the shared state. Who answers a message is
 * decided here, without the database (pickSpeakers), and so is the conversation each speaker's
 * prompt reads (speakerHistory): the speaker's own replies as the assistant's, everyone else's
 * lines as the other side's, each under its author's name.
 */

export const REPLY_MODES = ['natural', 'in-turn', 'choose', 'everyone'] as const;
export type ReplyMode = (typeof REPLY_MODES)[number];
export const CARD_MODES = ['swap', 'join'] as const;
export type CardMode = (typeof CARD_MODES)[number];
/** Characters in one scene, at least and at most. */
export const GROUP_MIN = 2;
export const GROUP_MAX = 8;

export interface GroupCharacter {
  /** The participant's id. */
  id: string;
  name: string;
  worldId: string | null;
  muted: boolean;
  /** 0..1: how likely the character speaks up unprompted (natural mode). */
  talkativeness: number;
  position: number;
}

export interface GroupSettings {
  replyMode: ReplyMode;
  cardMode: CardMode;
  autoReplies: number;
}

/** Escapes a name for a regular expression. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Scripts written without spaces between words: a name is found inside a word there. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;

/**
 * Where in `text` the character is named (its full name, or its first word for names of several
 * words), as a whole word, any case; -1 when it is not. Names in scripts without spaces are found
 * anywhere in the text.
 */
export function mentionAt(text: string, name: string): number {
  const trimmed = name.trim();
  if (!trimmed) return -1;
  const candidates = [trimmed, ...(trimmed.includes(' ') ? [trimmed.split(/\s+/)[0]!] : [])].filter((n) => n.length >= 2 || UNSPACED.test(n));
  let best = -1;
  for (const candidate of candidates) {
    const at = UNSPACED.test(candidate)
      ? text.indexOf(candidate)
      : (new RegExp(`(?<![\\p{L}\\p{N}_])${escape(candidate)}(?![\\p{L}\\p{N}_])`, 'iu').exec(text)?.index ?? -1);
    if (at >= 0 && (best < 0 || at < best)) best = at;
  }
  return best;
}

export interface SpeakerContext {
  /** The message the speakers answer (the player's, or in auto mode the last reply). */
  text: string;
  /** The character who wrote the last reply (not chosen again by natural or in-turn while another can answer). */
  lastSpeakerId: string | null;
  /** The player's pick ('choose' mode, or "reply now" in any mode). */
  chosenId?: string | null;
  /** A number in [0, 1): the talkativeness draws (seeded by the caller for repeatable tests). */
  random: () => number;
}

/**
 * Who answers, in order. natural: the characters named in the message, in the order they are
 * named; then each other character by a draw against its talkativeness; at least one (a draw
 * among those who may speak, weighted by talkativeness). in-turn: the next in list order after the
 * last speaker. choose: the player's pick. everyone: every character in list order. Muted
 * characters never answer unless chosen; a chosen character answers alone in any mode.
 */
export function pickSpeakers(mode: ReplyMode, characters: readonly GroupCharacter[], context: SpeakerContext): GroupCharacter[] {
  const ordered = [...characters].sort((a, b) => a.position - b.position);
  if (context.chosenId) {
    const chosen = ordered.find((c) => c.id === context.chosenId);
    return chosen ? [chosen] : [];
  }
  const active = ordered.filter((c) => !c.muted);
  if (active.length === 0) return [];
  // the one who just spoke does not answer itself while someone else can
  const others = active.length > 1 ? active.filter((c) => c.id !== context.lastSpeakerId) : active;
  switch (mode) {
    case 'choose':
      return [];
    case 'everyone':
      return active;
    case 'in-turn': {
      const last = ordered.findIndex((c) => c.id === context.lastSpeakerId);
      for (let step = 1; step <= ordered.length; step++) {
        const next = ordered[(last + step + ordered.length) % ordered.length]!;
        if (!next.muted && (next.id !== context.lastSpeakerId || active.length === 1)) return [next];
      }
      return [];
    }
    case 'natural': {
      const named = others
        .map((c) => ({ c, at: mentionAt(context.text, c.name) }))
        .filter((m) => m.at >= 0)
        .sort((a, b) => a.at - b.at)
        .map((m) => m.c);
      const chosen = [...named];
      for (const c of others) if (!chosen.includes(c) && context.random() < c.talkativeness) chosen.push(c);
      if (chosen.length > 0) return chosen;
      // nobody spoke up: one of them does, the talkative more likely (everyone alike when all are 0)
      const total = others.reduce((sum, c) => sum + c.talkativeness, 0);
      let draw = context.random() * (total > 0 ? total : others.length);
      for (const c of others) {
        draw -= total > 0 ? c.talkativeness : 1;
        if (draw < 0) return [c];
      }
      return [others.at(-1)!];
    }
  }
}

/** A message of the scene as a speaker's prompt reads it. */
export interface SceneMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
  status: 'complete' | 'streaming' | 'failed';
  participantId: string | null;
  authorName: string | null;
}

/**
 * The scene from one speaker's side: its own replies are the assistant's; every other line (the
 * player's, the other characters') is the other side's, under its author's name, consecutive ones
 * as one message. What came after the speaker's last reply is the message it answers
 * (`userMessage`); before it, the history.
 */
export function speakerHistory(
  messages: readonly SceneMessage[],
  speakerId: string,
  playerName: string,
): { history: { role: 'user' | 'assistant'; content: string }[]; userMessage: string } {
  const out: { role: 'user' | 'assistant'; content: string }[] = [];
  for (const m of messages) {
    if (m.status !== 'complete' || m.role === 'system') continue;
    if (m.role === 'assistant' && m.participantId === speakerId) {
      out.push({ role: 'assistant', content: m.content });
      continue;
    }
    const line = `${m.authorName || (m.role === 'user' ? playerName : 'Narrator')}: ${m.content}`;
    const last = out.at(-1);
    if (last?.role === 'user') last.content += `\n\n${line}`;
    else out.push({ role: 'user', content: line });
  }
  const tail = out.at(-1);
  if (tail?.role === 'user') {
    out.pop();
    return { history: out, userMessage: tail.content };
  }
  // the speaker spoke last (it carries on alone): it is asked to go on
  return { history: out, userMessage: '(The scene goes on.)' };
}

/** A group scene's settings, or null when the session is not one. */
export async function groupOfSession(db: Queryable, sessionId: string): Promise<GroupSettings | null> {
  const { rows } = await db.query<{ reply_mode: ReplyMode; card_mode: CardMode; auto_replies: number }>(
    'select reply_mode, card_mode, auto_replies from chat_groups where session_id = $1',
    [sessionId],
  );
  const row = rows[0];
  return row ? { replyMode: row.reply_mode, cardMode: row.card_mode, autoReplies: row.auto_replies } : null;
}

/** The scene's characters (muted ones too), in list order. */
export async function groupCharacters(db: Queryable, sessionId: string): Promise<GroupCharacter[]> {
  const { rows } = await db.query<{ id: string; name: string | null; world_id: string | null; muted: boolean; talkativeness: number; position: number }>(
    `select id, name, world_id, muted, talkativeness, position from session_participants
      where session_id = $1 and kind = 'character' and left_at is null order by position, id`,
    [sessionId],
  );
  return rows.map((r) => ({ id: r.id, name: r.name ?? '', worldId: r.world_id, muted: r.muted, talkativeness: Number(r.talkativeness), position: r.position }));
}
