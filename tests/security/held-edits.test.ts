import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Item 4 of issue 18: held edits never reach players. An approved world is edited by its author
 * and the edit is held for review; every reader a player or guest uses must still serve the
 * approved text, and only the author (studio) sees the edit. Real server, PostgreSQL and Redis;
 * the AI provider is the loopback fake, whose recorded requests show the prompt that was sent.
 */

interface Entry {
  id: string;
  content: string;
}
type World = { name: string; description: string; entries: Entry[] } & Record<string, unknown>;

const sample = (): World => JSON.parse(readFileSync(new URL('../../packages/world/samples/willow-street.json', import.meta.url), 'utf8')) as World;

function version(label: 'APPROVED' | 'HELD'): World {
  const world = sample();
  world.name = `Willow Street ${label}`;
  world.description = `${label}-DESCRIPTION`;
  for (const e of world.entries) {
    if (e.id === 'greeting') e.content = `${label}-GREETING The bell rings.`;
    if (e.id === 'story-frame') e.content = `${label}-FRAME Tell this story in close third person.`;
  }
  return world;
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('held edits never reach players', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let author: Browser;
  let player: Browser;
  let worldId: string;
  let heldAssetUrl: string;

  async function signup(name: string): Promise<{ browser: Browser; id: string }> {
    const browser = new Browser(server.url);
    const res = await signUp(server, browser, { email: `${name}@example.com`, password: 'long enough pw', displayName: name });
    expect(res.status).toBe(201);
    return { browser, id: (res as { account: { id: string } }).account.id };
  }

  const prompts = () => provider.completions.map((r) => JSON.stringify(r.body!.messages));

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    server = await startTestServer({
      OFFICIAL_AI_BASE_URL: provider.url,
      OFFICIAL_AI_API_KEY: 'official-key',
      GUEST_PREVIEW_TURNS_PER_HOUR: '20',
    });
    const admin = await signup('admin');
    await server.ctx.db.primary.query('update accounts set is_admin = true where id = $1', [admin.id]);
    // Every publication is held, so the author's later edit waits for review.
    expect((await admin.browser.fetch('/api/admin/review-rule', { method: 'PUT', json: { holdFirstPublication: true, holdAllPublications: true } })).status).toBe(200);

    author = (await signup('author')).browser;
    const created = await author.fetch('/api/worlds', { method: 'POST', json: { world: version('APPROVED') } });
    expect(created.status).toBe(201);
    worldId = ((await created.json()) as { id: string }).id;
    expect(((await (await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' })).json()) as { status: string }).status).toBe('held');
    const approve = async () => {
      const reviews = ((await (await admin.browser.fetch('/api/admin/reviews')).json()) as { reviews: { id: string; worldId: string }[] }).reviews;
      const review = reviews.find((r) => r.worldId === worldId)!;
      expect((await admin.browser.fetch(`/api/admin/reviews/${review.id}/approve`, { method: 'POST', json: {} })).status).toBe(200);
    };
    await approve();

    // The author edits the approved world; the edit (and an asset only it uses) is held for review.
    const upload = await author.fetch(`/api/worlds/${worldId}/assets?name=held.png`, { method: 'POST', headers: { 'content-type': 'image/png' }, body: PNG });
    expect(upload.status).toBe(201);
    const asset = ((await upload.json()) as { asset: { id: string; url: string } }).asset;
    heldAssetUrl = asset.url;
    const current = (await (await author.fetch(`/api/worlds/${worldId}`)).json()) as { revision: number };
    const held = version('HELD');
    held.description = `HELD-DESCRIPTION asset://${asset.id}`;
    const saved = await author.fetch(`/api/worlds/${worldId}`, { method: 'PUT', json: { world: held, revision: current.revision } });
    expect(saved.status).toBe(200);
    const pending = await server.ctx.db.primary.query<{ n: number }>(`select count(*)::int as n from world_reviews where world_id = $1 and state = 'pending' and kind = 'edit'`, [worldId]);
    expect(pending.rows[0]!.n).toBe(1);

    player = (await signup('player')).browser;
    expect((await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'player-key' } })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  it('anonymous preview and a preview turn serve the approved text; the provider never sees the held edit', async () => {
    const guest = new Browser(server.url);
    const preview = await guest.fetch(`/api/worlds/${worldId}/preview`);
    expect(preview.status).toBe(200);
    const text = await preview.text();
    expect(text).toContain('APPROVED-GREETING');
    expect(text).not.toContain('HELD-');

    provider.reset();
    const turn = await guest.fetch(`/api/worlds/${worldId}/preview/turn`, { method: 'POST', json: { message: 'Hello there', history: [], state: null } });
    expect(turn.status).toBe(200);
    expect(prompts().length).toBe(1);
    expect(prompts()[0]).toContain('APPROVED-FRAME');
    expect(prompts()[0]).not.toContain('HELD-');
  });

  it("another account's new session greets with the approved text and its turn's prompt holds no held text", async () => {
    const created = await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' });
    expect(created.status).toBe(201);
    const session = (await created.json()) as { session: { id: string }; messages: { content: string }[] };
    expect(session.messages[0]!.content).toContain('APPROVED-GREETING');
    expect(JSON.stringify(session)).not.toContain('HELD-');

    provider.reset();
    const turn = await player.fetch(`/api/sessions/${session.session.id}/messages`, { method: 'POST', json: { content: 'Hi Mina' } });
    expect(turn.status).toBe(200);
    await turn.text(); // the event stream runs to its end
    expect(prompts().length).toBe(1);
    expect(prompts()[0]).toContain('APPROVED-FRAME');
    expect(prompts()[0]).not.toContain('HELD-');

    // ai.complete (the interface's side call) with the world's lorebook: the approved entries only.
    for (const includeLorebook of ['all', 'matched'] as const) {
      provider.reset();
      const side = await player.fetch(`/api/sessions/${session.session.id}/ai/complete`, {
        method: 'POST',
        json: { messages: [{ role: 'user', content: 'Summarise' }], includeLorebook },
      });
      expect(side.status).toBe(200);
      expect(prompts().length).toBe(1);
      expect(prompts()[0]).toContain('APPROVED-FRAME');
      expect(prompts()[0]).not.toContain('HELD-');
    }
  });

  it('details, library and assets serve the approved version to everyone else; the author’s studio shows the edit', async () => {
    for (const who of [new Browser(server.url), player]) {
      const details = await who.fetch(`/api/worlds/${worldId}`);
      expect(details.status).toBe(200);
      const body = await details.text();
      expect(body).toContain('APPROVED-GREETING');
      expect(body).not.toContain('HELD-');
      const card = await who.fetch(`/api/library/${worldId}`);
      expect(await card.text()).not.toContain('HELD');
      const list = await (await who.fetch('/api/library?q=Willow')).text();
      expect(list).toContain('Willow Street APPROVED');
      expect(list).not.toContain('HELD');
      expect((await who.fetch('/api/library?q=HELD')).ok).toBe(true);
      expect(((await (await who.fetch('/api/library?q=HELD')).json()) as { worlds: unknown[] }).worlds).toEqual([]);
      // The asset only the held edit uses is not public.
      const hidden = await who.fetch(heldAssetUrl);
      expect(hidden.status).toBe(404);
      expect(await hidden.json()).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
    }

    const studio = (await (await author.fetch(`/api/worlds/${worldId}`)).json()) as { canEdit: boolean; world: World };
    expect(studio.canEdit).toBe(true);
    expect(JSON.stringify(studio.world)).toContain('HELD-GREETING');
    expect((await author.fetch(heldAssetUrl)).status).toBe(200);
  });
});
