import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { hasPostgres } from '../../../../tests/support/postgres.ts';
import { hasRedis } from '../../../../tests/support/redis.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

async function sse(res: Response): Promise<SseEvent[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? 'message';
      const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
      return { event, data };
    });
}

interface SessionBody {
  session: { id: string; state: { variables: Record<string, unknown> }; messageCount: number };
  messages: { id: string; role: string; content: string; status: string; errorMessage: string | null; swipes: unknown[]; activeSwipeIndex: number }[];
}

describe.runIf(hasPostgres && hasRedis)('conversations (real PostgreSQL and Redis, a loopback OpenAI-compatible provider)', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let player: Browser;
  let dungeonId: string;
  let storyId: string;

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'player-key' });
    server = await startTestServer();
    player = new Browser(server.url);
    await player.fetch('/api/auth/signup', { method: 'POST', json: { email: `chat-${Date.now()}@example.com`, password: 'long enough pw', username: 'ren' } });
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'player-key' } });
    const d = await player.fetch('/api/worlds', { method: 'POST', json: { world: sample('ashen-depths') } });
    dungeonId = ((await d.json()) as { id: string }).id;
    const s = await player.fetch('/api/worlds', { method: 'POST', json: { world: sample('willow-street') } });
    storyId = ((await s.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  const create = async (worldId: string) => (await (await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as SessionBody;
  const read = async (id: string) => (await (await player.fetch(`/api/sessions/${id}`)).json()) as SessionBody;
  const send = async (id: string, content: string) => sse(await player.fetch(`/api/sessions/${id}/messages`, { method: 'POST', json: { content } }));

  it('a new session opens with the world’s greeting; a send streams the reply, applies its directive and persists message, snapshot and changes', async () => {
    const story = await create(storyId);
    expect(story.messages[0]).toMatchObject({ role: 'assistant', status: 'complete' });
    expect(story.messages[0]!.content.length).toBeGreaterThan(0);

    const s = await create(dungeonId);
    expect(s.messages).toEqual([]);
    provider.enqueue({ kind: 'completion', content: 'The ghoul claws you. [hp: -15] You stagger back. [Note: the air smells of ash]', chunks: 4, reasoning: 'The player opens the door; a ghoul waits.' });
    const events = await send(s.session.id, 'I open the door');
    // Reasoning deltas stream separately and never become part of the reply.
    expect(events.filter((e) => e.event === 'reasoning').map((e) => e.data.text).join('')).toBe('The player opens the door; a ghoul waits.');
    expect(events.filter((e) => e.event === 'delta').length).toBeGreaterThanOrEqual(2);
    const done = events.find((e) => e.event === 'done')!;
    expect(done).toBeDefined();
    const after = await read(s.session.id);
    expect(after.messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'complete'],
    ]);
    expect(after.messages[1]!.content).not.toContain('[hp:');
    expect(after.messages[1]!.content).not.toContain('ghoul waits');
    expect(after.messages[1]!.content).toContain('[Note: the air smells of ash]');
    expect(after.session.state.variables.hp).toBe(85);
    // The provider got the world's prompt plus the player's message, on the player's own key.
    const request = provider.completions.at(-1)!;
    expect(request.headers.authorization).toBe('Bearer player-key');
    const messages = request.body!.messages as { role: string; content: string }[];
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toContain('I open the door');
    expect(messages.some((m) => m.content.includes('Ashen Depths'))).toBe(true);
  });

  it('a provider failure mid-stream keeps the user message and leaves the state unchanged', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'stream-error', content: 'The floor gives [hp: -50', error: { message: 'upstream exploded' } });
    const events = await send(s.session.id, 'I step forward');
    expect(events.at(-1)!.event).toBe('error');
    const after = await read(s.session.id);
    expect(after.messages[0]).toMatchObject({ role: 'user', content: 'I step forward', status: 'complete' });
    expect(after.messages[1]).toMatchObject({ role: 'assistant', status: 'failed' });
    expect(after.messages[1]!.errorMessage).toBeTruthy();
    expect(after.session.state.variables.hp).toBe(100);
  });

  it('two tabs sending at once: one streams, the other gets a clear 409, nothing is lost', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'Slowly the torch gutters.', chunks: 5, chunkDelayMs: 120 });
    const first = player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'tab one' } });
    await new Promise((r) => setTimeout(r, 150));
    const second = await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'tab two' } });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('SESSION_BUSY');
    await sse(await first);
    const after = await read(s.session.id);
    expect(after.messages.map((m) => m.content)).toEqual(['tab one', 'Slowly the torch gutters.']);
    // A stale tab that last saw an older conversation is refused, not interleaved.
    const stale = await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'old tab', expectedMessageCount: 0 } });
    expect(stale.status).toBe(409);
  });

  it('regenerate keeps the old reply as a swipe; swiping moves content and state together', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'A coin! [gold: +5]' });
    await send(s.session.id, 'search');
    provider.enqueue({ kind: 'completion', content: 'A trap! [hp: -10]' });
    await sse(await player.fetch(`/api/sessions/${s.session.id}/regenerate`, { method: 'POST' }));
    let after = await read(s.session.id);
    expect(after.messages).toHaveLength(2);
    expect(after.messages[1]).toMatchObject({ content: 'A trap!', activeSwipeIndex: 1 });
    expect(after.messages[1]!.swipes).toHaveLength(2);
    expect(after.session.state.variables).toMatchObject({ hp: 90, gold: 10 });
    after = (await (await player.fetch(`/api/sessions/${s.session.id}/swipe/left`, { method: 'POST' })).json()) as SessionBody;
    expect(after.messages[1]).toMatchObject({ content: 'A coin!', activeSwipeIndex: 0 });
    expect(after.session.state.variables).toMatchObject({ hp: 100, gold: 15 });
    expect((await player.fetch(`/api/sessions/${s.session.id}/swipe/left`, { method: 'POST' })).status).toBe(409);
    after = (await (await player.fetch(`/api/sessions/${s.session.id}/swipe/right`, { method: 'POST' })).json()) as SessionBody;
    expect(after.session.state.variables).toMatchObject({ hp: 90, gold: 10 });
  });

  it('checkpoints, revert, branch, edit, delete, continue, stop and restart', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'First hall. [gold: +1]' });
    await send(s.session.id, 'one');
    const cp = (await (await player.fetch(`/api/sessions/${s.session.id}/checkpoints`, { method: 'POST', json: { name: 'hall' } })).json()) as { id: string };
    provider.enqueue({ kind: 'completion', content: 'Second hall. [gold: +1]' });
    await send(s.session.id, 'two');
    expect((await read(s.session.id)).session.state.variables.gold).toBe(12);
    const list = (await (await player.fetch(`/api/sessions/${s.session.id}/checkpoints`)).json()) as { checkpoints: { id: string; messageCount: number }[] };
    expect(list.checkpoints).toEqual([expect.objectContaining({ id: cp.id, messageCount: 2 })]);

    // Branch from the first reply: a new session with the state of that moment; the original is untouched.
    const original = await read(s.session.id);
    const branch = (await (await player.fetch(`/api/sessions/${s.session.id}/branch/${original.messages[1]!.id}`, { method: 'POST' })).json()) as SessionBody;
    expect(branch.messages).toHaveLength(2);
    expect(branch.session.state.variables.gold).toBe(11);
    expect((await read(s.session.id)).messages).toHaveLength(4);

    // Restore the checkpoint: back to two messages and gold 11.
    const restored = (await (await player.fetch(`/api/sessions/${s.session.id}/checkpoints/${cp.id}/restore`, { method: 'POST' })).json()) as SessionBody;
    expect(restored.messages).toHaveLength(2);
    expect(restored.session.state.variables.gold).toBe(11);

    // Edit a message's text.
    const edited = (await (await player.fetch(`/api/sessions/${s.session.id}/messages/${restored.messages[0]!.id}`, { method: 'PATCH', json: { content: 'uno' } })).json()) as SessionBody;
    expect(edited.messages[0]!.content).toBe('uno');

    // Continue the last reply.
    provider.enqueue({ kind: 'completion', content: ' It goes on.' });
    await sse(await player.fetch(`/api/sessions/${s.session.id}/continue`, { method: 'POST' }));
    const continued = await read(s.session.id);
    expect(continued.messages[1]!.content).toBe('First hall. It goes on.');
    expect(provider.completions.at(-1)!.body!.messages).toEqual(expect.arrayContaining([{ role: 'assistant', content: 'First hall. [gold: +1]' }]));

    // Stop a reply that hangs: it ends as a failed message, the state unchanged.
    provider.enqueue({ kind: 'hang' });
    const pending = player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'wait' } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await player.fetch(`/api/sessions/${s.session.id}/stop`, { method: 'POST' })).status).toBe(200);
    const stopped = await sse(await pending);
    expect(stopped.at(-1)).toMatchObject({ event: 'error', data: { stopped: true } });
    const afterStop = await read(s.session.id);
    expect(afterStop.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'failed' });
    expect(afterStop.session.state.variables.gold).toBe(11);

    // Delete the stopped exchange (the user message and after) and revert to the first message.
    const del = (await (await player.fetch(`/api/sessions/${s.session.id}/messages/${afterStop.messages.at(-2)!.id}`, { method: 'DELETE' })).json()) as SessionBody;
    expect(del.messages).toHaveLength(2);
    const reverted = (await (await player.fetch(`/api/sessions/${s.session.id}/revert/${del.messages[0]!.id}`, { method: 'POST' })).json()) as SessionBody;
    expect(reverted.messages).toHaveLength(1);
    expect(reverted.session.state.variables.gold).toBe(10);

    const restarted = (await (await player.fetch(`/api/sessions/${s.session.id}/restart`, { method: 'POST' })).json()) as SessionBody;
    expect(restarted.messages).toHaveLength(0);
    expect(restarted.session.state.variables).toMatchObject({ hp: 100, gold: 10 });
    expect((await player.fetch(`/api/sessions/${s.session.id}/checkpoints/${cp.id}`, { method: 'DELETE' })).status).toBe(404); // dropped by the restart
  });

  it('sessions are private; world storage keeps string values per account; bad input is 400', async () => {
    const s = await create(dungeonId);
    const other = new Browser(server.url);
    await other.fetch('/api/auth/signup', { method: 'POST', json: { email: `chat2-${Date.now()}@example.com`, password: 'long enough pw' } });
    expect((await other.fetch(`/api/sessions/${s.session.id}`)).status).toBe(404);
    expect((await other.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'hi' } })).status).toBe(404);
    expect((await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: '' } })).status).toBe(400);

    expect((await player.fetch(`/api/worlds/${dungeonId}/storage/high-score`, { method: 'PUT', json: { value: '42' } })).status).toBe(200);
    expect(await (await player.fetch(`/api/worlds/${dungeonId}/storage`)).json()).toEqual({ entries: { 'high-score': '42' } });
    expect(await (await other.fetch(`/api/worlds/${dungeonId}/storage`)).json()).toEqual({ entries: {} });
    expect((await player.fetch(`/api/worlds/${dungeonId}/storage/high-score`, { method: 'PUT', json: { value: 42 } })).status).toBe(400);
    await player.fetch(`/api/worlds/${dungeonId}/storage/high-score`, { method: 'DELETE' });
    expect(await (await player.fetch(`/api/worlds/${dungeonId}/storage`)).json()).toEqual({ entries: {} });
  });

  it('ai.complete from world code: only the given messages, or with the lorebook; streamed on request; rate limited', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'A riddle.' });
    const plain = await player.fetch(`/api/sessions/${s.session.id}/ai/complete`, {
      method: 'POST',
      json: { messages: [{ role: 'user', content: 'Give me a riddle' }] },
    });
    expect(await plain.json()).toEqual({ content: 'A riddle.' });
    expect(provider.completions.at(-1)!.body!.messages).toEqual([{ role: 'user', content: 'Give me a riddle' }]);

    provider.enqueue({ kind: 'completion', content: 'Lore-aware.', chunks: 3 });
    const streamed = await sse(
      await player.fetch(`/api/sessions/${s.session.id}/ai/complete`, {
        method: 'POST',
        json: { messages: [{ role: 'user', content: 'Tell me of the depths' }], includeLorebook: 'all', stream: true },
      }),
    );
    expect(streamed.filter((e) => e.event === 'delta').length).toBeGreaterThanOrEqual(2);
    expect(streamed.at(-1)).toEqual({ event: 'done', data: { content: 'Lore-aware.' } });
    const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
    expect(sent[0]!.role).toBe('system');
    expect(sent[0]!.content).toContain('Ashen Depths');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'Tell me of the depths' });

    const usage = await server.ctx.db.primary.query<{ n: number }>(`select count(*)::int as n from usage_ledger where purpose = 'world-ui'`);
    expect(usage.rows[0]!.n).toBeGreaterThanOrEqual(2);
    expect((await player.fetch(`/api/sessions/${s.session.id}/ai/complete`, { method: 'POST', json: { messages: [] } })).status).toBe(400);
    let status = 200;
    for (let i = 0; i < 20 && status === 200; i++) {
      status = (await player.fetch(`/api/sessions/${s.session.id}/ai/complete`, { method: 'POST', json: { messages: [{ role: 'user', content: 'x' }] } })).status;
    }
    expect(status).toBe(429);
  });
});
