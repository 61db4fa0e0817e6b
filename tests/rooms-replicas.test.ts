import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerSettings } from './support/container-settings.ts';
import { type FakeOpenAi, startFakeOpenAi } from './support/fake-openai.ts';
import { sampleWorld } from './support/player-world.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { type Replica, startReplica } from './support/replica.ts';
import { inviteTo, joinWith, openRoom, openRoomStream, readRoom, type RoomStream } from './support/rooms.ts';
import { Browser } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * A room whose members sit on two container replicas (docs/ROOMS.md, "Across replicas"): what one
 * member does reaches the members on the other replica through Redis; a replica killed in the
 * middle of a reply loses nothing: its members reconnect to the other and resume after the last
 * event they saw, the round's messages stay, the reply ends as failed for everyone to see, and the
 * host's retry answers it.
 */
describe('a room across two replicas', () => {
  let database: TestDatabase;
  let provider: FakeOpenAi;
  const replicas: Replica[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-room-replicas-'));
  let outbox: string;
  const streams: RoomStream[] = [];

  beforeAll(async () => {
    [database, provider] = await Promise.all([createTestDatabase({ migrated: true }), startFakeOpenAi({ apiKey: 'host-key' })]);
    const settings = containerSettings('http://localhost:3000');
    outbox = settings.MAIL_OUTBOX_DIR!;
    const env = { ...settings, LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: database.url, AI_PRIVATE_NETWORK_ACCESS: 'allow', DATABASE_POOL_MAX: '8', PASSWORD_HASH_COST: '10', NODE_ENV: 'test' };
    replicas.push(...(await Promise.all([startReplica('replica-a', env), startReplica('replica-b', env)])));
  }, 120_000);
  afterAll(async () => {
    for (const s of streams) s.close();
    for (const r of replicas) r.child.kill('SIGKILL');
    await provider?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('members on different replicas see each other at once; a replica killed mid-reply loses nothing and the host retries on the other', async () => {
    const [a, b] = replicas as [Replica, Replica];
    // the host and Ann on replica A, Bo and the spectator on replica B
    const host = new Browser(a.url);
    const ann = new Browser(a.url);
    const bo = new Browser(b.url);
    const wes = new Browser(b.url);
    for (const [client, name] of [[host, 'Hana'], [ann, 'Ann'], [bo, 'Bo'], [wes, 'Wes']] as const) await signUp({ url: client.base, outbox }, client, { displayName: name });
    await host.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'room-model', apiKey: 'host-key' } });
    const worldId = ((await (await host.fetch('/api/worlds', { method: 'POST', json: { world: sampleWorld('ashen-depths') } })).json()) as { id: string }).id;
    await host.fetch(`/api/worlds/${worldId}/rooms-allowed`, { method: 'PUT', json: { allowed: true } });
    const roomId = (await openRoom(host, worldId, { triggerMode: 'instant', speechMode: 'free' })).room.id;
    for (const [client, role] of [[ann, 'player'], [bo, 'player'], [wes, 'spectator']] as const) expect((await joinWith(client, await inviteTo(host, roomId, role))).status).toBe(200);
    const open = async (client: Browser, after?: string) => {
      const s = await openRoomStream(client, roomId, after ?? (await readRoom(client, roomId)).eventId);
      streams.push(s);
      return s;
    };
    const s = { host: await open(host), ann: await open(ann), bo: await open(bo), wes: await open(wes) };
    await expect.poll(async () => (await readRoom(bo, roomId)).members.filter((m) => m.online).length, { timeout: 10_000 }).toBe(4);

    // a message written on B reaches A's members, and the reply written on B streams to everyone
    provider.enqueue({ kind: 'completion', content: 'Bo’s torch lights the hall.', chunks: 3 });
    const sent = performance.now();
    await bo.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'I light my torch' } });
    const seenOnA = await s.ann.next((e) => e.event === 'reply:start');
    expect(seenOnA.at - sent).toBeLessThan(1000);
    for (const member of Object.values(s)) await member.next((e) => e.event === 'reply:done');

    // a reply written on A, which dies in the middle of it
    provider.enqueue({ kind: 'completion', content: 'The ghoul rises slowly, very slowly, from the ashes of the hall.', chunks: 40, chunkDelayMs: 100 });
    await ann.fetch(`/api/rooms/${roomId}/messages`, { method: 'POST', json: { content: 'I look at the ashes' } });
    await s.bo.next((e) => e.event === 'delta');
    const lastSeen = s.ann.events.filter((e) => e.id).at(-1)!.id!;
    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('exit', r));
    // A's members come back through B (as the load balancer sends them there), after the last event they saw
    const onB = (client: Browser) => Object.assign(new Browser(b.url), { cookies: client.cookies });
    const [hostB, annB] = [onB(host), onB(ann)];
    const annAgain = await open(annB, lastSeen);
    const failed = await annAgain.next((e) => e.event === 'reply:error', 20_000);
    expect(failed.data.code).toBe('REPLY_INTERRUPTED');
    await s.bo.next((e) => e.event === 'reply:error', 5_000);
    const room = await readRoom(bo, roomId);
    expect(room.messages.at(-1)).toMatchObject({ role: 'user', content: 'I look at the ashes', authorName: 'Ann' });
    expect(room.messages.at(-1)!.failure?.code).toBe('REPLY_INTERRUPTED');
    expect(room.room.roundState).toBe('waiting');
    // the host retries on B: the round is answered
    provider.enqueue({ kind: 'completion', content: 'The ashes settle.' });
    expect((await hostB.fetch(`/api/rooms/${roomId}/regenerate`, { method: 'POST' })).status).toBe(202);
    const done = await annAgain.next((e) => e.event === 'reply:done');
    expect((done.data.message as { content: string }).content).toBe('The ashes settle.');
    await s.wes.next((e) => e.event === 'reply:done');
    expect((await readRoom(hostB, roomId)).messages.slice(-2).map((m) => [m.role, m.content])).toEqual([
      ['user', 'I look at the ashes'],
      ['assistant', 'The ashes settle.'],
    ]);
  }, 120_000);
});
