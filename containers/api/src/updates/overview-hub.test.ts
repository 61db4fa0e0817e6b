import type { Queryable } from '@yumina/db';
import { updatesChannel } from '@yumina/updates';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { OverviewHub, type OverviewWatcher, type Work } from './overview-hub.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('live update overviews fan out per world (issue 24)', () => {
  let server: TestServer;
  let worldId = '';
  let authorId = '';

  beforeAll(async () => {
    server = await startTestServer({}, { redis: false });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const author = new Browser(server.url);
    await signUp(server, author, { email: `hub-${Date.now()}@example.com`, password: 'long enough pw' });
    worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: 'Watched' } } })).json()) as { id: string }).id;
    expect((await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' })).status).toBe(200);
    authorId = (await server.ctx.db.primary.query<{ owner_id: string }>('select owner_id from worlds where id = $1', [worldId])).rows[0]!.owner_id;
  }, 60_000);
  afterAll(async () => server?.stop());

  it('100 streams on a world: one subscription, one read per poll and per record, each shared by all', async () => {
    // The real database and store, counted.
    const reads: string[] = [];
    const db: Queryable = {
      query: ((text: string, values?: unknown[]) => {
        reads.push(text);
        return server.ctx.db.primary.query(text, values);
      }) as Queryable['query'],
    };
    let subscriptions = 0;
    const store = Object.create(server.ctx.store) as typeof server.ctx.store;
    store.subscribe = (channel, on) => {
      subscriptions++;
      return server.ctx.store.subscribe(channel, on);
    };
    const hub = new OverviewHub(db, store, server.app.log, 100);
    const seen = Array.from({ length: 100 }, () => ({ works: [] as (Work | null)[], records: [] as string[] }));
    const stops = await Promise.all(
      seen.map((s) => hub.watch(worldId, { onWork: (w) => s.works.push(w), onRecord: (r) => s.records.push(r.id) } satisfies OverviewWatcher)),
    );
    expect(subscriptions).toBe(1);
    expect(hub.worlds).toBe(1);
    expect(hub.size).toBe(100);

    await settle(550);
    const polls = reads.length;
    // ~5 polls in 550 ms: one read each for all 100 streams (not 100 × 5).
    expect(polls).toBeGreaterThanOrEqual(1);
    expect(polls).toBeLessThanOrEqual(10);
    await settle(30); // a read in flight lands
    const delivered = seen[0]!.works.length;
    expect(delivered).toBeGreaterThanOrEqual(polls - 1);
    for (const s of seen) {
      expect(s.works.length).toBe(delivered);
      expect(s.works.at(-1)).toMatchObject({ id: worldId, status: 'published' });
    }

    // A published record is read once and reaches every stream.
    await server.ctx.db.primary.query(`insert into world_updates (id, world_id, author_id, title, status) values ('upd_hub_1', $1, $2, 'Hello', 'published')`, [worldId, authorId]);
    const before = reads.length;
    await server.ctx.store.publish(updatesChannel(worldId), JSON.stringify({ type: 'record', updateId: 'upd_hub_1', worldId }));
    await expect.poll(() => seen.every((s) => s.records.includes('upd_hub_1'))).toBe(true);
    expect(reads.slice(before).filter((t) => /from world_updates/.test(t))).toHaveLength(1);

    // The last stream gone: the subscription and the poll stop.
    for (const stop of stops) stop();
    expect(hub.worlds).toBe(0);
    const after = reads.length;
    await settle(350);
    expect(reads.length).toBe(after);
  });

  it('streams being opened share one read of their world while it runs and for freshMs after (issue 28)', async () => {
    const reads: string[] = [];
    const db: Queryable = {
      query: ((text: string, values?: unknown[]) => {
        reads.push(text);
        return server.ctx.db.primary.query(text, values);
      }) as Queryable['query'],
    };
    const hub = new OverviewHub(db, server.ctx.store, server.app.log, 60_000, 200);
    const works = await Promise.all(Array.from({ length: 500 }, () => hub.work(worldId)));
    expect(reads).toHaveLength(1);
    expect(new Set(works).size).toBe(1);
    expect(works[0]).toMatchObject({ id: worldId, status: 'published' });
    await hub.work(worldId);
    expect(reads).toHaveLength(1); // still fresh
    await settle(250);
    await hub.work(worldId);
    expect(reads).toHaveLength(2); // read again once older than freshMs
    // a failed read is not kept: the next caller reads again
    const failing: Queryable = { query: (() => Promise.reject(new Error('down'))) as Queryable['query'] };
    await settle(250);
    await expect(hub.work(worldId, failing)).rejects.toThrow('down');
    await hub.work(worldId);
    expect(reads).toHaveLength(3);
  });
});
