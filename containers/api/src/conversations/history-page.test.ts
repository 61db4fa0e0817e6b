import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillLongSession } from '../../../../tests/support/long-session.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

interface PageBody {
  session: { id: string; messageCount: number; state: unknown };
  messages: { id: string; position: number; content: string; swipes: unknown[]; swipeCount: number; swipesLoaded: boolean; stateSnapshot: unknown }[];
  history: { earlierCursor: string | null; limit: number };
}

const sample = JSON.parse(readFileSync(new URL('../../../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

describe('long sessions open a page at a time (issue 24)', () => {
  let server: TestServer;
  let player: Browser;
  let sessionId: string;

  beforeAll(async () => {
    server = await startTestServer({}, { redis: false });
    player = new Browser(server.url);
    await signUp(server, player, { email: `long-${Date.now()}@example.com`, password: 'long enough pw' });
    const world = (await (await player.fetch('/api/worlds', { method: 'POST', json: { world: sample } })).json()) as { id: string };
    const session = (await (await player.fetch(`/api/worlds/${world.id}/sessions`, { method: 'POST' })).json()) as PageBody;
    sessionId = session.session.id;
    await fillLongSession(server.ctx.db.primary, sessionId, 2000);
  }, 60_000);
  afterAll(async () => server?.stop());

  it('the first page of 2,000 messages: the newest 50, under 100 KB, swipes only on the newest', async () => {
    const res = await player.fetch(`/api/sessions/${sessionId}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBeLessThan(100 * 1024);
    const body = JSON.parse(text) as PageBody;
    expect(body.session.messageCount).toBe(2000);
    expect(body.messages.map((m) => m.position)).toEqual(Array.from({ length: 50 }, (_, i) => 1950 + i));
    expect(body.messages[0]!.content.startsWith('#1950 ')).toBe(true);
    expect(body.history).toEqual({ earlierCursor: '1950', limit: 50 });
    const newest = body.messages.at(-1)!;
    expect(newest).toMatchObject({ swipesLoaded: true, swipeCount: 2 });
    expect(newest.swipes).toHaveLength(2);
    // An older reply: its text and snapshot are here, its alternatives on demand.
    const older = body.messages.at(-3)!;
    expect(older).toMatchObject({ swipesLoaded: false, swipeCount: 2, swipes: [] });
    expect(older.stateSnapshot).toMatchObject({ turn: 1997 });
    const full = (await (await player.fetch(`/api/sessions/${sessionId}/messages/${older.id}`)).json()) as { message: PageBody['messages'][number] };
    expect(full.message).toMatchObject({ id: older.id, swipesLoaded: true, swipeCount: 2 });
    expect(full.message.swipes).toHaveLength(2);
  });

  it('earlier pages by cursor reach every message once, oldest first; bad cursors are 400s; others see 404', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body: PageBody = (await (await player.fetch(`/api/sessions/${sessionId}?limit=200${cursor ? `&before=${cursor}` : ''}`)).json()) as PageBody;
      seen.unshift(...body.messages.map((m) => m.position));
      // Only the session's newest message carries swipes.
      expect(body.messages.filter((m) => m.swipesLoaded).length).toBe(pages === 0 ? 1 : 0);
      cursor = body.history.earlierCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(10);
    expect(seen).toEqual(Array.from({ length: 2000 }, (_, i) => i));

    for (const bad of ['before=abc', 'before=-1', 'limit=0', 'limit=201']) {
      const res = await player.fetch(`/api/sessions/${sessionId}?${bad}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBeTruthy();
    }
    const stranger = new Browser(server.url);
    await signUp(server, stranger, { email: `stranger-${Date.now()}@example.com`, password: 'long enough pw' });
    expect((await stranger.fetch(`/api/sessions/${sessionId}?before=10`)).status).toBe(404);
    expect((await stranger.fetch(`/api/sessions/${sessionId}/messages/${sessionId}_5`)).status).toBe(404);
    expect((await player.fetch(`/api/sessions/${sessionId}/messages/nope`)).status).toBe(404);
  });
});
