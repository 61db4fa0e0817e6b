/**
 * Issue 49 point 10 through the routes (real PostgreSQL): a session exports as a SillyTavern chat
 * (.jsonl, swipes included) and as readable Markdown or text; a SillyTavern chat imports into a new
 * session of the world with its greeting, messages, swipes and dates, and a report of what was not
 * carried; a chat exported and imported again is the same chat.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const harbor = new Uint8Array(readFileSync(new URL('../../../../tests/fixtures/cards/harbor-keeper.png', import.meta.url)));
const chat = readFileSync(new URL('../../../../tests/fixtures/chats/harbor-keeper.jsonl', import.meta.url), 'utf8');

interface Message {
  id: string;
  role: string;
  content: string;
  swipes: { content: string }[];
  activeSwipeIndex: number;
  createdAt: string;
}
interface Page {
  session: { id: string; title: string; messageCount: number };
  messages: Message[];
  report?: { messages: number; swipes: number; notCarried: string[] };
}


describe('chats in and out (real PostgreSQL)', () => {
  let server: TestServer;
  let player: Browser;
  let worldId: string;

  beforeAll(async () => {
    server = await startTestServer();
    player = new Browser(server.url);
    await signUp(server, player, { email: `chats-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Ada' });
    const res = await player.fetch('/api/worlds/import?name=harbor-keeper.png', { method: 'POST', headers: { 'content-type': 'image/png' }, body: harbor as Uint8Array<ArrayBuffer> });
    worldId = ((await res.json()) as { id: string }).id;
  });
  afterAll(() => server?.stop());

  /** What a chat is, message by message (each read in full: a page carries only the newest one's swipes): who, what, its swipes and the one shown, when. */
  const chatOf = async (page: Page) => {
    const full = await Promise.all(
      page.messages.map(async (m) => ((await (await player.fetch(`/api/sessions/${page.session.id}/messages/${m.id}`)).json()) as { message: Message }).message),
    );
    return full.map((m) => ({ role: m.role, content: m.content, swipes: m.swipes.map((s) => s.content), active: m.activeSwipeIndex, at: m.createdAt }));
  };

  const importChat = async (body: string, name = 'harbor-keeper.jsonl') => player.fetch(`/api/worlds/${worldId}/sessions/import?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
  const exported = async (sessionId: string, format: string) => {
    const res = await player.fetch(`/api/sessions/${sessionId}/export.${format}`);
    expect(res.status).toBe(200);
    return { type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition'), text: await res.text() };
  };

  it('a SillyTavern chat becomes a new session: greeting, messages, swipes, dates; the report says what was not carried', async () => {
    const res = await importChat(chat);
    expect(res.status).toBe(201);
    const page = (await res.json()) as Page;
    expect(page.session).toMatchObject({ title: 'harbor-keeper', messageCount: 6 });
    // Replies carry their swipes; a player's message and a note have none, as here.
    expect((await chatOf(page)).map((m) => [m.role, m.swipes.length, m.active])).toEqual([
      ['assistant', 2, 0],
      ['user', 0, 0],
      ['assistant', 3, 1],
      ['system', 0, 0],
      ['user', 0, 0],
      ['assistant', 1, 0],
    ]);
    expect(page.messages[2]).toMatchObject({ content: '"Gull Point. Last light before the Teeth." *He hands you tea.*', createdAt: '2024-05-01T12:31:20.000Z' });
    expect(page.report).toEqual({
      messages: 6,
      swipes: 5,
      notCarried: [
        'Your name in the chat was "Wanderer"; here your messages carry your own name, "Ada".',
        'Replies by 1 other character ("Old Salt"): a session here has one character, so they show as its replies.',
        "The model's reasoning of 1 message.",
        'Pictures of 1 message.',
        "The chat's author's note, the chat's variables: SillyTavern's chat settings have no place in a session here.",
        'Other SillyTavern chat settings ("note_interval", "note_position", "note_depth").',
      ],
    });
    // It is the player's session of that world like any other.
    const sessions = (await (await player.fetch(`/api/worlds/${worldId}/sessions`)).json()) as { sessions: { id: string }[] };
    expect(sessions.sessions.map((s) => s.id)).toContain(page.session.id);
  });

  it('a chat exported and imported again is the same chat (a new session and an imported one alike)', async () => {
    const created = (await (await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as Page;
    // The card's greeting with its alternate: one message with two swipes.
    expect((await chatOf(created))[0]!.swipes.length).toBe(2);
    const imported = (await (await importChat(chat)).json()) as Page;
    for (const original of [created, imported]) {
      const file = await exported(original.session.id, 'jsonl');
      expect(file.type).toBe('application/jsonl; charset=utf-8');
      expect(file.disposition).toContain('.jsonl');
      const header = JSON.parse(file.text.split('\n')[0]!) as Record<string, unknown>;
      expect(header).toMatchObject({ user_name: 'Ada', character_name: 'Harbor Keeper' });
      const again = await importChat(file.text, 'again.jsonl');
      expect(again.status).toBe(201);
      const back = (await again.json()) as Page;
      expect(await chatOf(back)).toEqual(await chatOf(original));
      expect(back.report!.notCarried).toEqual([]);
    }
  });

  it('readable exports: Markdown and plain text', async () => {
    const imported = (await (await importChat(chat)).json()) as Page;
    const markdown = await exported(imported.session.id, 'md');
    expect(markdown.type).toBe('text/markdown; charset=utf-8');
    expect(markdown.text).toContain('# harbor-keeper');
    expect(markdown.text).toContain('**Ada:**\n\n*I wring out my coat.* Thank you. Where am I?');
    expect(markdown.text).toContain('_(3 versions of this reply; version 2 shown)_');
    const text = await exported(imported.session.id, 'txt');
    expect(text.text).toContain('Harbor Keeper: "Gull Point. Last light before the Teeth." *He hands you tea.*\n\nNote: [The storm grows louder.]');
  });

  it('what is not a SillyTavern chat is a 400 that creates nothing; only the player exports a session', async () => {
    const count = async () => (await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from chat_sessions')).rows[0]!.n;
    const before = await count();
    for (const body of ['not json at all', '{"user_name":"A"}\n{"name":"B","mes":5}', '{"user_name":"A"}\n']) {
      const res = await importChat(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'CHAT_UNREADABLE', message: expect.stringMatching(/line|messages/i) });
    }
    expect((await importChat('')).status).toBe(400);
    expect(await count()).toBe(before);
    const imported = (await (await importChat(chat)).json()) as Page;
    const stranger = new Browser(server.url);
    await signUp(server, stranger, { email: `chats-stranger-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Stranger' });
    expect((await stranger.fetch(`/api/sessions/${imported.session.id}/export.jsonl`)).status).toBe(404);
    expect((await player.fetch(`/api/sessions/${imported.session.id}/export.html`)).status).toBe(404);
    // The world is the author's draft: nobody else may play it, so nobody else imports into it.
    expect((await stranger.fetch(`/api/worlds/${worldId}/sessions/import`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: chat })).status).toBe(404);
  });
});
