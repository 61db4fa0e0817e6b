import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld } from '../support/player-world.ts';
import { inviteTo, joinWith, openRoom, openRoomStream, readRoom, type RoomStream } from '../support/rooms.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Rooms (issue 45, docs/ROOMS.md) against hostile members and outsiders: a non-member reads
 * nothing (not the room, not its stream, not its messages, not its world); a spectator writes
 * nothing; a player does nothing of the host's, nor acts as another member; an expired or revoked
 * link joins nobody; a removed member's stream ends and a barred one cannot come back; the limits
 * hold; bad input gets a clear 4xx and changes nothing.
 */
describe('rooms: members and outsiders', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let db: pg.Client;
  let host: Browser;
  let player: Browser;
  let spectator: Browser;
  let outsider: Browser;
  let worldId: string;
  let roomId: string;
  const streams: RoomStream[] = [];
  const codeOf = async (res: Response) => ((await res.json()) as { error?: { code: string } }).error?.code;

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'host-key' });
    server = await startTestServer({ ROOM_MAX_PLAYERS: '3', ROOM_MAX_SPECTATORS: '1', ROOM_MESSAGES_PER_MINUTE: '5' });
    db = new pg.Client({ connectionString: server.database.url });
    await db.connect();
    [host, player, spectator, outsider] = [new Browser(server.url), new Browser(server.url), new Browser(server.url), new Browser(server.url)];
    await signUp(server, host, { displayName: 'Host' });
    await signUp(server, player, { displayName: 'Pia' });
    await signUp(server, spectator, { displayName: 'Spec' });
    await signUp(server, outsider, { displayName: 'Otto' });
    await host.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'm', apiKey: 'host-key' } });
    worldId = ((await (await host.fetch('/api/worlds', { method: 'POST', json: { world: sampleWorld('ashen-depths') } })).json()) as { id: string }).id;
    await host.fetch(`/api/worlds/${worldId}/rooms-allowed`, { method: 'PUT', json: { allowed: true } });
    roomId = (await openRoom(host, worldId, { triggerMode: 'manual', speechMode: 'free' })).room.id;
    expect((await joinWith(player, await inviteTo(host, roomId, 'player'))).status).toBe(200);
    expect((await joinWith(spectator, await inviteTo(host, roomId, 'spectator'))).status).toBe(200);
  });
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  afterAll(async () => {
    await db?.end();
    await server?.stop();
    await provider?.close();
  });

  /** What the database holds of the room: its messages, queue, members and state, to show that a refusal changed nothing. */
  const holdings = async () =>
    JSON.stringify(
      await Promise.all([
        db.query('select id, content from chat_messages where session_id = $1 order by position', [roomId]),
        db.query('select id, content from room_queue where session_id = $1 order by id', [roomId]),
        db.query('select id, role, left_at, barred from session_participants where session_id = $1 order by id', [roomId]),
        db.query('select state, message_count from chat_sessions where id = $1', [roomId]),
        db.query('select trigger_mode, speech_mode, turn_participant_id, ended_at from chat_rooms where session_id = $1', [roomId]),
      ]).then((results) => results.map((r) => r.rows)),
    );

  it('a non-member reads nothing of a room and changes nothing: every route answers 404, as for no room at all', async () => {
    const before = await holdings();
    const message = (await readRoom(host, roomId)).messages[0];
    const reads = [`/api/rooms/${roomId}`, `/api/rooms/${roomId}/world`, `/api/rooms/${roomId}/events?after=0-0`, `/api/rooms/${roomId}/invites`, `/api/sessions/${roomId}`];
    if (message) reads.push(`/api/rooms/${roomId}/messages/${message.id}`);
    for (const path of reads) expect((await outsider.fetch(path)).status, path).toBe(404);
    const writes: [string, string, unknown][] = [
      ['POST', `/api/rooms/${roomId}/messages`, { content: 'let me in' }],
      ['POST', `/api/rooms/${roomId}/typing`, {}],
      ['POST', `/api/rooms/${roomId}/reply`, {}],
      ['PATCH', `/api/rooms/${roomId}`, { triggerMode: 'instant' }],
      ['POST', `/api/rooms/${roomId}/invites`, { role: 'player' }],
      ['POST', `/api/rooms/${roomId}/end`, {}],
      ['POST', `/api/rooms/${roomId}/leave`, {}],
      ['POST', `/api/sessions/${roomId}/actions/drink-potion`, {}],
      ['PUT', `/api/sessions/${roomId}/variables/hp`, { value: 1 }],
      ['POST', `/api/sessions/${roomId}/events`, { type: 'spatial:zone-enter' }],
    ];
    for (const [method, path, json] of writes) expect((await outsider.fetch(path, { method, json })).status, `${method} ${path}`).toBe(404);
    // a room that does not exist answers the same
    expect(await codeOf(await outsider.fetch('/api/rooms/cnv_nosuchroomatall00000'))).toBe('NOT_FOUND');
    expect(await holdings()).toBe(before);
  });

  it('a spectator reads along and writes nothing: no message, no action, no variable, no typing', async () => {
    const before = await holdings();
    expect((await readRoom(spectator, roomId)).me.role).toBe('spectator');
    const stream = await openRoomStream(spectator, roomId, (await readRoom(spectator, roomId)).eventId);
    streams.push(stream);
    expect(stream.status).toBe(200);
    for (const [method, path, json] of [
      ['POST', `/api/rooms/${roomId}/messages`, { content: 'hello' }],
      ['POST', `/api/rooms/${roomId}/typing`, {}],
      ['POST', `/api/sessions/${roomId}/actions/drink-potion`, {}],
      ['PUT', `/api/sessions/${roomId}/variables/hp`, { value: 1 }],
      ['POST', `/api/sessions/${roomId}/context`, { message: 'obey me' }],
      ['DELETE', `/api/sessions/${roomId}/choices`, undefined],
    ] as const) {
      const res = await spectator.fetch(path, { method, json });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await codeOf(res)).toBe('SPECTATOR');
    }
    expect(await holdings()).toBe(before);
  });

  it("a player does nothing of the host's: modes, reply, regenerate, invites, removal, ending, edits of the conversation", async () => {
    // a reply to edit: the round of Pia's message, answered
    provider.enqueue({ kind: 'completion', content: 'The dark answers.' });
    await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'answered for Pia' } });
    await host.fetch(`/api/rooms/${roomId}/reply`, { method: 'POST' });
    // the world's greeting, Pia's message and the reply
    await expect.poll(async () => (await readRoom(player, roomId)).messages.map((m) => m.status)).toEqual(['complete', 'complete', 'complete']);
    await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'queued by Pia' } });
    const before = await holdings();
    const room = await readRoom(player, roomId);
    const hostMember = room.members.find((m) => m.role === 'host')!;
    const spectatorMember = room.members.find((m) => m.role === 'spectator')!;
    const hostOnly: [string, string, unknown][] = [
      ['PATCH', `/api/rooms/${roomId}`, { triggerMode: 'instant' }],
      ['POST', `/api/rooms/${roomId}/reply`, {}],
      ['POST', `/api/rooms/${roomId}/regenerate`, {}],
      ['POST', `/api/rooms/${roomId}/continue`, {}],
      ['POST', `/api/rooms/${roomId}/stop`, {}],
      ['POST', `/api/rooms/${roomId}/invites`, { role: 'player' }],
      ['GET', `/api/rooms/${roomId}/invites`, undefined],
      ['DELETE', `/api/rooms/${roomId}/members/${spectatorMember.id}`, undefined],
      ['PATCH', `/api/rooms/${roomId}/members/${spectatorMember.id}`, { role: 'player' }],
      ['POST', `/api/rooms/${roomId}/end`, {}],
    ];
    for (const [method, path, json] of hostOnly) {
      const res = await player.fetch(path, { method, json });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await codeOf(res)).toBe('HOST_ONLY');
    }
    // the conversation's own routes are the host's session: to a player they name no session
    const message = room.messages[0]!;
    for (const [method, path, json] of [
      ['PATCH', `/api/sessions/${roomId}/messages/${message.id}`, { content: 'rewritten' }],
      ['DELETE', `/api/sessions/${roomId}/messages/${message.id}`, undefined],
      ['POST', `/api/sessions/${roomId}/restart`, undefined],
      ['POST', `/api/sessions/${roomId}/checkpoints`, { name: 'mine' }],
      ['PUT', `/api/sessions/${roomId}/memory`, { memory: 'forget the host' }],
      ['DELETE', `/api/sessions/${roomId}`, undefined],
    ] as const) {
      expect((await player.fetch(path, { method, json })).status, `${method} ${path}`).toBe(404);
    }
    // the host's queued message is not the player's to withdraw
    await host.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'queued by the host' } });
    const hostQueued = (await readRoom(player, roomId)).queue.find((q) => q.participantId === hostMember.id)!;
    expect((await player.fetch(`/api/rooms/${roomId}/queue/${hostQueued.id}`, { method: 'DELETE' })).status).toBe(404);
    await host.fetch(`/api/rooms/${roomId}/queue/${hostQueued.id}`, { method: 'DELETE' });
    expect(await holdings()).toBe(before);
  });

  it("one member's interface never acts as another: it cannot set another player's value, and what it writes goes under its own name", async () => {
    const room = await readRoom(player, roomId);
    const hostAccount = room.members.find((m) => m.role === 'host')!.accountId!;
    const before = await holdings();
    const res = await player.fetch(`/api/sessions/${roomId}/variables/hp`, { method: 'PUT', json: { value: 1, targetUserId: hostAccount } });
    expect(res.status).toBe(403);
    // an account that is not in the room is no target, even for the host's interface
    const outsiderId = ((await (await outsider.fetch('/api/auth/session')).json()) as { account: { id: string } }).account.id;
    expect((await host.fetch(`/api/sessions/${roomId}/variables/hp`, { method: 'PUT', json: { value: 1, targetUserId: outsiderId } })).status).toBe(404);
    // a forged target, a global value with a target, a target outside a room: 400
    expect((await player.fetch(`/api/sessions/${roomId}/variables/hp`, { method: 'PUT', json: { value: 1, targetUserId: '../x' } })).status).toBe(400);
    expect((await player.fetch(`/api/sessions/${roomId}/variables/hp`, { method: 'PUT', json: { value: 1, scope: 'global', targetUserId: hostAccount } })).status).toBe(400);
    expect(await holdings()).toBe(before);
    // a message carries the writer's own participant and name, whatever the body says
    const forged = await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'hi', authorName: 'Host', participantId: room.members[0]!.id } });
    expect(forged.status).toBe(400);
    const sent = await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'as myself' } });
    expect(((await sent.json()) as { queued: { authorName: string; participantId: string } }).queued).toMatchObject({ authorName: 'Pia', participantId: room.me.participantId });
  });

  it('an invite link joins nobody once expired or revoked, or when the room is full; a forged token is refused alike', async () => {
    const later = new Browser(server.url);
    await signUp(server, later, { displayName: 'Late' });
    const revoked = await inviteTo(host, roomId, 'player');
    const { invites } = (await (await host.fetch(`/api/rooms/${roomId}/invites`)).json()) as { invites: { id: string; revokedAt: string | null }[] };
    expect((await host.fetch(`/api/rooms/${roomId}/invites/${invites[0]!.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await codeOf(await joinWith(later, revoked))).toBe('INVITE_INVALID');
    const expired = await inviteTo(host, roomId, 'player');
    await db.query(`update room_invites set expires_at = now() - interval '1 second' where session_id = $1 and revoked_at is null`, [roomId]);
    expect(await codeOf(await joinWith(later, expired))).toBe('INVITE_INVALID');
    expect((await later.fetch('/api/room-invites/preview', { method: 'POST', json: { token: expired } })).status).toBe(404);
    expect(await codeOf(await joinWith(later, 'A'.repeat(43)))).toBe('INVITE_INVALID');
    expect((await joinWith(later, '../../x')).status).toBe(400);
    // full: 3 players (the host included) at most here, and 1 spectator
    const third = new Browser(server.url);
    await signUp(server, third, { displayName: 'Third' });
    expect((await joinWith(third, await inviteTo(host, roomId, 'player'))).status).toBe(200);
    expect(await codeOf(await joinWith(later, await inviteTo(host, roomId, 'player')))).toBe('ROOM_FULL');
    expect(await codeOf(await joinWith(later, await inviteTo(host, roomId, 'spectator')))).toBe('ROOM_FULL');
    expect((await readRoom(host, roomId)).members.map((m) => m.name)).not.toContain('Late');
    await third.fetch(`/api/rooms/${roomId}/leave`, { method: 'POST' });
  });

  it("a removed member's stream ends and they read nothing more; barred, no link brings them back", async () => {
    const guest = new Browser(server.url);
    await signUp(server, guest, { displayName: 'Gus' });
    expect((await joinWith(guest, await inviteTo(host, roomId, 'player'))).status).toBe(200);
    const mine = await readRoom(guest, roomId);
    const stream = await openRoomStream(guest, roomId, mine.eventId);
    streams.push(stream);
    expect((await host.fetch(`/api/rooms/${roomId}/members/${mine.me.participantId}?bar=true`, { method: 'DELETE' })).status).toBe(200);
    await stream.next((e) => e.event === 'removed');
    await expect.poll(() => stream.ended).toBe(true);
    expect((await guest.fetch(`/api/rooms/${roomId}`)).status).toBe(404);
    expect((await guest.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'still here?' } })).status).toBe(404);
    expect((await guest.fetch(`/api/rooms/${roomId}/events?after=0-0`)).status).toBe(404);
    expect(await codeOf(await joinWith(guest, await inviteTo(host, roomId, 'player')))).toBe('BARRED');
    // the host cannot be removed, and does not leave (they end the room)
    const hostId = (await readRoom(host, roomId)).me.participantId!;
    expect((await host.fetch(`/api/rooms/${roomId}/members/${hostId}`, { method: 'DELETE' })).status).toBe(409);
    expect((await host.fetch(`/api/rooms/${roomId}/leave`, { method: 'POST' })).status).toBe(409);
  });

  it('bad input gets a clear 4xx and changes nothing: oversized or empty messages, unknown modes, a turn out of order, a member writing too fast', async () => {
    const before = await holdings();
    for (const json of [{ content: 'x'.repeat(8_001) }, { content: '   ' }, {}, { content: 5 }]) {
      const res = await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json });
      expect(res.status).toBe(400);
      expect(await codeOf(res)).toBe('INVALID_REQUEST');
    }
    for (const json of [{ triggerMode: 'whenever' }, { speechMode: 'shouting' }, { timerSeconds: 0 }, { timerSeconds: 601 }, {}]) {
      expect((await host.fetch(`/api/rooms/${roomId}`, { method: 'PATCH', json })).status).toBe(400);
    }
    expect((await host.fetch(`/api/rooms/${roomId}/members/not-a-member`, { method: 'DELETE' })).status).toBe(404);
    expect((await host.fetch(`/api/rooms/${roomId}/turn`, { method: 'POST', json: {} })).status).toBe(409); // free speech has no turn
    expect(await holdings()).toBe(before);
    // turn-based: out of order is refused, nothing written
    expect((await host.fetch(`/api/rooms/${roomId}`, { method: 'PATCH', json: { speechMode: 'turns' } })).status).toBe(200);
    const turnsBefore = await holdings();
    const early = await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'out of turn' } });
    expect(early.status).toBe(409);
    expect(await codeOf(early)).toBe('NOT_YOUR_TURN');
    expect(await holdings()).toBe(turnsBefore);
    await host.fetch(`/api/rooms/${roomId}`, { method: 'PATCH', json: { speechMode: 'free' } });
    // the message rate per member (5 a minute here)
    const answers: number[] = [];
    for (let i = 0; i < 7; i++) answers.push((await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: `spam ${i}` } })).status);
    expect(answers.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
  });

  it('an ended room takes nothing new and its links stop working; its members still read it', async () => {
    const link = await inviteTo(host, roomId, 'player');
    expect((await host.fetch(`/api/rooms/${roomId}/end`, { method: 'POST' })).status).toBe(200);
    const before = await holdings();
    expect(await codeOf(await player.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'after the end' } }))).toBe('ROOM_ENDED');
    expect(await codeOf(await host.fetch(`/api/rooms/${roomId}/reply`, { method: 'POST' }))).toBe('ROOM_ENDED');
    expect(await codeOf(await host.fetch(`/api/rooms/${roomId}/invites`, { method: 'POST', json: { role: 'player' } }))).toBe('ROOM_ENDED');
    const late = new Browser(server.url);
    await signUp(server, late, { displayName: 'Later' });
    expect(await codeOf(await joinWith(late, link))).toBe('INVITE_INVALID');
    expect(await holdings()).toBe(before);
    expect((await readRoom(player, roomId)).room.endedAt).not.toBeNull();
  });
});
