import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, type FakeReply, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));
/**
 * The Ashen Depths without its greeting: the world without one that these tests count messages in
 * (Willow Street is the one with a greeting here; every sample's greeting is checked in
 * tests/browser/player-samples.test.ts).
 */
const withoutGreeting = (world: { entries: { role: string }[] }) => ({ ...world, entries: world.entries.filter((e) => e.role !== 'greeting') });

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

interface MessageBody {
  id: string;
  position: number;
  role: string;
  content: string;
  status: string;
  errorMessage: string | null;
  failure?: { code: string; message: string } | null;
  stateChanges: unknown[];
  stateSnapshot: { variables: Record<string, unknown> } | null;
  swipes: { content: string; snapshot: unknown }[];
  activeSwipeIndex: number;
}

interface SessionBody {
  session: { id: string; worldId: string; title: string; state: { variables: Record<string, unknown> }; messageCount: number; updatedAt: string; branchedFrom: string | null };
  messages: MessageBody[];
}

interface SessionListBody {
  sessions: (Omit<SessionBody['session'], 'state'> & { state?: unknown })[];
}

describe('conversations (real PostgreSQL and Redis, a loopback OpenAI-compatible provider)', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let player: Browser;
  let dungeonId: string;
  let storyId: string;

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'player-key' });
    server = await startTestServer();
    player = new Browser(server.url);
    await signUp(server, player, { email: `chat-${Date.now()}@example.com`, password: 'long enough pw', username: 'ren' });
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'player-key' } });
    const d = await player.fetch('/api/worlds', { method: 'POST', json: { world: withoutGreeting(sample('ashen-depths')) } });
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
    const usageBefore = await chatUsage();
    provider.enqueue({ kind: 'completion', content: 'The ghoul claws you. [hp: -15] You stagger back. [Note: the air smells of ash]', chunks: 4, chunkDelayMs: 15, reasoning: 'The player opens the door; a ghoul waits.', usage: { prompt_tokens: 1234, completion_tokens: 56 } });
    const events = await send(s.session.id, 'I open the door');
    // one usage row for the call, on the player's own connection, written with the reply
    expect((await chatUsage()).slice(usageBefore.length)).toEqual([{ model: 'story-model', tokens_in: 1234, tokens_out: 56, partial: false, estimated: false, billing_source: 'private' }]);
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

  it('a send on the player’s own connection runs two statements once the process knows the world and the history, and no store command of the session', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'You listen. [gold: +1]' });
    expect((await send(s.session.id, 'I listen')).at(-1)!.event).toBe('done');
    const db = server.ctx.db.primary;
    const store = server.ctx.store;
    const statements: string[] = [];
    const storeKeys: string[] = [];
    const query = db.query;
    db.query = ((config: string | { name?: string; text: string }, params?: unknown[]) => {
      statements.push(typeof config === 'string' ? config : (config.name ?? config.text));
      return query.call(db, config as never, params as never);
    }) as typeof db.query;
    const methods = ['get', 'set', 'del', 'acquireLock', 'releaseLock', 'renewLock', 'publish', 'rateLimit'] as const;
    const originals = methods.map((m) => store[m]);
    for (const m of methods) {
      const original = store[m] as (...args: unknown[]) => unknown;
      (store as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        storeKeys.push(`${m} ${String(args[0])}`);
        return original.apply(store, args);
      };
    }
    try {
      provider.enqueue({ kind: 'completion', content: 'Footsteps, far off. [hp: -1]' });
      expect((await send(s.session.id, 'I listen again')).at(-1)!.event).toBe('done');
    } finally {
      db.query = query;
      methods.forEach((m, i) => ((store as unknown as Record<string, unknown>)[m] = originals[i]));
    }
    // The turn's own statements: the mail queue's worker polls the same pool every second and may
    // land in the window (its claim statement), which is not the turn's.
    expect(statements.filter((text) => !/\bmail_queue\b/.test(text))).toEqual(['conversations.turn_start', 'conversations.turn_complete']);
    expect(storeKeys.filter((k) => k.includes(s.session.id))).toEqual([]);
    // and the history the second turn sent was the whole conversation (from the cache, checked)
    const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
    const contents = sent.map((m) => m.content);
    expect(contents.indexOf('I listen')).toBeGreaterThanOrEqual(0);
    expect(contents.indexOf('I listen again')).toBeGreaterThan(contents.indexOf('I listen'));
    expect(contents.some((c) => c.startsWith('You listen.'))).toBe(true); // the first reply, shown text
  });

  it('a send renews a login not renewed for a day, and its event stream carries the renewed cookie', async () => {
    const s = await create(dungeonId);
    await server.ctx.db.primary.query(`update login_sessions set last_seen_at = now() - interval '2 days', expires_at = now() + interval '1 day' where ended_at is null`);
    provider.enqueue({ kind: 'completion', content: 'The torch flares.' });
    const res = await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'I wait' } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^yumina_session=/);
    const expires = new Date(/Expires=([^;]+)/i.exec(cookie)![1]!);
    expect(expires.getTime() - Date.now()).toBeGreaterThan(2 * 24 * 3600 * 1000); // the session's full lifetime again, not the day that was left
    expect((await sse(res)).at(-1)!.event).toBe('done');
    // the next send does not renew again
    provider.enqueue({ kind: 'completion', content: 'Silence.' });
    const next = await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'I wait more' } });
    expect(next.headers.get('set-cookie')).toBeNull();
    await next.text();
    // a regeneration (authenticated by the shared guard) streams the renewed cookie too; an ordinary answer carries it once
    await server.ctx.db.primary.query(`update login_sessions set last_seen_at = now() - interval '2 days' where ended_at is null`);
    provider.enqueue({ kind: 'completion', content: 'The torch gutters.' });
    const again = await player.fetch(`/api/sessions/${s.session.id}/regenerate`, { method: 'POST' });
    expect(again.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(again.headers.get('set-cookie')).toMatch(/^yumina_session=/);
    await again.text();
    await server.ctx.db.primary.query(`update login_sessions set last_seen_at = now() - interval '2 days' where ended_at is null`);
    const plain = await player.fetch(`/api/sessions/${s.session.id}`);
    expect(plain.headers.getSetCookie()).toHaveLength(1);
    expect(plain.headers.get('set-cookie')).toMatch(/^yumina_session=/);
  });

  /** The usage rows of chat turns, oldest first. */
  async function chatUsage() {
    const { rows } = await server.ctx.db.primary.query(
      `select model, tokens_in, tokens_out, partial, estimated, billing_source from usage_ledger where purpose = 'chat' order by id`,
    );
    return rows;
  }

  /** The session row as stored, and its messages' stored state columns (not as a route reports them). */
  async function stored(sessionId: string) {
    const db = server.ctx.db.primary;
    const session = (await db.query<{ state: string; message_count: number }>('select state, message_count from chat_sessions where id = $1', [sessionId])).rows[0]!;
    const messages = (
      await db.query<{ role: string; status: string; state_changes: string; state_snapshot: string | null }>(
        'select role, status, state_changes, state_snapshot from chat_messages where session_id = $1 order by position',
        [sessionId],
      )
    ).rows;
    return { state: JSON.parse(session.state) as { variables: Record<string, unknown> }, messageCount: session.message_count, messages };
  }

  for (const failure of [
    {
      name: 'an error event after a complete directive',
      reply: { kind: 'stream-error', content: 'The floor gives way. [hp: -50] You fall into', error: { message: 'upstream exploded' } } as FakeReply,
      code: 'AI_PROVIDER_UPSTREAM',
    },
    {
      name: 'a dropped connection (socket destroyed) after a complete directive',
      reply: { kind: 'drop', content: 'The ceiling cracks. [hp: -30] [gold: +7] Dust fills', chunks: 3 } as FakeReply,
      code: 'AI_PROVIDER_UNREACHABLE',
    },
    {
      name: 'a body that ends without a finish reason or [DONE] after a complete directive',
      reply: { kind: 'drop', how: 'end', content: 'A dart flies. [hp: -20] It', chunks: 2 } as FakeReply,
      code: 'AI_PROVIDER_INVALID_RESPONSE',
    },
  ]) {
    it(`a provider failure mid-stream (${failure.name}) keeps the user message with the failure on it, no reply, and applies nothing`, async () => {
      const s = await create(dungeonId);
      const initial = s.session.state;
      expect(initial.variables).toMatchObject({ hp: 100, gold: 10 });
      const storedBefore = await stored(s.session.id);
      const usageBefore = await chatUsage();
      provider.enqueue(failure.reply);
      const events = await send(s.session.id, 'I step forward');
      // the text that arrived is charged (the provider bills it): one partial, estimated row
      await expect.poll(async () => (await chatUsage()).length).toBe(usageBefore.length + 1);
      expect((await chatUsage()).at(-1)).toMatchObject({ partial: true, estimated: true, billing_source: 'private' });

      // The partial text (directive included) did stream to the client before the failure.
      const streamed = events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('');
      expect(streamed).toBe((failure.reply as { content: string }).content);
      const last = events.at(-1)!;
      expect(last.event).toBe('error');
      expect(last.data).toMatchObject({ code: failure.code, stopped: false });
      expect(events.some((e) => e.event === 'done')).toBe(false);

      const after = await read(s.session.id);
      // A failure is not the world's message (issue 30 A2): no reply is kept, the failure is on the player's message.
      expect(after.messages).toHaveLength(1);
      expect(after.messages[0]).toMatchObject({ role: 'user', content: 'I step forward', status: 'complete', failure: { code: failure.code, message: last.data.message } });
      expect(last.data.message).toBeTruthy();
      // Nothing of the directive was applied: the session state is exactly the state before the turn.
      expect(after.session.state).toEqual(initial);
      expect(after.session.state.variables.hp).toBe(100);
      const storedAfter = await stored(s.session.id);
      expect(storedAfter.state).toEqual(storedBefore.state);
      expect(storedAfter.messageCount).toBe(1);
      // the player's message keeps the state its turn started from
      expect(storedAfter.messages.map((m) => [m.role, m.status, m.state_changes, m.state_snapshot && JSON.parse(m.state_snapshot)])).toEqual([
        ['user', 'complete', '[]', storedBefore.state],
      ]);

      // The next turn starts from the untouched state, and the failed partial is not sent as history.
      provider.enqueue({ kind: 'completion', content: 'You steady yourself. [hp: -5]' });
      const next = await send(s.session.id, 'I try again');
      expect(next.at(-1)!.event).toBe('done');
      const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
      expect(sent.some((m) => m.content.includes(streamed))).toBe(false);
      expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(expect.arrayContaining(['I step forward', 'I try again']));
      expect((await read(s.session.id)).session.state.variables).toMatchObject({ hp: 95, gold: 10 });
    });
  }

  it('generation settings reach the provider as the world sets them (0 included); unset ones are seed 002 §2.2\'s defaults (topK and minP absent)', async () => {
    const SAMPLING_FIELDS = ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'top_k', 'min_p', 'response_format'];
    const sampling = (body: Record<string, unknown>) => Object.fromEntries(SAMPLING_FIELDS.filter((k) => k in body).map((k) => [k, body[k]]));
    const worldWith = async (name: string, settings: Record<string, unknown>) => {
      const res = await player.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name, settings } } });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const set = { temperature: 0.35, topP: 0.85, frequencyPenalty: 0.4, presencePenalty: -0.25, topK: 40, minP: 0.05, structuredOutput: true, maxTokens: 900 };
    const zero = { temperature: 0, topP: 0, frequencyPenalty: 0, presencePenalty: 0, topK: 0, minP: 0, structuredOutput: false };
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      ['every setting set', set, { temperature: 0.35, top_p: 0.85, frequency_penalty: 0.4, presence_penalty: -0.25, top_k: 40, min_p: 0.05, response_format: { type: 'json_object' } }],
      ['every setting 0 (or off)', zero, { temperature: 0, top_p: 0, frequency_penalty: 0, presence_penalty: 0, top_k: 0, min_p: 0 }],
      ['none set', {}, { temperature: 1, top_p: 1, frequency_penalty: 0, presence_penalty: 0 }],
      ['only temperature and min_p', { temperature: 1.5, minP: 0.1 }, { temperature: 1.5, top_p: 1, frequency_penalty: 0, presence_penalty: 0, min_p: 0.1 }],
    ];
    for (const [name, settings, expected] of cases) {
      const s = await create(await worldWith(`Settings: ${name}`, settings));
      // A send, a regeneration and a continue each carry them.
      provider.enqueue({ kind: 'completion', content: 'First.' }, { kind: 'completion', content: 'Again.' }, { kind: 'completion', content: ' More.' });
      const before = provider.completions.length;
      expect((await send(s.session.id, 'Hello')).some((e) => e.event === 'done'), name).toBe(true);
      await sse(await player.fetch(`/api/sessions/${s.session.id}/regenerate`, { method: 'POST' }));
      await sse(await player.fetch(`/api/sessions/${s.session.id}/continue`, { method: 'POST' }));
      const sent = provider.completions.slice(before);
      expect(sent, name).toHaveLength(3);
      for (const request of sent) expect(sampling(request.body!), name).toEqual(expected);
      expect(sent[0]!.body!.max_tokens, name).toBe(settings.maxTokens ?? 12000);
    }
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

    // Edit a message's text: only that text changes; no state is recomputed, the other message is untouched.
    const edited = (await (await player.fetch(`/api/sessions/${s.session.id}/messages/${restored.messages[0]!.id}`, { method: 'PATCH', json: { content: 'uno' } })).json()) as SessionBody;
    expect(edited.messages[0]!.content).toBe('uno');
    expect(edited.messages.map((m) => m.id)).toEqual(restored.messages.map((m) => m.id));
    // The edit replaces the text (shown and raw); the rest of the message is as it was.
    expect({ ...edited.messages[0]!, content: restored.messages[0]!.content, rawContent: (restored.messages[0] as { rawContent?: string }).rawContent }).toEqual(restored.messages[0]);
    expect(edited.messages[1]).toEqual(restored.messages[1]);
    expect(edited.session.state).toEqual(restored.session.state);

    // Continue the last reply.
    provider.enqueue({ kind: 'completion', content: ' It goes on.' });
    await sse(await player.fetch(`/api/sessions/${s.session.id}/continue`, { method: 'POST' }));
    const continued = await read(s.session.id);
    expect(continued.messages[1]!.content).toBe('First hall. It goes on.');
    expect(provider.completions.at(-1)!.body!.messages).toEqual(expect.arrayContaining([{ role: 'assistant', content: 'First hall. [gold: +1]' }]));

    // Stop a reply that hangs: no reply is kept, the stop is noted on the player's message, the state unchanged.
    provider.enqueue({ kind: 'hang' });
    const pending = player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'wait' } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await player.fetch(`/api/sessions/${s.session.id}/stop`, { method: 'POST' })).status).toBe(200);
    const stopped = await sse(await pending);
    expect(stopped.at(-1)).toMatchObject({ event: 'error', data: { stopped: true } });
    const afterStop = await read(s.session.id);
    expect(afterStop.messages.at(-1)).toMatchObject({ role: 'user', content: 'wait', failure: { code: 'AI_ABORTED' } });
    expect(afterStop.session.state.variables.gold).toBe(11);

    // Delete the stopped exchange (the user message and after) and revert to the first message.
    const doomed = afterStop.messages.slice(-1);
    expect(doomed.map((m) => [m.role, m.content])).toEqual([['user', 'wait']]);
    const del = (await (await player.fetch(`/api/sessions/${s.session.id}/messages/${doomed[0]!.id}`, { method: 'DELETE' })).json()) as SessionBody;
    expect(del.messages.map((m) => m.id)).toEqual(afterStop.messages.slice(0, -1).map((m) => m.id));
    expect(del.messages.map((m) => m.content)).toEqual(['uno', 'First hall. It goes on.']);
    expect(del.messages.map((m) => m.id)).not.toContain(doomed[0]!.id);
    expect(del.session.messageCount).toBe(2);
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
    await signUp(server, other, { email: `chat2-${Date.now()}@example.com`, password: 'long enough pw' });
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

  it('sessions list: own sessions of that world only, most recently updated first, without state; another account sees none', async () => {
    const other = new Browser(server.url);
    await signUp(server, other, { email: `list-${Date.now()}@example.com`, password: 'long enough pw' });
    const list = async (who: Browser, worldId: string) => {
      const res = await who.fetch(`/api/worlds/${worldId}/sessions`);
      expect(res.status).toBe(200);
      return ((await res.json()) as SessionListBody).sessions;
    };
    const before = (await list(player, dungeonId)).map((x) => x.id);
    const a = await create(dungeonId);
    const b = await create(dungeonId);
    const c = await create(dungeonId);
    const story = await create(storyId);
    // A turn in `a` makes it the most recently updated.
    provider.enqueue({ kind: 'completion', content: 'Torchlight.' });
    await send(a.session.id, 'look around');

    const mine = await list(player, dungeonId);
    const ids = mine.map((x) => x.id);
    expect(ids.slice(0, 3)).toEqual([a.session.id, c.session.id, b.session.id]);
    expect(new Set(ids)).toEqual(new Set([a.session.id, b.session.id, c.session.id, ...before]));
    expect(ids).not.toContain(story.session.id);
    // Ordered by updatedAt, newest first, as implemented.
    const times = mine.map((x) => Date.parse(x.updatedAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    const first = mine[0]!;
    expect(first).toMatchObject({ id: a.session.id, worldId: dungeonId, messageCount: 2, branchedFrom: null });
    expect(first.title.length).toBeGreaterThan(0);
    expect(first).not.toHaveProperty('state');
    expect((await list(player, storyId)).map((x) => x.id)).toContain(story.session.id);

    // Another account: none of the player's sessions, for either world; guests must sign in.
    expect(await list(other, dungeonId)).toEqual([]);
    expect(await list(other, storyId)).toEqual([]);
    expect((await new Browser(server.url).fetch(`/api/worlds/${dungeonId}/sessions`)).status).toBe(401);
  });

  it('sessions delete: messages and checkpoints go, the list no longer shows it; another account cannot delete it', async () => {
    const db = server.ctx.db.primary;
    const other = new Browser(server.url);
    await signUp(server, other, { email: `del-${Date.now()}@example.com`, password: 'long enough pw' });
    const s = await create(dungeonId);
    const keep = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'A door. [gold: +2]' });
    await send(s.session.id, 'open');
    expect((await player.fetch(`/api/sessions/${s.session.id}/checkpoints`, { method: 'POST', json: { name: 'door' } })).status).toBe(201);
    const branch = (await (await player.fetch(`/api/sessions/${s.session.id}/branch/${(await read(s.session.id)).messages[1]!.id}`, { method: 'POST' })).json()) as SessionBody;
    expect(branch.session.branchedFrom).toBe(s.session.id);
    const count = async (table: string, id: string) => (await db.query<{ n: number }>(`select count(*)::int as n from ${table} where session_id = $1`, [id])).rows[0]!.n;
    expect(await count('chat_messages', s.session.id)).toBe(2);
    expect(await count('chat_checkpoints', s.session.id)).toBe(1);

    // Another account (and a guest): refused as if it did not exist, and nothing is removed.
    const refused = await other.fetch(`/api/sessions/${s.session.id}`, { method: 'DELETE' });
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await new Browser(server.url).fetch(`/api/sessions/${s.session.id}`, { method: 'DELETE' })).status).toBe(401);
    expect((await player.fetch(`/api/sessions/${s.session.id}`)).status).toBe(200);
    expect(await count('chat_messages', s.session.id)).toBe(2);
    expect(await count('chat_checkpoints', s.session.id)).toBe(1);

    const res = await player.fetch(`/api/sessions/${s.session.id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect((await player.fetch(`/api/sessions/${s.session.id}`)).status).toBe(404);
    expect((await db.query('select 1 from chat_sessions where id = $1', [s.session.id])).rowCount).toBe(0);
    expect(await count('chat_messages', s.session.id)).toBe(0);
    expect(await count('chat_checkpoints', s.session.id)).toBe(0);
    const listed = ((await (await player.fetch(`/api/worlds/${dungeonId}/sessions`)).json()) as SessionListBody).sessions.map((x) => x.id);
    expect(listed).not.toContain(s.session.id);
    expect(listed).toContain(keep.session.id);
    // Its routes are gone with it; a second delete is a 404.
    expect((await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'hello?' } })).status).toBe(404);
    expect((await player.fetch(`/api/sessions/${s.session.id}`, { method: 'DELETE' })).status).toBe(404);
    // Other sessions are untouched: the branch survives with its own copy, no longer pointing at the deleted one.
    const survivor = await read(branch.session.id);
    expect(survivor.messages.map((m) => m.content)).toEqual(['open', 'A door.']);
    expect(survivor.session.state.variables.gold).toBe(12);
    expect(survivor.session.branchedFrom).toBeNull();
    expect((await read(keep.session.id)).session.id).toBe(keep.session.id);
  });

  it('checkpoint delete: saved, deleted, gone from the list, cannot be restored; the conversation is untouched', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'A chest. [gold: +3]' });
    await send(s.session.id, 'search');
    const cpRes = await player.fetch(`/api/sessions/${s.session.id}/checkpoints`, { method: 'POST', json: { name: 'chest' } });
    expect(cpRes.status).toBe(201);
    const cp = (await cpRes.json()) as { id: string; messageCount: number };
    expect(cp.messageCount).toBe(2);
    const keepRes = await player.fetch(`/api/sessions/${s.session.id}/checkpoints`, { method: 'POST', json: { name: 'other' } });
    const kept = (await keepRes.json()) as { id: string };
    const listIds = async () =>
      ((await (await player.fetch(`/api/sessions/${s.session.id}/checkpoints`)).json()) as { checkpoints: { id: string }[] }).checkpoints.map((c) => c.id);
    expect(await listIds()).toEqual([cp.id, kept.id]);
    provider.enqueue({ kind: 'completion', content: 'Deeper. [gold: +1]' });
    await send(s.session.id, 'go on');
    const before = await read(s.session.id);

    // Another account cannot delete it.
    const other = new Browser(server.url);
    await signUp(server, other, { email: `cp-${Date.now()}@example.com`, password: 'long enough pw' });
    expect((await other.fetch(`/api/sessions/${s.session.id}/checkpoints/${cp.id}`, { method: 'DELETE' })).status).toBe(404);
    expect(await listIds()).toEqual([cp.id, kept.id]);

    const del = await player.fetch(`/api/sessions/${s.session.id}/checkpoints/${cp.id}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ ok: true });
    expect(await listIds()).toEqual([kept.id]);
    const restore = await player.fetch(`/api/sessions/${s.session.id}/checkpoints/${cp.id}/restore`, { method: 'POST' });
    expect(restore.status).toBe(404);
    expect(((await restore.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await player.fetch(`/api/sessions/${s.session.id}/checkpoints/${cp.id}`, { method: 'DELETE' })).status).toBe(404);
    // Deleting a checkpoint changes nothing of the conversation (the failed restore neither).
    const after = await read(s.session.id);
    expect(after.messages).toEqual(before.messages);
    expect(after.session.state).toEqual(before.session.state);
    expect(after.session.state.variables.gold).toBe(14);
    // The remaining checkpoint still restores (the session lock was released by the refused restore).
    const restored = (await (await player.fetch(`/api/sessions/${s.session.id}/checkpoints/${kept.id}/restore`, { method: 'POST' })).json()) as SessionBody;
    expect(restored.messages.map((m) => m.content)).toEqual(['search', 'A chest.']);
    expect(restored.session.state.variables.gold).toBe(13);
  });

  it('edit changes only that message’s text (no state recomputed, even for a directive); the next prompt carries the edit', async () => {
    const s = await create(dungeonId);
    provider.enqueue({ kind: 'completion', content: 'Gold glints. [gold: +4]' });
    await send(s.session.id, 'dig');
    provider.enqueue({ kind: 'completion', content: 'A rat bites. [hp: -6]' });
    await send(s.session.id, 'dig more');
    const before = await read(s.session.id);
    expect(before.session.state.variables).toMatchObject({ gold: 14, hp: 94 });
    const patch = (messageId: string, content: string, who = player) =>
      who.fetch(`/api/sessions/${s.session.id}/messages/${messageId}`, { method: 'PATCH', json: { content } });

    // Edit the first reply, even writing a directive into it: text only, no state change anywhere.
    const res = await patch(before.messages[1]!.id, 'Gold glints, lots of it. [gold: +100]');
    expect(res.status).toBe(200);
    const edited = (await res.json()) as SessionBody;
    expect(edited.messages[1]!.content).toBe('Gold glints, lots of it. [gold: +100]');
    const { content: _new, swipes: _newSwipes, rawContent: _newRaw, ...editedRest } = edited.messages[1]! as MessageBody & { rawContent?: string };
    const { content: _old, swipes: _oldSwipes, rawContent: _oldRaw, ...beforeRest } = before.messages[1]! as MessageBody & { rawContent?: string };
    expect(_oldRaw).toBe('Gold glints. [gold: +4]'); // before: the reply as written, directive included (it differs from the text shown)
    expect(_newRaw).toBeUndefined(); // after: the raw text is the edit itself, the same as content, so it is not sent twice
    expect(editedRest).toEqual(beforeRest); // stateSnapshot, stateChanges, status, active swipe, ids as they were
    expect(edited.messages[1]!.stateSnapshot!.variables).toMatchObject({ gold: 14, hp: 100 });
    for (const i of [0, 2, 3]) expect(edited.messages[i]).toEqual(before.messages[i]);
    expect(edited.session.state).toEqual(before.session.state);

    // Edit the player's message too.
    const second = (await (await patch(before.messages[2]!.id, 'dig deeper')).json()) as SessionBody;
    expect(second.messages.map((m) => m.content)).toEqual(['dig', 'Gold glints, lots of it. [gold: +100]', 'dig deeper', 'A rat bites.']);
    expect(second.session.state).toEqual(before.session.state);

    // The next turn's prompt carries the edited texts; its state builds on the unchanged snapshot.
    provider.enqueue({ kind: 'completion', content: 'Quiet. [gold: +1]' });
    await send(s.session.id, 'rest');
    const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
    expect(sent.map((m) => m.content)).toEqual(expect.arrayContaining(['dig deeper', 'Gold glints, lots of it. [gold: +100]']));
    expect(sent.map((m) => m.content)).not.toContain('dig more');
    expect((await read(s.session.id)).session.state.variables).toMatchObject({ gold: 15, hp: 94 });

    // An edited reply stays edited: its active alternative carries the edit, and "continue" goes on from it.
    const afterRest = await read(s.session.id);
    const last = afterRest.messages.at(-1)!;
    const lastEdited = (await (await patch(last.id, 'Quiet, and the torch gutters.')).json()) as SessionBody;
    const lastView = lastEdited.messages.at(-1)!;
    expect(lastView.swipes[lastView.activeSwipeIndex]!.content).toBe('Quiet, and the torch gutters.');
    provider.enqueue({ kind: 'completion', content: ' Darkness.' });
    const cont = await player.fetch(`/api/sessions/${s.session.id}/continue`, { method: 'POST' });
    expect(cont.status).toBe(200);
    await cont.text(); // the stream to its end
    expect(provider.completions.at(-1)!.body!.messages).toEqual(expect.arrayContaining([{ role: 'assistant', content: 'Quiet, and the torch gutters.' }]));
    expect((await read(s.session.id)).messages.at(-1)!.content).toBe('Quiet, and the torch gutters. Darkness.');
    // Continue re-runs the turn on the whole reply as it now reads: the edit dropped `[gold: +1]`.
    expect((await read(s.session.id)).session.state.variables).toMatchObject({ gold: 14, hp: 94 });

    // Not found: an unknown message, another account's view of the session.
    expect((await patch('msg_nope', 'x')).status).toBe(404);
    const other = new Browser(server.url);
    await signUp(server, other, { email: `edit-${Date.now()}@example.com`, password: 'long enough pw' });
    expect((await patch(before.messages[0]!.id, 'hijack', other)).status).toBe(404);
    expect((await read(s.session.id)).messages[0]!.content).toBe('dig');
  });

  it('delete message: that message and every later one go, earlier ones stay, the state returns to before it', async () => {
    const s = await create(dungeonId);
    const turns = [
      ['north', 'A hall. [gold: +1]'],
      ['east', 'A pit. [hp: -10]'],
      ['south', 'A shrine. [gold: +5]'],
    ] as const;
    for (const [user, reply] of turns) {
      provider.enqueue({ kind: 'completion', content: reply });
      await send(s.session.id, user);
    }
    const before = await read(s.session.id);
    expect(before.messages.map((m) => m.content)).toEqual(['north', 'A hall.', 'east', 'A pit.', 'south', 'A shrine.']);
    expect(before.session.state.variables).toMatchObject({ gold: 16, hp: 90 });

    // Delete the second player message: it and everything after it go.
    const target = before.messages[2]!;
    const res = await player.fetch(`/api/sessions/${s.session.id}/messages/${target.id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    const after = (await res.json()) as SessionBody;
    expect(after.messages.map((m) => m.id)).toEqual(before.messages.slice(0, 2).map((m) => m.id));
    // The same messages; the reply now newest carries its swipes (a page loads them only on the newest).
    const withoutSwipes = (m: MessageBody) => ({ ...m, swipes: undefined, swipesLoaded: undefined });
    expect(after.messages.map(withoutSwipes)).toEqual(before.messages.slice(0, 2).map(withoutSwipes));
    expect(after.messages.map((m) => m.id)).not.toContain(target.id);
    expect(after.session.messageCount).toBe(2);
    expect(after.session.state).toEqual(before.messages[1]!.stateSnapshot);
    expect(after.session.state.variables).toMatchObject({ gold: 11, hp: 100 });
    expect((await read(s.session.id)).messages.map((m) => m.content)).toEqual(['north', 'A hall.']);
    // A message id that is no longer there: 404, nothing more removed.
    expect((await player.fetch(`/api/sessions/${s.session.id}/messages/${target.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await read(s.session.id)).messages).toHaveLength(2);

    // Deleting the very first message empties the conversation back to the initial state.
    const emptied = (await (await player.fetch(`/api/sessions/${s.session.id}/messages/${before.messages[0]!.id}`, { method: 'DELETE' })).json()) as SessionBody;
    expect(emptied.messages).toEqual([]);
    expect(emptied.session.state).toEqual(s.session.state);
    expect(emptied.session.state.variables).toMatchObject({ gold: 10, hp: 100 });
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

    provider.enqueue({ kind: 'completion', content: 'Lore-aware.', chunks: 3, chunkDelayMs: 15 });
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
