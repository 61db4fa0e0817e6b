import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerSettings } from './support/container-settings.ts';
import { type FakeOpenAi, startFakeOpenAi } from './support/fake-openai.ts';
import { sampleWorld } from './support/player-world.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { type Replica, startReplica } from './support/replica.ts';
import { openRoom, openRoomStream, readRoom } from './support/rooms.ts';
import { Browser } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * Issue 51, point 1: scale-in drains a replica within ECS's stop timeout. ECS stops a task it scales
 * in with SIGTERM (then SIGKILL after the stop timeout, 30 s; SHUTDOWN_GRACE_MS, 25 s in
 * production, is the server's own limit). A turn being written finishes and is stored; the streams
 * that only watch (a room's events, a world's live update overview) are ended at once with a
 * `reconnect` event, so their clients resume on another replica instead of holding the task until
 * it is killed; the process exits on its own (code 0, not the grace timer's 1).
 */
describe('a replica scaled in (SIGTERM)', () => {
  let database: TestDatabase;
  let provider: FakeOpenAi;
  let replica: Replica;
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-scale-in-'));
  let outbox: string;

  beforeAll(async () => {
    [database, provider] = await Promise.all([createTestDatabase({ migrated: true }), startFakeOpenAi({ apiKey: 'own-key' })]);
    const settings = containerSettings('http://localhost:3000');
    outbox = settings.MAIL_OUTBOX_DIR!;
    replica = await startReplica('replica-a', {
      ...settings,
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      AI_PRIVATE_NETWORK_ACCESS: 'allow',
      DATABASE_POOL_MAX: '8',
      PASSWORD_HASH_COST: '10',
      NODE_ENV: 'test',
      SHUTDOWN_GRACE_MS: '20000',
    });
  }, 120_000);
  afterAll(async () => {
    replica?.child.kill('SIGKILL');
    await provider?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes the turn in flight, ends the watching streams with a reconnect event and exits on its own', async () => {
    const player = new Browser(replica.url);
    await signUp({ url: player.base, outbox }, player, { displayName: 'Ada' });
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'own-key' } });
    const worldId = ((await (await player.fetch('/api/worlds', { method: 'POST', json: { world: sampleWorld('ashen-depths') } })).json()) as { id: string }).id;
    await player.fetch(`/api/worlds/${worldId}/rooms-allowed`, { method: 'PUT', json: { allowed: true } });

    // a room's event stream and the world's live update overview: streams that only watch
    const roomId = (await openRoom(player, worldId, { triggerMode: 'manual', speechMode: 'free' })).room.id;
    const room = await openRoomStream(player, roomId, (await readRoom(player, roomId)).eventId);
    expect(room.status).toBe(200);
    const overview = await player.fetch(`/api/worlds/${worldId}/updates/events`);
    expect(overview.status).toBe(200);
    const overviewText = overview.text();

    // a turn whose reply takes a few seconds to stream
    const session = ((await (await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;
    provider.enqueue({ kind: 'completion', content: 'The torch gutters but holds. '.repeat(8), chunks: 20, chunkDelayMs: 150 });
    const turn = player.fetch(`/api/sessions/${session}/messages`, { method: 'POST', json: { content: 'I go down the stairs' } }).then((r) => r.text());
    await expect.poll(() => provider.completions.length, { timeout: 10_000 }).toBe(1);

    const exited = new Promise<number | null>((resolve) => replica.child.once('exit', (code) => resolve(code)));
    replica.child.kill('SIGTERM');

    // the watching streams end with a reconnect event (not held until the task is killed)
    await room.next((e) => e.event === 'reconnect', 10_000);
    await expect.poll(() => room.ended, { timeout: 10_000 }).toBe(true);
    expect(await overviewText).toContain('event: reconnect');
    // the turn in flight finishes and is stored whole
    const written = await turn;
    expect(written).toContain('event: done');
    expect(written).not.toContain('event: error');
    // and the process exits by itself, well before the grace timer would (exit code 1)
    expect(await exited).toBe(0);
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const { rows } = await db.query<{ content: string; status: string }>(`select content, status from chat_messages where session_id = $1 and role = 'assistant' order by position desc limit 1`, [session]).finally(() => db.end());
    expect(rows[0]).toEqual({ content: 'The torch gutters but holds. '.repeat(8), status: 'complete' });
  }, 120_000);
});
