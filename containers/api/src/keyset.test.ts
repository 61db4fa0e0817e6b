import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../tests/support/server.ts';
import { signUp } from '../../../tests/support/sign-up.ts';

interface Listed {
  id: string;
}

describe('keyset pages of the lists that grow (issue 24)', () => {
  let server: TestServer;
  let player: Browser;
  let admin: Browser;

  async function signup(name: string): Promise<Browser> {
    const b = new Browser(server.url);
    const email = `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.com`;
    expect((await signUp(server, b, { email, password: 'long enough pw', displayName: name })).status).toBe(201);
    return b;
  }
  const json = async <T>(res: Promise<Response>) => (await (await res).json()) as T;
  /** Every page of `path` by cursor, `limit` at a time: the ids in order, and the number of pages. */
  async function walk(b: Browser, path: string, field: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const body = (await json<Record<string, unknown>>(b.fetch(`${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`))) as Record<string, Listed[]> & { nextCursor: string | null };
      expect(body[field]!.length).toBeLessThanOrEqual(limit);
      ids.push(...body[field]!.map((r) => r.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    return { ids, pages };
  }

  beforeAll(async () => {
    server = await startTestServer({}, { redis: false });
    player = await signup('Player');
    admin = await signup('Admin');
    await server.ctx.db.primary.query(`update accounts set is_admin = true where display_name = 'Admin'`);
  }, 60_000);
  afterAll(async () => server?.stop());

  it("a world's sessions page newest first by cursor, ties on the same microsecond included", async () => {
    const world = await json<{ id: string }>(player.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: 'Paged sessions' } } }));
    for (let i = 0; i < 5; i++) expect((await player.fetch(`/api/worlds/${world.id}/sessions`, { method: 'POST' })).status).toBe(201);
    const { rows } = await server.ctx.db.primary.query<{ id: string }>('select id from chat_sessions where world_id = $1 order by id limit 2', [world.id]);
    await server.ctx.db.primary.query(`update chat_sessions set updated_at = '2026-01-01T00:00:00.123456Z' where id = any($1)`, [rows.map((r) => r.id)]);
    const whole = await json<{ sessions: Listed[]; nextCursor: string | null }>(player.fetch(`/api/worlds/${world.id}/sessions`));
    expect(whole.sessions).toHaveLength(5);
    expect(whole.nextCursor).toBeNull();
    const paged = await walk(player, `/api/worlds/${world.id}/sessions`, 'sessions', 2);
    expect(paged.pages).toBe(3);
    expect(paged.ids).toEqual(whole.sessions.map((s) => s.id));
    expect(new Set(paged.ids).size).toBe(5);
    // The two tied sessions come last (oldest), the later id first.
    expect(paged.ids.slice(3)).toEqual(rows.map((r) => r.id).sort().reverse());
    expect((await player.fetch(`/api/worlds/${world.id}/sessions?cursor=bogus`)).status).toBe(400);
    expect((await player.fetch(`/api/worlds/${world.id}/sessions?limit=1000`)).status).toBe(400);
  });

  it('the review queue pages by cursor: pending oldest first, all newest first', async () => {
    const author = await signup('Author');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const w = await json<{ id: string }>(author.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: `Queued ${i}` } } }));
      expect((await author.fetch(`/api/worlds/${w.id}/publish`, { method: 'POST' })).status).toBe(200);
      ids.push(w.id);
    }
    const whole = await json<{ reviews: (Listed & { worldId: string })[] }>(admin.fetch('/api/admin/reviews'));
    expect(whole.reviews.map((r) => r.worldId)).toEqual(ids);
    const pending = await walk(admin, '/api/admin/reviews', 'reviews', 1);
    expect(pending.pages).toBe(3);
    expect(pending.ids).toEqual(whole.reviews.map((r) => r.id));
    const all = await walk(admin, '/api/admin/reviews?state=all', 'reviews', 2);
    expect(all.ids).toEqual([...pending.ids].reverse());
    expect((await admin.fetch('/api/admin/reviews?cursor=bogus')).status).toBe(400);
  });

  it("a work's update history and a player's inbox page newest first by cursor", async () => {
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const author = await signup('Chronicler');
    const w = await json<{ id: string }>(author.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: 'Chronicle' } } }));
    expect((await author.fetch(`/api/worlds/${w.id}/publish`, { method: 'POST' })).status).toBe(200);
    expect((await player.fetch(`/api/worlds/${w.id}/favorite`, { method: 'PUT' })).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const res = await author.fetch(`/api/worlds/${w.id}/updates`, { method: 'POST', json: { title: `Note ${i}`, content: '', isMajor: false, notifyPlayers: true } });
      expect(res.status).toBe(201);
    }
    const history = await json<{ updates: (Listed & { title: string })[]; nextCursor: string | null }>(player.fetch(`/api/worlds/${w.id}/updates`));
    expect(history.updates.map((u) => u.title)).toEqual(['Note 4', 'Note 3', 'Note 2', 'Note 1', 'Note 0']);
    expect(history.nextCursor).toBeNull();
    const pagedHistory = await walk(player, `/api/worlds/${w.id}/updates`, 'updates', 2);
    expect(pagedHistory.pages).toBe(3);
    expect(pagedHistory.ids).toEqual(history.updates.map((u) => u.id));

    const inbox = await json<{ items: Listed[]; unread: number; nextCursor: string | null }>(player.fetch('/api/inbox'));
    expect(inbox.items).toHaveLength(5);
    const pagedInbox = await walk(player, '/api/inbox', 'items', 2);
    expect(pagedInbox.ids).toEqual(inbox.items.map((i) => i.id));
    expect(new Set(pagedInbox.ids).size).toBe(5);
    for (const path of ['/api/inbox?cursor=bogus', `/api/worlds/${w.id}/updates?cursor=bogus`, '/api/inbox?limit=0']) {
      const res = await player.fetch(path);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/BAD_CURSOR|INVALID_REQUEST/);
    }
  });
});
