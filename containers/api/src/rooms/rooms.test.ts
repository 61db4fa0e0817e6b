import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { sampleWorld } from '../../../../tests/support/player-world.ts';
import { inviteTo, joinWith, openRoom, openRoomStream, readRoom, type RoomStream } from '../../../../tests/support/rooms.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Msg = { role: string; content: string };

describe('rooms: friends play one world together (real PostgreSQL and Redis, a loopback provider)', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let host: Browser;
  let ann: Browser;
  let bo: Browser;
  let watcher: Browser;
  let worldId: string;
  const streams: RoomStream[] = [];

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'host-key' });
    server = await startTestServer();
    [host, ann, bo, watcher] = [new Browser(server.url), new Browser(server.url), new Browser(server.url), new Browser(server.url)];
    await signUp(server, host, { displayName: 'Hana' });
    await signUp(server, ann, { displayName: 'Ann' });
    await signUp(server, bo, { displayName: 'Bo' });
    await signUp(server, watcher, { displayName: 'Wes' });
    await host.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'room-model', apiKey: 'host-key' } });
    const created = await host.fetch('/api/worlds', { method: 'POST', json: { world: sampleWorld('ashen-depths') } });
    worldId = ((await created.json()) as { id: string }).id;
    await host.fetch(`/api/worlds/${worldId}/rooms-allowed`, { method: 'PUT', json: { allowed: true } });
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await server?.stop();
    await provider?.close();
  });
  beforeEach(() => provider.reset());
  // each test's streams close with it (an address may hold EVENT_STREAMS_PER_ADDRESS at once)
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });

  const stream = async (client: Browser, roomId: string, after?: string) => {
    const s = await openRoomStream(client, roomId, after ?? (await readRoom(client, roomId)).eventId);
    streams.push(s);
    return s;
  };
  /** A room with Ann and Bo as players and Wes as spectator, each with a live stream. */
  async function fullRoom(modes: { triggerMode: string; speechMode: string; timerSeconds?: number }) {
    const room = await openRoom(host, worldId, modes);
    const id = room.room.id;
    for (const [client, role] of [[ann, 'player'], [bo, 'player'], [watcher, 'spectator']] as const) { const joined = await joinWith(client, await inviteTo(host, id, role)); expect(joined.status, await joined.clone().text()).toBe(200); }
    const s = { host: await stream(host, id), ann: await stream(ann, id), bo: await stream(bo, id), watcher: await stream(watcher, id) };
    for (const x of Object.values(s)) expect(x.status).toBe(200);
    // everyone online (presence) before the round starts
    await expect.poll(async () => (await readRoom(host, id)).members.filter((m) => m.online).length, { timeout: 5000 }).toBe(4);
    return { id, s };
  }
  const say = (client: Browser, roomId: string, content: string) => client.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content } });
  const lastPrompt = () => (provider.completions.at(-1)!.body!.messages as Msg[]);
  /** The round as the model read it: the last user message written by the players (after it, the world's post-history entries). */
  const roundSent = () => lastPrompt().filter((m) => m.role === 'user' && /^(Hana|Ann|Bo): /.test(m.content)).at(-1)!.content;

  it("a room is not among the host's single-player sessions of the world (Play and Continue never open it in the player)", async () => {
    const own = ((await (await host.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;
    const room = await openRoom(host, worldId, { triggerMode: 'manual', speechMode: 'free' });
    const listed = ((await (await host.fetch(`/api/worlds/${worldId}/sessions`)).json()) as { sessions: { id: string }[] }).sessions.map((x) => x.id);
    expect(listed).toContain(own);
    expect(listed).not.toContain(room.room.id);
    const rooms = ((await (await host.fetch(`/api/rooms?worldId=${worldId}`)).json()) as { rooms: { id: string }[] }).rooms.map((x) => x.id);
    expect(rooms).toContain(room.room.id);
    await host.fetch(`/api/rooms/${room.room.id}/end`, { method: 'POST' });
  });

  it('a world opens to rooms only by its author; the host sees who pays before opening one', async () => {
    const other = ((await (await host.fetch('/api/worlds', { method: 'POST', json: { world: sampleWorld('willow-street') } })).json()) as { id: string }).id;
    const refused = await host.fetch(`/api/worlds/${other}/rooms`, { method: 'POST', json: { triggerMode: 'instant', speechMode: 'free' } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('ROOMS_NOT_ALLOWED');
    expect((await ann.fetch(`/api/worlds/${other}/rooms-allowed`, { method: 'PUT', json: { allowed: true } })).status).toBe(404);
    const allowed = await host.fetch(`/api/worlds/${other}/rooms-allowed`, { method: 'PUT', json: { allowed: true } });
    expect(((await allowed.json()) as { roomsAllowed: boolean }).roomsAllowed).toBe(true);
    const terms = (await (await host.fetch(`/api/worlds/${other}/rooms/terms`)).json()) as { allowed: boolean; payer: { source: string; model: string } };
    expect(terms).toMatchObject({ allowed: true, payer: { source: 'connection', model: 'room-model' } });
    for (const bad of [{ triggerMode: 'sometimes', speechMode: 'free' }, { triggerMode: 'timer', speechMode: 'free', timerSeconds: 1 }, { triggerMode: 'manual', speechMode: 'free', extra: 1 }]) {
      const res = await host.fetch(`/api/worlds/${worldId}/rooms`, { method: 'POST', json: bad });
      expect(res.status).toBe(400);
    }
  });

  it('instant mode: a player’s message is answered at once, streamed to every member, sent under the player’s name and paid by the host', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'instant', speechMode: 'free' });
    provider.enqueue({ kind: 'completion', content: 'The torch flares. [hp: -5]', chunks: 3, chunkDelayMs: 20 });
    expect((await say(ann, id, 'I light the torch')).status).toBe(202);
    for (const member of Object.values(s)) {
      const done = await member.next((e) => e.event === 'reply:done');
      expect((done.data.message as { content: string }).content).toContain('The torch flares.');
    }
    // every member saw the round start with Ann's message and her name, and the deltas in order
    const start = s.bo.events.find((e) => e.event === 'reply:start')!;
    expect(start.data.round).toMatchObject([{ role: 'user', content: 'I light the torch', authorName: 'Ann' }]);
    const deltas = s.watcher.events.filter((e) => e.event === 'delta').map((e) => e.data as { at: number; text: string });
    expect(deltas.map((d) => d.text).join('')).toBe('The torch flares. [hp: -5]');
    expect(deltas.every((d, i) => d.at === deltas.slice(0, i).reduce((n, x) => n + x.text.length, 0))).toBe(true);
    // the host's key paid; the prompt carries the player's name and the party
    expect(provider.completions.at(-1)!.headers.authorization).toBe('Bearer host-key');
    const prompt = lastPrompt();
    expect(prompt.filter((m) => m.role === 'user' && m.content === 'Ann: I light the torch')).toHaveLength(1);
    expect(prompt.some((m) => m.content.includes('Hana, Ann, Bo play together'))).toBe(true);
    const room = await readRoom(bo, id);
    // A room opens with the world's greeting too (issue 44 point 3): it stays first in the history and the model is sent it.
    const opening = 'The abbey bell tolls once behind you.';
    expect(room.messages.map((m) => [m.role, m.authorName ?? null])).toEqual([
      ['assistant', null],
      ['user', 'Ann'],
      ['assistant', null],
    ]);
    expect(room.messages[0]!.content).toContain(opening);
    const greeting = prompt.findIndex((m) => m.role === 'assistant' && m.content.includes(opening));
    expect(greeting).toBeGreaterThanOrEqual(0);
    expect(prompt.findIndex((m) => m.content === 'Ann: I light the torch')).toBeGreaterThan(greeting);
    expect(room.session.state.variables.hp).toBe(95);
    expect(room.room.roundState).toBe('waiting');
  });

  it('manual mode: messages queue, visible to all, until the host asks; one reply answers the round together', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'manual', speechMode: 'free' });
    await say(ann, id, 'I take the left path');
    await say(bo, id, 'I guard the rear');
    const queued = await s.watcher.next((e) => e.event === 'room' && (e.data.queue as unknown[]).length === 2);
    expect((queued.data.room as { roundState: string }).roundState).toBe('collecting');
    expect((queued.data.queue as { authorName: string; content: string }[]).map((q) => `${q.authorName}: ${q.content}`)).toEqual(['Ann: I take the left path', 'Bo: I guard the rear']);
    await sleep(300);
    expect(provider.completions).toHaveLength(0);
    // only the host may ask
    expect((await ann.fetch(`/api/rooms/${id}/reply`, { method: 'POST' })).status).toBe(403);
    provider.enqueue({ kind: 'completion', content: 'The party splits.' });
    expect((await host.fetch(`/api/rooms/${id}/reply`, { method: 'POST' })).status).toBe(202);
    await s.ann.next((e) => e.event === 'reply:done');
    expect(provider.completions).toHaveLength(1);
    expect(roundSent()).toBe('Ann: I take the left path\n\nBo: I guard the rear');
    expect((await host.fetch(`/api/rooms/${id}/reply`, { method: 'POST' })).status).toBe(409);
  });

  it('round mode: the reply waits until every player online has written', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'round', speechMode: 'free' });
    provider.enqueue({ kind: 'completion', content: 'All three act at once.' });
    await say(ann, id, 'I duck');
    await say(bo, id, 'I shoot');
    await sleep(300);
    expect(provider.completions).toHaveLength(0);
    // spectators do not write, and do not hold the round up
    expect((await say(watcher, id, 'psst')).status).toBe(403);
    await say(host, id, 'I cast a light');
    const done = await s.bo.next((e) => e.event === 'reply:done');
    expect((done.data.message as { content: string }).content).toBe('All three act at once.');
    expect(roundSent().split('\n\n')).toEqual(['Ann: I duck', 'Bo: I shoot', 'Hana: I cast a light']);
  });

  it('timer mode: the round goes to the AI N seconds after its first message', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'timer', speechMode: 'free', timerSeconds: 2 });
    provider.enqueue({ kind: 'completion', content: 'Time is up.' });
    const sent = performance.now();
    await say(bo, id, 'I wait');
    const collecting = await s.ann.next((e) => e.event === 'room' && (e.data.room as { collectUntil: string | null }).collectUntil !== null);
    expect(Date.parse((collecting.data.room as { collectUntil: string }).collectUntil) - Date.now()).toBeGreaterThan(1000);
    await say(ann, id, 'Me too');
    const done = await s.ann.next((e) => e.event === 'reply:done', 8000);
    expect(done.at - sent).toBeGreaterThan(1800);
    expect(roundSent()).toBe('Bo: I wait\n\nAnn: Me too');
  });

  it('turn-based speech: only the player holding the turn writes; the host passes it; out of turn is a clear 409', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'manual', speechMode: 'turns' });
    const room = await readRoom(host, id);
    const annId = room.members.find((m) => m.name === 'Ann')!.id;
    expect(room.room.turnParticipantId).toBe(room.me.participantId);
    const early = await say(ann, id, 'me first');
    expect(early.status).toBe(409);
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe('NOT_YOUR_TURN');
    expect((await ann.fetch(`/api/rooms/${id}/turn`, { method: 'POST', json: { participantId: annId } })).status).toBe(403);
    expect((await host.fetch(`/api/rooms/${id}/turn`, { method: 'POST', json: { participantId: annId } })).status).toBe(200);
    await s.bo.next((e) => e.event === 'room' && (e.data.room as { turnParticipantId: string }).turnParticipantId === annId);
    expect((await say(ann, id, 'my turn now')).status).toBe(202);
    expect((await say(bo, id, 'not mine')).status).toBe(409);
    // Ann passes her own turn on: to the next in the list (Bo)
    const passed = (await (await ann.fetch(`/api/rooms/${id}/turn`, { method: 'POST', json: {} })).json()) as { turnParticipantId: string };
    expect(passed.turnParticipantId).toBe(room.members.find((m) => m.name === 'Bo')!.id);
    expect((await say(bo, id, 'now mine')).status).toBe(202);
  });

  it('a per-player value is seen only by its player; the prompt lists it under their name; the shared state is everyone’s', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'manual', speechMode: 'free' });
    const room = await readRoom(ann, id);
    const annAccount = room.me.accountId;
    const boAccount = room.members.find((m) => m.name === 'Bo')!.accountId!;
    const set = await ann.fetch(`/api/sessions/${id}/variables/hp`, { method: 'PUT', json: { value: 42, targetUserId: annAccount } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { state: { playerVariables: Record<string, unknown> } }).state.playerVariables).toEqual({ [annAccount]: { hp: 42 } });
    // Ann's stream carries her value; Bo's the state without it
    const annSees = await s.ann.next((e) => e.event === 'state');
    const boSees = await s.bo.next((e) => e.event === 'state');
    expect((annSees.data.state as { playerVariables: unknown }).playerVariables).toEqual({ [annAccount]: { hp: 42 } });
    expect((boSees.data.state as { playerVariables: unknown }).playerVariables).toEqual({});
    expect(boSees.data.stateChanges).toEqual([]);
    expect((await readRoom(bo, id)).session.state.playerVariables).toEqual({});
    expect((await readRoom(ann, id)).session.state.playerVariables).toEqual({ [annAccount]: { hp: 42 } });
    // a player cannot set another's value; the host's interface can; a spectator sets nothing
    expect((await ann.fetch(`/api/sessions/${id}/variables/hp`, { method: 'PUT', json: { value: 1, targetUserId: boAccount } })).status).toBe(403);
    expect((await host.fetch(`/api/sessions/${id}/variables/hp`, { method: 'PUT', json: { value: 7, targetUserId: boAccount } })).status).toBe(200);
    expect((await watcher.fetch(`/api/sessions/${id}/variables/hp`, { method: 'PUT', json: { value: 7 } })).status).toBe(403);
    // the shared value is everyone's: a player's interface changes it for all
    expect((await bo.fetch(`/api/sessions/${id}/variables/gold`, { method: 'PUT', json: { value: 12 } })).status).toBe(200);
    expect((await readRoom(watcher, id)).session.state.variables.gold).toBe(12);
    provider.enqueue({ kind: 'completion', content: 'Noted.' });
    await say(bo, id, 'status?');
    await host.fetch(`/api/rooms/${id}/reply`, { method: 'POST' });
    await s.host.next((e) => e.event === 'reply:done');
    const dynamic = lastPrompt().find((m) => m.content.startsWith('## Current state'))!.content;
    expect(dynamic).toContain('- gold: 12');
    expect(dynamic).toContain('### Ann\n- hp: 42');
    expect(dynamic).toContain('### Bo\n- hp: 7');
    // the host, whose session the room is, sees no player's own values either: not in the session, not in "what was sent"
    const hostView = (await (await host.fetch(`/api/sessions/${id}`)).json()) as { session: { state: { playerVariables?: unknown } }; messages: { id: string; role: string; stateSnapshot: { playerVariables?: unknown } | null }[] };
    expect(hostView.session.state.playerVariables).toEqual({});
    expect(hostView.messages.every((m) => !m.stateSnapshot?.playerVariables || JSON.stringify(m.stateSnapshot.playerVariables) === '{}')).toBe(true);
    const reply = hostView.messages.filter((m) => m.role === 'assistant').at(-1)!;
    const sent = (await (await host.fetch(`/api/sessions/${id}/messages/${reply.id}/prompt`)).json()) as { prompt: { messages: { source: string; content: string | null }[] } };
    const shown = sent.prompt.messages.find((m) => m.source === 'format:dynamic')!.content!;
    expect(shown).toContain('- gold: 12');
    expect(shown).not.toContain('### Ann');
    expect(shown).not.toContain('### Bo');
  });

  it('the host regenerates (a new alternative reaches everyone) and stops; a stream resumes after the last event it saw', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'instant', speechMode: 'free' });
    provider.enqueue({ kind: 'completion', content: 'First take.' });
    await say(ann, id, 'Hello?');
    const first = await s.bo.next((e) => e.event === 'reply:done');
    provider.enqueue({ kind: 'completion', content: 'Second take.' });
    expect((await ann.fetch(`/api/rooms/${id}/regenerate`, { method: 'POST' })).status).toBe(403);
    expect((await host.fetch(`/api/rooms/${id}/regenerate`, { method: 'POST' })).status).toBe(202);
    const second = await s.bo.next((e) => e.event === 'reply:done');
    expect((second.data.message as { content: string; swipes: unknown[] }).swipes).toHaveLength(2);
    expect((second.data.message as { id: string }).id).toBe((first.data.message as { id: string }).id);
    expect(roundSent()).toBe('Ann: Hello?');
    // the single player's turn routes refuse a room: its replies go through the room
    const solo = await host.fetch(`/api/sessions/${id}/messages`, { method: 'POST', json: { content: 'solo' } });
    expect(solo.status).toBe(409);
    expect(((await solo.json()) as { error: { code: string } }).error.code).toBe('ROOM_SESSION');
    // resumption: a stream opened after the first reply's last event gets exactly what followed
    const cut = first.id!;
    const resumed = await stream(ann, id, cut);
    const replay = await resumed.next((e) => e.event === 'reply:done');
    expect((replay.data.message as { content: string }).content).toBe('Second take.');
    expect(resumed.events.every((e) => !e.id || e.id > cut)).toBe(true);
    expect(resumed.events.filter((e) => e.event === 'reply:done')).toHaveLength(1);
    // the host's edit (a single player's route on the host's own session) tells every member to read it again
    const msg = (await readRoom(host, id)).messages.at(-1)!;
    expect((await host.fetch(`/api/sessions/${id}/messages/${msg.id}`, { method: 'PATCH', json: { content: 'Edited take.' } })).status).toBe(200);
    await s.watcher.next((e) => e.event === 'sync');
    expect((await readRoom(watcher, id)).messages.at(-1)!.content).toBe('Edited take.');
  });

  it('a failed reply is visible to all and the host retries it; the lock is free afterwards', async () => {
    const { id, s } = await fullRoom({ triggerMode: 'instant', speechMode: 'free' });
    provider.enqueue({ kind: 'error', status: 502, body: { error: { message: 'upstream down' } } });
    await say(bo, id, 'Anyone?');
    const failed = await s.ann.next((e) => e.event === 'reply:error');
    expect(failed.data.code).toBeTruthy();
    const room = await readRoom(ann, id);
    expect(room.messages.at(-1)).toMatchObject({ role: 'user', authorName: 'Bo' });
    expect(room.messages.at(-1)!.failure?.code).toBeTruthy();
    expect(room.room.roundState).toBe('waiting');
    provider.enqueue({ kind: 'completion', content: 'Here I am.' });
    expect((await host.fetch(`/api/rooms/${id}/regenerate`, { method: 'POST' })).status).toBe(202);
    await s.ann.next((e) => e.event === 'reply:done');
    expect((await readRoom(bo, id)).messages.at(-1)!.content).toBe('Here I am.');
  });
});
