import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from './support/collector.ts';
import { containerSettings } from './support/container-settings.ts';
import { type FakeOpenAi, startFakeOpenAi } from './support/fake-openai.ts';
import { sampleWorld } from './support/player-world.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { type Replica, startReplica } from './support/replica.ts';
import { Browser } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * A sending turn holds its session's lock on a lease it renews while it runs (TURN_LEASE_SECONDS,
 * 30 s; 3 s here). Found by the chaos drill (issue 51): a turn whose replica was killed kept its
 * session busy for the lock's 180 s, so the player's next message was refused with SESSION_BUSY
 * until they pressed Stop. Now the session is free again within a lease, the dead turn's reply
 * ends as failed, and a turn that runs longer than its lease keeps its lock.
 */
describe('the lease of a turn’s lock (two replicas, one killed)', () => {
  let database: TestDatabase;
  let provider: FakeOpenAi;
  const replicas: Replica[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-lease-'));
  let env: Record<string, string>;

  beforeAll(async () => {
    [database, provider] = await Promise.all([createTestDatabase({ migrated: true }), startFakeOpenAi({ apiKey: 'own-key' })]);
    env = { ...containerSettings('http://localhost:3000'), LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: database.url, AI_PRIVATE_NETWORK_ACCESS: 'allow', DATABASE_POOL_MAX: '6', PASSWORD_HASH_COST: '10', NODE_ENV: 'test', TURN_LEASE_SECONDS: '3' };
    replicas.push(...(await Promise.all([startReplica('replica-a', env), startReplica('replica-b', env)])));
  }, 120_000);
  afterAll(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    await provider?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a turn longer than its lease keeps the lock; a killed replica’s turn frees its session within a lease, its reply failed', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const onA = new Browser(a.url);
    await signUp({ url: onA.base, outbox: env.MAIL_OUTBOX_DIR! }, onA, { displayName: 'Ada' });
    const onB = new Browser(b.url);
    onB.cookies = onA.cookies;
    await onA.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'own-key' } });
    const worldId = ((await (await onA.fetch('/api/worlds', { method: 'POST', json: { world: sampleWorld('ashen-depths') } })).json()) as { id: string }).id;
    const session = ((await (await onA.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;
    const send = (client: Browser, content: string) => client.fetch(`/api/sessions/${session}/messages`, { method: 'POST', json: { content } });

    // 1. A reply that streams for ~7 s (over two leases) on replica A: the session stays busy for B all along.
    provider.enqueue({ kind: 'completion', content: 'The river is slow here. '.repeat(7), chunks: 14, chunkDelayMs: 500 });
    const long = send(onA, 'I follow the river').then(readEvents);
    await expect.poll(() => provider.completions.length, { timeout: 10_000 }).toBe(1);
    for (let i = 0; i < 5; i++) {
      expect((await send(onB, 'Are you done?')).status).toBe(409);
      await new Promise((r) => setTimeout(r, 1_200));
    }
    expect((await long).at(-1)!.event).toBe('done');

    // 2. A reply that would stream for 60 s, its replica killed mid-way: within a lease B can send again.
    provider.enqueue({ kind: 'completion', content: 'The door '.repeat(60), chunks: 60, chunkDelayMs: 1_000 });
    const doomed = send(onA, 'I open the door').then((r) => r.text()).catch(() => 'cut');
    await expect.poll(() => provider.completions.length, { timeout: 10_000 }).toBe(2);
    a.child.kill('SIGKILL');
    expect(await doomed).not.toContain('event: done');
    const killedAt = Date.now();
    const busy = await send(onB, 'Hello?');
    expect(busy.status).toBe(409); // the lease still runs
    provider.enqueue({ kind: 'completion', content: 'Someone answers.' });
    let after: Response | undefined;
    while (Date.now() - killedAt < 15_000) {
      after = await send(onB, 'Hello?');
      if (after.status !== 409) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(after!.status).toBe(200);
    expect(Date.now() - killedAt).toBeLessThan(3_000 + 2_000); // a lease (3 s) and the polling's slack, not 180 s
    expect((await readEvents(after!)).at(-1)!.event).toBe('done');

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const { rows } = await db.query<{ role: string; content: string; status: string }>(`select role, content, status from chat_messages where session_id = $1 order by position`, [session]).finally(() => db.end());
    // the dead turn's reply ended as failed; the player's message and the new exchange are kept (after the world's greeting)
    expect(rows.map((r) => [r.role, r.status])).toEqual([
      ['assistant', 'complete'],
      ['user', 'complete'],
      ['assistant', 'complete'],
      ['user', 'complete'],
      ['assistant', 'failed'],
      ['user', 'complete'],
      ['assistant', 'complete'],
    ]);
    expect(rows.at(-1)!.content).toBe('Someone answers.');
  }, 120_000);
});
