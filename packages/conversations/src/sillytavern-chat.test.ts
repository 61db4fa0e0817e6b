/**
 * Issue 49 point 10: SillyTavern's chat format, both ways. A transcript written as `.jsonl` reads
 * back as itself; a chat SillyTavern wrote (tests/fixtures/chats) reads with its messages, swipes
 * and dates, and what it holds that a session here cannot is said in plain words.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ChatFormatError, chatMarkdown, chatText, readSillyTavernChat, sillyTavernChat, type Transcript } from './sillytavern-chat.ts';

const fixture = readFileSync(new URL('../../../tests/fixtures/chats/harbor-keeper.jsonl', import.meta.url), 'utf8');

const transcript: Transcript = {
  userName: 'Ada',
  characterName: 'Harbor Keeper',
  createdAt: '2026-03-01T10:00:00.000Z',
  messages: [
    { role: 'assistant', content: 'Welcome.', swipes: ['Welcome.', 'Come in.'], activeSwipe: 0, sentAt: '2026-03-01T10:00:00.000Z' },
    { role: 'user', content: 'Hello "keeper".\nLine two.', swipes: ['Hello "keeper".\nLine two.'], activeSwipe: 0, sentAt: '2026-03-01T10:01:00.000Z' },
    { role: 'assistant', content: 'Second', swipes: ['First', 'Second', 'Third'], activeSwipe: 1, sentAt: '2026-03-01T10:02:00.000Z' },
    { role: 'system', content: '[A note]', swipes: ['[A note]'], activeSwipe: 0, sentAt: '2026-03-01T10:03:00.000Z' },
  ],
};

describe('SillyTavern chats (.jsonl)', () => {
  it('a transcript written as a SillyTavern chat reads back as itself', () => {
    const file = sillyTavernChat(transcript);
    const lines = file.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toEqual({ user_name: 'Ada', character_name: 'Harbor Keeper', create_date: '2026-3-1 @10h 0m 0s 0ms', chat_metadata: {} });
    expect(lines[3]).toMatchObject({ name: 'Harbor Keeper', is_user: false, is_system: false, mes: 'Second', swipe_id: 1, swipes: ['First', 'Second', 'Third'] });
    expect(lines[2]).toMatchObject({ name: 'Ada', is_user: true, mes: 'Hello "keeper".\nLine two.' });
    expect(lines[4]).toMatchObject({ is_system: true, mes: '[A note]' });
    const read = readSillyTavernChat(file);
    expect(read.transcript).toEqual({ ...transcript, createdAt: transcript.messages[0]!.sentAt });
    expect(read.notCarried).toEqual([]);
  });

  it("a chat SillyTavern wrote: its messages, swipes and dates, and in plain words what a session here does not carry", () => {
    const read = readSillyTavernChat(fixture);
    expect(read.names).toEqual({ user: 'Wanderer', character: 'Harbor Keeper' });
    expect(read.transcript.messages.map((message) => [message.role, message.swipes.length, message.activeSwipe])).toEqual([
      ['assistant', 2, 0],
      ['user', 1, 0],
      ['assistant', 3, 1],
      ['system', 1, 0],
      ['user', 1, 0],
      ['assistant', 1, 0],
    ]);
    expect(read.transcript.messages[2]!.content).toBe('"Gull Point. Last light before the Teeth." *He hands you tea.*');
    expect(read.transcript.messages[1]!.sentAt).toBe('2024-05-01T12:31:02.000Z');
    expect(read.notCarried).toEqual([
      'Replies by 1 other character ("Old Salt"): a session here has one character, so they show as its replies.',
      "The model's reasoning of 1 message.",
      'Pictures of 1 message.',
      "The chat's author's note, the chat's variables: SillyTavern's chat settings have no place in a session here.",
      'Other SillyTavern chat settings ("note_interval", "note_position", "note_depth").',
    ]);
  });

  it('readable transcripts: Markdown and plain text', () => {
    const markdown = chatMarkdown(transcript, 'Evening at the light');
    expect(markdown).toContain('# Evening at the light');
    expect(markdown).toContain('**Ada:**\n\nHello "keeper".\nLine two.');
    expect(markdown).toContain('_(3 versions of this reply; version 2 shown)_');
    expect(chatText(transcript)).toBe('Harbor Keeper: Welcome.\n\nAda: Hello "keeper".\nLine two.\n\nHarbor Keeper: Second\n\nNote: [A note]\n');
  });

  it('what is not a SillyTavern chat is refused with the line that is wrong', () => {
    expect(() => readSillyTavernChat('{"user_name":"A"}\nnot json')).toThrow(new ChatFormatError(`Line 2 is not JSON (Unexpected token 'o', "not json" is not valid JSON): a SillyTavern chat (.jsonl) has one JSON object per line.`));
    expect(() => readSillyTavernChat('{"user_name":"A"}\n{"name":"B","mes":5}')).toThrow(/^Line 2 is not a chat message: mes /);
    expect(() => readSillyTavernChat('{"user_name":"A"}\n')).toThrow('The file has no messages');
    expect(() => readSillyTavernChat('[1,2]')).toThrow('Line 1 is not a JSON object');
  });
});
