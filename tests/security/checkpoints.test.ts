import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCleanErrorBody, readEvents } from '../support/collector.ts';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Checkpoints (issue 18, item 9). Another account probing a session learns nothing (404, never
 * 409 "busy", even while a reply is being written) and changes nothing; restoring a checkpoint
 * leaves the list consistent: later checkpoints, whose messages the restore removed, are removed
 * with them, and every checkpoint left restores exactly what it saved.
 */

const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

interface SessionBody {
  session: { id: string; messageCount: number; state: unknown };
  messages: { content: string; role: string }[];
}

describe('checkpoints (real PostgreSQL and Redis)', () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let owner: Browser;
  let stranger: Browser;
  let worldId: string;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: 'sk-owner' });
    server = await startTestServer();
    owner = new Browser(server.url);
    stranger = new Browser(server.url);
    await signUp(server, owner, { email: `cp-owner-${Date.now()}@example.com`, password: 'long enough pw' });
    await signUp(server, stranger, { email: `cp-stranger-${Date.now()}@example.com`, password: 'long enough pw' });
    await owner.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: fake.url, defaultModel: 'm', apiKey: 'sk-owner' } });
    worldId = ((await (await owner.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
  });
  afterAll(async () => {
    await server?.stop();
    await fake?.close();
  });

  const read = async (id: string) => (await (await owner.fetch(`/api/sessions/${id}`)).json()) as SessionBody;
  const turn = async (id: string, content: string, reply: string) => {
    fake.enqueue(fakeReplies.completion(reply));
    await readEvents(await owner.fetch(`/api/sessions/${id}/messages`, { method: 'POST', json: { content } }));
  };
  const checkpoint = async (id: string, name: string) =>
    ((await (await owner.fetch(`/api/sessions/${id}/checkpoints`, { method: 'POST', json: { name } })).json()) as { id: string }).id;
  const list = async (id: string) =>
    ((await (await owner.fetch(`/api/sessions/${id}/checkpoints`)).json()) as { checkpoints: { id: string; name: string; messageCount: number }[] }).checkpoints;

  it('another account gets 404 (not 409) on a busy session and changes nothing', async () => {
    const s = ((await (await owner.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as SessionBody).session.id;
    await turn(s, 'first', 'One.');
    const cp = await checkpoint(s, 'safe');
    await turn(s, 'second', 'Two.');
    const before = await read(s);

    // the owner's reply is being written (the lock is held) while the stranger probes
    fake.enqueue(fakeReplies.slowStream('A long, slow answer that takes its time.', 50, 30));
    const running = owner.fetch(`/api/sessions/${s}/messages`, { method: 'POST', json: { content: 'third' } }).then(readEvents);
    await new Promise((r) => setTimeout(r, 300));
    const probes = [
      await stranger.fetch(`/api/sessions/${s}/checkpoints/${cp}/restore`, { method: 'POST' }),
      await stranger.fetch(`/api/sessions/${s}/checkpoints/nope/restore`, { method: 'POST' }),
      await stranger.fetch(`/api/sessions/${s}/checkpoints`),
      await stranger.fetch(`/api/sessions/${s}/checkpoints`, { method: 'POST', json: { name: 'mine' } }),
      await stranger.fetch(`/api/sessions/${s}/checkpoints/${cp}`, { method: 'DELETE' }),
      await stranger.fetch(`/api/sessions/${s}/messages`, { method: 'POST', json: { content: 'hi' } }),
      await stranger.fetch(`/api/sessions/${s}/regenerate`, { method: 'POST' }),
      await stranger.fetch(`/api/sessions/${s}/restart`, { method: 'POST' }),
    ];
    for (const res of probes) {
      expect(res.status).toBe(404);
      expect(isCleanErrorBody(await res.json())).toBe(true);
    }
    // the owner, by contrast, is told the session is busy
    expect((await owner.fetch(`/api/sessions/${s}/checkpoints/${cp}/restore`, { method: 'POST' })).status).toBe(409);
    await running;
    const after = await read(s);
    // what was stored is unchanged (an older message's view leaves its swipes out once a newer reply exists)
    const stored = (m: Record<string, unknown>) => ({ id: m.id, role: m.role, content: m.content, status: m.status });
    expect(after.messages.slice(0, before.messages.length).map(stored)).toEqual(before.messages.map(stored));
    expect((await list(s)).map((c) => c.id)).toEqual([cp]);
  });

  it('restoring a checkpoint removes the later ones; every checkpoint left restores exactly what it saved', async () => {
    const s = ((await (await owner.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as SessionBody).session.id;
    await turn(s, 'one', 'A.');
    const early = await checkpoint(s, 'early');
    const atEarly = await read(s);
    await turn(s, 'two', 'B.');
    const middle = await checkpoint(s, 'middle');
    await turn(s, 'three', 'C.');
    const late = await checkpoint(s, 'late');
    expect((await list(s)).map((c) => c.id)).toEqual([early, middle, late]);

    const restored = await owner.fetch(`/api/sessions/${s}/checkpoints/${early}/restore`, { method: 'POST' });
    expect(restored.status).toBe(200);
    const now = await read(s);
    expect(now.messages).toEqual(atEarly.messages);
    expect(now.session.state).toEqual(atEarly.session.state);
    expect(now.session.messageCount).toBe(atEarly.session.messageCount);
    // the later checkpoints pointed at messages that are gone: they are gone too
    expect((await list(s)).map((c) => c.id)).toEqual([early]);
    expect((await owner.fetch(`/api/sessions/${s}/checkpoints/${late}/restore`, { method: 'POST' })).status).toBe(404);
    expect((await owner.fetch(`/api/sessions/${s}/checkpoints/${middle}/restore`, { method: 'POST' })).status).toBe(404);

    // the one left still restores exactly its own point after the conversation moved on again
    await turn(s, 'four', 'D.');
    await owner.fetch(`/api/sessions/${s}/checkpoints/${early}/restore`, { method: 'POST' });
    const again = await read(s);
    expect(again.messages).toEqual(atEarly.messages);
    expect(again.session.state).toEqual(atEarly.session.state);
  });
});
