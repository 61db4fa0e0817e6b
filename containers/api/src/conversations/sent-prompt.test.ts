import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';
import { fillLongSession } from '../../../../tests/support/long-session.ts';

const willow = () => JSON.parse(readFileSync(new URL('../../../../packages/world/samples/willow-street.json', import.meta.url), 'utf8')) as Record<string, unknown>;

interface Message {
  id: string;
  role: string;
  tokenCount: number | null;
  promptTokens: number | null;
  creditsCharged: number | null;
}

interface SentPromptBody {
  replyId: string;
  prompt: {
    model: string;
    historyCount: number;
    messages: { role: string; step: number; source: string; content: string | null }[];
    firedEntries: { entryId: string; name: string; via: string; keyword?: string; step: number }[];
  };
}

/**
 * Per reply, its tokens and (on credits) its cost; and "what was sent" for a turn, to the
 * session's owner only (real PostgreSQL and Redis, a loopback OpenAI-compatible provider).
 */
describe('a reply’s usage and what was sent for it', () => {
  let server: TestServer;
  let provider: FakeOpenAi;

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: provider.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform-model', WELCOME_CREDITS: '100' });
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  async function player(name: string, connection: boolean) {
    const b = new Browser(server.url);
    await signUp(server, b, { email: `${name}-${Date.now()}@example.com` });
    if (connection) await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'k' } });
    const world = await (await b.fetch('/api/worlds', { method: 'POST', json: { world: willow() } })).json() as { id: string };
    const session = await (await b.fetch(`/api/worlds/${world.id}/sessions`, { method: 'POST' })).json() as { session: { id: string } };
    return { b, sessionId: session.session.id };
  }
  const messages = async (b: Browser, id: string) => ((await (await b.fetch(`/api/sessions/${id}`)).json()) as { messages: Message[] }).messages;

  it('on the player’s own connection: the reply keeps its prompt and reply tokens and no cost; what was sent lists the lore that fired and why; another account gets 404', async () => {
    const { b, sessionId } = await player('own', true);
    provider.enqueue({ kind: 'completion', content: 'Mina pours two cups.', usage: { prompt_tokens: 812, completion_tokens: 9 } });
    await (await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Do you remember the cafe by the station, the rain, my umbrella?' } })).text();
    const [, mine, reply] = await messages(b, sessionId);
    expect(mine!.role).toBe('user');
    expect(reply).toMatchObject({ role: 'assistant', tokenCount: 9, promptTokens: 812, creditsCharged: null });

    // From the player's message or from the reply: the same prompt.
    const res = await b.fetch(`/api/sessions/${sessionId}/messages/${mine!.id}/prompt`);
    expect(res.status).toBe(200);
    const sent = (await res.json()) as SentPromptBody;
    expect(sent.replyId).toBe(reply!.id);
    expect(sent.prompt.model).toBe('story-model');
    // In the engine's order (steps never go back), ending with the player's message as sent.
    const steps = sent.prompt.messages.map((m) => m.step);
    expect(steps).toEqual([...steps].sort((x, y) => x - y));
    const history = sent.prompt.messages.filter((m) => m.source === 'history');
    expect(history.at(-1)).toMatchObject({ role: 'user', content: 'Do you remember the cafe by the station, the rain, my umbrella?' });
    // The greeting before it is in the conversation already: its place only.
    expect(history[0]).toMatchObject({ role: 'assistant', content: null });
    expect(sent.prompt.historyCount).toBe(2);
    // Which entries fired and why: the cafe (its secondary keywords rain and umbrella too) and the shared memories by their keywords; the character always.
    const fired = Object.fromEntries(sent.prompt.firedEntries.map((e) => [e.entryId, e]));
    expect(fired['cafe-memory']).toMatchObject({ via: 'keyword', keyword: 'cafe', name: 'The cafe by the station' });
    expect(fired['memory-echo']).toMatchObject({ via: 'keyword', keyword: 'remember' });
    expect(fired['mina-character']).toMatchObject({ via: 'always', step: 1 });
    // the greeting, within the scan depth, names a flower
    expect(fired['flower-language']).toMatchObject({ via: 'keyword', keyword: 'chrysanthemum' });
    expect(fired['confession-arc']).toBeUndefined();
    // the entry's text is in the prompt where the engine put it
    expect(sent.prompt.messages.some((m) => m.source === 'entry:cafe-memory' && m.step === fired['cafe-memory']!.step && (m.content ?? '').length > 0)).toBe(true);
    expect(((await (await b.fetch(`/api/sessions/${sessionId}/messages/${reply!.id}/prompt`)).json()) as SentPromptBody).replyId).toBe(reply!.id);

    // Only the owner: another account, and nobody signed in, learn nothing.
    const other = await player('other', true);
    const stranger = await other.b.fetch(`/api/sessions/${sessionId}/messages/${mine!.id}/prompt`);
    expect(stranger.status).toBe(404);
    expect(((await stranger.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await new Browser(server.url).fetch(`/api/sessions/${sessionId}/messages/${mine!.id}/prompt`)).status).toBe(401);
    // A greeting had no prompt; a malformed id is no id of this platform.
    const greeting = (await messages(b, sessionId))[0]!;
    const none = await b.fetch(`/api/sessions/${sessionId}/messages/${greeting.id}/prompt`);
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { code: string; message: string } }).error.message).toMatch(/Nothing was sent/);
    expect((await b.fetch(`/api/sessions/${sessionId}/messages/not-an-id/prompt`)).status).toBe(404);
  });

  it('on platform credits: the reply keeps what it was charged, the same as the credit ledger’s charge', async () => {
    const { b, sessionId } = await player('credits', false);
    provider.enqueue({ kind: 'completion', content: 'Mina smiles.', usage: { prompt_tokens: 1500, completion_tokens: 500 } });
    await (await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Hello' } })).text();
    const reply = (await messages(b, sessionId)).at(-1)!;
    expect(reply).toMatchObject({ role: 'assistant', tokenCount: 500, promptTokens: 1500 });
    expect(reply.creditsCharged).toBeGreaterThan(0);
    const { rows } = await server.ctx.db.primary.query<{ amount: string }>(`select amount from credit_ledger where kind = 'charge' order by id desc limit 1`);
    expect(reply.creditsCharged).toBe(-Number(rows[0]!.amount));
  });
  /**
   * Issue 51, point 7: what a turn adds to the stored prompts is the same at a session's 10th
   * turn and at its 200th (20 and 400 messages before it), where the whole-prompt records of
   * migration 096 grew by a place for every message; the view reads the same; and a record kept
   * the old way (chat_prompts) still reads as it was.
   */
  it('what a turn keeps of its prompt stays the same size as the session grows; the view shows what it did; old records still read', async () => {
    const db = server.ctx.db.primary;
    const { b, sessionId } = await player('growth', true);
    const line = 'I raise the lantern, listen at the door and then step through it, remembering the cafe by the station.';
    let n = 0;
    const turn = async () => {
      provider.enqueue({ kind: 'completion', content: 'The door creaks open onto the rain.', usage: { prompt_tokens: 100, completion_tokens: 9 } });
      // each turn's line is new (one new text a turn, as in play)
      const res = await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: `${line} (${++n})` } });
      expect(res.status).toBe(200);
      await res.text();
    };
    const kept = async () => {
      const { rows } = await db.query<{ records: string; texts: string; text_rows: string }>(
        `select (select coalesce(sum(pg_column_size(k.*)), 0) from chat_prompt_records k join chat_messages m on m.id = k.message_id where m.session_id = $1)::text as records,
                (select coalesce(sum(pg_column_size(t.*)), 0) from chat_prompt_texts t where t.session_id = $1)::text as texts,
                (select count(*) from chat_prompt_texts t where t.session_id = $1)::text as text_rows`,
        [sessionId],
      );
      return { bytes: Number(rows[0]!.records) + Number(rows[0]!.texts), textRows: Number(rows[0]!.text_rows) };
    };
    /** What one turn adds, after `messages` messages (the turn before it has stored its lore). */
    const added = async (count: number) => {
      await fillLongSession(db, sessionId, count);
      await turn();
      const before = await kept();
      await turn();
      const after = await kept();
      const sent = (await (await b.fetch(`/api/sessions/${sessionId}/messages/${(await messages(b, sessionId)).at(-1)!.id}/prompt`)).json()) as SentPromptBody;
      return { bytes: after.bytes - before.bytes, textRows: after.textRows - before.textRows, sent };
    };
    const at10 = await added(20);
    const at200 = await added(400);
    // every message went to the provider, and the view lists a place for each
    expect(at10.sent.prompt.historyCount).toBe(23);
    expect(at200.sent.prompt.historyCount).toBe(403);
    expect(at200.sent.prompt.messages.filter((m) => m.source === 'history')).toHaveLength(403);
    expect(at200.sent.prompt.messages.filter((m) => m.source === 'history' && m.content === null).map((m) => m.role)).toEqual(
      (await db.query<{ role: string }>('select role from chat_messages where session_id = $1 order by position limit 402', [sessionId])).rows.map((m) => m.role),
    );
    // the turn's own record and the texts it adds: the same at the 10th and the 200th turn
    // (the old record added ~65 bytes a message: 26 KB more at the 200th)
    expect(at10.textRows).toBe(1);
    expect(at200.textRows).toBe(1);
    expect(Math.abs(at200.bytes - at10.bytes)).toBeLessThanOrEqual(16);
    expect(at200.bytes).toBeLessThan(2_500);
    console.log(`[what was sent] bytes a turn adds: ${at10.bytes} after 20 messages, ${at200.bytes} after 400 (${at200.textRows} new text rows a turn)`);

    // a record kept whole by an older release (chat_prompts, migration 096) reads as it was
    const replyId = at200.sent.replyId;
    await db.query('delete from chat_prompt_records where message_id = $1', [replyId]);
    await db.query('insert into chat_prompts (message_id, prompt) values ($1, $2::jsonb)', [replyId, JSON.stringify(at200.sent.prompt)]);
    const old = (await (await b.fetch(`/api/sessions/${sessionId}/messages/${replyId}/prompt`)).json()) as SentPromptBody;
    expect(old).toEqual(at200.sent);
    // for docs/CAPACITY.md: what the whole record of 096 takes (stored, compressed by PostgreSQL) at either length
    const wholeBytes = async (prompt: unknown) => {
      await db.query('update chat_prompts set prompt = $2::jsonb where message_id = $1', [replyId, JSON.stringify(prompt)]);
      return (await db.query<{ bytes: number }>('select pg_column_size(p.*) as bytes from chat_prompts p where message_id = $1', [replyId])).rows[0]!.bytes;
    };
    console.log(`[what was sent] kept whole (migration 096): ${await wholeBytes(at10.sent.prompt)} bytes after 20 messages, ${await wholeBytes(at200.sent.prompt)} after 400`);
  });
});
