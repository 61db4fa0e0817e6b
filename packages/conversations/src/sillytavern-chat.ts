import { z } from 'zod';

/**
 * A chat as SillyTavern keeps it (issue 49 point 10): a `.jsonl` file whose first line is the
 * chat's header (`user_name`, `character_name`, `create_date`, `chat_metadata`) and each further
 * line one message (`name`, `is_user`, `is_system`, `send_date`, `mes`, `extra`, and on a reply its
 * `swipes` with `swipe_id` the one shown). SillyTavern imports such a file back as a chat. Also a
 * readable transcript (Markdown or plain text). Reading a file gives the transcript and, in plain
 * words, what of it this platform does not carry.
 */

export interface TranscriptMessage {
  role: 'user' | 'assistant' | 'system';
  /** What the reader sees (the swipe shown, on a reply). */
  content: string;
  /** A reply's alternatives, the shown one included (one for a message without others). */
  swipes: string[];
  activeSwipe: number;
  /** ISO time, when known. */
  sentAt: string | null;
}

export interface Transcript {
  userName: string;
  characterName: string;
  /** ISO time the chat began. */
  createdAt: string;
  messages: TranscriptMessage[];
}

/** A file that is not a SillyTavern chat: the route answers 400 with this message. */
export class ChatFormatError extends Error {
  readonly code = 'CHAT_UNREADABLE';
}

/** The longest message kept (the send route's own limit); longer ones are cut and the report says so. */
export const MAX_IMPORTED_MESSAGE = 32_000;
/** The most messages one imported chat may hold. */
export const MAX_IMPORTED_MESSAGES = 20_000;

/** SillyTavern's own date form for a chat's creation ("2024-5-1 @12h 30m 10s 100ms"). */
function humanized(iso: string): string {
  const date = new Date(iso);
  return `${date.getUTCFullYear()}-${date.getUTCMonth() + 1}-${date.getUTCDate()} @${date.getUTCHours()}h ${date.getUTCMinutes()}m ${date.getUTCSeconds()}s ${date.getUTCMilliseconds()}ms`;
}

/** The transcript as SillyTavern's `.jsonl` chat: a header line, then one line per message. */
export function sillyTavernChat(transcript: Transcript): string {
  const lines: unknown[] = [{ user_name: transcript.userName, character_name: transcript.characterName, create_date: humanized(transcript.createdAt), chat_metadata: {} }];
  for (const message of transcript.messages) {
    const sendDate = message.sentAt ?? transcript.createdAt;
    const base = { send_date: sendDate, mes: message.content, extra: {} };
    if (message.role === 'user') lines.push({ name: transcript.userName, is_user: true, is_system: false, ...base });
    else if (message.role === 'system') lines.push({ name: 'System', is_user: false, is_system: true, ...base });
    else {
      lines.push({
        name: transcript.characterName,
        is_user: false,
        is_system: false,
        ...base,
        swipe_id: message.activeSwipe,
        swipes: message.swipes,
        swipe_info: message.swipes.map(() => ({ send_date: sendDate, extra: {} })),
      });
    }
  }
  return `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
}

/** The transcript for reading: a title, then each message under its speaker's name (alternatives of a reply not shown). */
export function chatMarkdown(transcript: Transcript, title: string): string {
  const parts = [`# ${title}`, '', `A chat between ${transcript.userName} and ${transcript.characterName}, begun ${transcript.createdAt.slice(0, 10)}.`, ''];
  for (const message of transcript.messages) {
    const speaker = message.role === 'user' ? transcript.userName : message.role === 'system' ? 'Note' : transcript.characterName;
    parts.push(`**${speaker}:**`, '', message.content, '');
    if (message.swipes.length > 1) parts.push(`_(${message.swipes.length} versions of this reply; version ${message.activeSwipe + 1} shown)_`, '');
  }
  return parts.join('\n');
}

/** The transcript as plain text: "Name: message", a blank line between messages (SillyTavern's text export). */
export function chatText(transcript: Transcript): string {
  return `${transcript.messages
    .map((message) => `${message.role === 'user' ? transcript.userName : message.role === 'system' ? 'Note' : transcript.characterName}: ${message.content}`)
    .join('\n\n')}\n`;
}

const headerLine = z.looseObject({
  user_name: z.string().optional(),
  character_name: z.string().optional(),
  create_date: z.union([z.string(), z.number()]).optional(),
  chat_metadata: z.record(z.string(), z.unknown()).optional(),
});
const messageLine = z.looseObject({
  name: z.string().optional(),
  is_user: z.boolean().optional(),
  is_system: z.boolean().optional(),
  send_date: z.union([z.string(), z.number()]).optional(),
  mes: z.string(),
  extra: z.record(z.string(), z.unknown()).optional(),
  swipe_id: z.number().int().min(0).optional(),
  swipes: z.array(z.string()).optional(),
});

/** Message `extra` keys that mean nothing a reader loses (SillyTavern's bookkeeping). */
const BOOKKEEPING = new Set(['api', 'model', 'token_count', 'gen_id', 'bias', 'memory', 'isSmallSys', 'type']);
/** Chat settings that are SillyTavern's bookkeeping, not the chat's content. */
const METADATA_BOOKKEEPING = new Set(['integrity', 'chat_id_hash', 'tainted', 'lastInContextMessageId', 'timedWorldInfo']);
/** In plain words, what some `extra` and `chat_metadata` keys hold. */
const EXTRA_WORDS: Record<string, string> = {
  image: 'pictures',
  inline_image: 'pictures',
  file: 'attached files',
  files: 'attached files',
  reasoning: "the model's reasoning",
  display_text: 'display texts different from the message',
  title: 'message titles',
};
const METADATA_WORDS: Record<string, string> = {
  note_prompt: "the chat's author's note",
  variables: "the chat's variables",
  objective: 'the objective',
  quickReplies: 'quick replies',
  scenario: "the chat's own scenario",
  persona: "the chat's persona",
};

const dateOf = (value: unknown): string | null => {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const time = new Date(value).getTime();
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
};
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export interface ReadChat {
  transcript: Transcript;
  /** The header's names (or ''), for the caller to compare with the world's and the player's. */
  names: { user: string; character: string };
  /** In plain words, each thing of the file this platform does not carry. */
  notCarried: string[];
}

/** Reads a SillyTavern `.jsonl` chat; ChatFormatError (with the line) when it is not one. */
export function readSillyTavernChat(text: string): ReadChat {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let header: z.infer<typeof headerLine> | null = null;
  const messages: z.infer<typeof messageLine>[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ChatFormatError(`Line ${index + 1} is not JSON (${(error as Error).message}): a SillyTavern chat (.jsonl) has one JSON object per line.`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ChatFormatError(`Line ${index + 1} is not a JSON object: a SillyTavern chat (.jsonl) has one JSON object per line.`);
    if (header === null && messages.length === 0 && !('mes' in value)) {
      const parsed = headerLine.safeParse(value);
      if (!parsed.success) throw new ChatFormatError(`Line ${index + 1}, the chat's header: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(line)'} ${issue.message}`).join('; ')}.`);
      header = parsed.data;
      return;
    }
    const parsed = messageLine.safeParse(value);
    if (!parsed.success) throw new ChatFormatError(`Line ${index + 1} is not a chat message: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(line)'} ${issue.message}`).join('; ')}.`);
    messages.push(parsed.data);
  });
  if (messages.length === 0) throw new ChatFormatError('The file has no messages: a SillyTavern chat (.jsonl) has a header line and one line per message.');
  if (messages.length > MAX_IMPORTED_MESSAGES) throw new ChatFormatError(`The chat has ${messages.length.toLocaleString('en')} messages; at most ${MAX_IMPORTED_MESSAGES.toLocaleString('en')} can be imported.`);
  const head = (header ?? {}) as z.infer<typeof headerLine>;

  const notCarried: string[] = [];
  let cut = 0;
  let userSwipes = 0;
  const speakers = new Set<string>();
  const extras = new Map<string, number>();
  const fit = (value: string) => {
    if (value.length <= MAX_IMPORTED_MESSAGE) return value;
    cut++;
    return value.slice(0, MAX_IMPORTED_MESSAGE);
  };
  const read: TranscriptMessage[] = messages.map((message) => {
    const role = message.is_user ? 'user' : message.is_system ? 'system' : 'assistant';
    if (role === 'assistant' && message.name) speakers.add(message.name);
    for (const [key, value] of Object.entries(message.extra ?? {})) {
      if (BOOKKEEPING.has(key) || value === undefined || value === null || value === '' || value === false) continue;
      const words = EXTRA_WORDS[key] ?? `SillyTavern's "${key}"`;
      extras.set(words, (extras.get(words) ?? 0) + 1);
    }
    const content = fit(message.mes);
    if (role !== 'assistant') {
      if ((message.swipes?.length ?? 0) > 1) userSwipes++;
      return { role, content, swipes: [content], activeSwipe: 0, sentAt: dateOf(message.send_date) };
    }
    const swipes = message.swipes && message.swipes.length > 0 ? message.swipes.map(fit) : [content];
    const activeSwipe = Math.min(message.swipe_id ?? Math.max(0, swipes.indexOf(content)), swipes.length - 1);
    // The shown text is the message's own (SillyTavern keeps it equal to the swipe shown).
    swipes[activeSwipe] = content;
    return { role, content, swipes, activeSwipe, sentAt: dateOf(message.send_date) };
  });

  const character = head.character_name?.trim() ?? '';
  const others = [...speakers].filter((name) => name !== character);
  if (others.length > 0 && (character !== '' || others.length > 1)) {
    notCarried.push(`Replies by ${plural(others.length, 'other character')} (${others.slice(0, 3).map((name) => `"${name}"`).join(', ')}${others.length > 3 ? ', …' : ''}): a session here has one character, so they show as its replies.`);
  }
  if (cut > 0) notCarried.push(`${plural(cut, 'message was', 'messages were')} longer than ${MAX_IMPORTED_MESSAGE.toLocaleString('en')} characters and ${cut === 1 ? 'was' : 'were'} cut there.`);
  if (userSwipes > 0) notCarried.push(`Alternative versions of ${plural(userSwipes, 'your message')}: only the shown one is kept.`);
  for (const [words, n] of extras) notCarried.push(`${words[0]!.toUpperCase()}${words.slice(1)} of ${plural(n, 'message')}.`);
  const metadata = Object.entries(head.chat_metadata ?? {}).filter(([key, value]) => !METADATA_BOOKKEEPING.has(key) && value !== null && value !== '' && !(typeof value === 'object' && Object.keys(value as object).length === 0));
  const named = metadata.filter(([key]) => METADATA_WORDS[key]).map(([key]) => METADATA_WORDS[key]!);
  const other = metadata.filter(([key]) => !METADATA_WORDS[key]).map(([key]) => `"${key}"`);
  if (named.length > 0) notCarried.push(`${named.join(', ').replace(/^./, (first) => first.toUpperCase())}: SillyTavern's chat settings have no place in a session here.`);
  if (other.length > 0) notCarried.push(`Other SillyTavern chat settings (${other.slice(0, 5).join(', ')}${other.length > 5 ? ', …' : ''}).`);

  const createdAt = dateOf(head.create_date) ?? read.find((message) => message.sentAt)?.sentAt ?? new Date(0).toISOString();
  return {
    transcript: { userName: head.user_name?.trim() || 'User', characterName: character || [...speakers][0] || '', createdAt, messages: read },
    names: { user: head.user_name?.trim() ?? '', character },
    notCarried,
  };
}
