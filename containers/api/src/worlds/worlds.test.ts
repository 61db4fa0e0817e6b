import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

describe('world storage routes', () => {
  let server: TestServer;
  let author: Browser;
  let other: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    // These tests are about storage: publication goes live without review (the review rule has its own tests).
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    other = new Browser(server.url);
    await signUp(server, author, { email: `author-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Author' });
    await signUp(server, other, { email: `other-${Date.now()}@example.com`, password: 'long enough pw' });
  });
  afterAll(() => server?.stop());

  async function create(world: unknown) {
    const res = await author.fetch('/api/worlds', { method: 'POST', json: { world } });
    return { status: res.status, body: (await res.json()) as { id: string; revision: number; status: string; world: unknown } };
  }

  it('creates a world and reads it back unchanged (unknown fields of components and custom UI kept)', async () => {
    for (const name of ['ashen-depths', 'willow-street', 'changan-nights']) {
      const world = sample(name);
      const { status, body } = await create(world);
      expect(status).toBe(201);
      expect(body).toMatchObject({ revision: 1, status: 'saved' });
      const read = (await (await author.fetch(`/api/worlds/${body.id}`)).json()) as { world: unknown; canEdit: boolean };
      expect(read.world).toEqual(world);
      expect(read.canEdit).toBe(true);
      const row = await server.ctx.db.primary.query<{ definition: string; owner_id: string }>('select definition, owner_id from worlds where id = $1', [body.id]);
      expect(row.rows[0]!.definition).toBe(JSON.stringify(world));
    }
  });

  it('validation errors are 422 with every issue and its path; nothing is stored', async () => {
    const before = await server.ctx.db.primary.query('select count(*)::int as n from worlds');
    const res = await author.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: '', entries: 'nope' } } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { valid: boolean; issues: { path: string; message: string }[] };
    expect(body.valid).toBe(false);
    expect(body.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['name', 'entries']));
    const after = await server.ctx.db.primary.query('select count(*)::int as n from worlds');
    expect(after.rows[0]).toEqual(before.rows[0]);
    expect((await author.fetch('/api/worlds', { method: 'POST', json: { nope: 1 } })).status).toBe(400);
  });

  it('author-only writes; a stale update is refused with 409 and loses nothing', async () => {
    const world = sample('willow-street');
    const { body } = await create(world);
    const v2 = { ...world, description: 'Second draft' };
    const saved = await author.fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world: v2, revision: 1 } });
    expect(saved.status).toBe(200);
    expect(((await saved.json()) as { revision: number }).revision).toBe(2);

    // A second tab still at revision 1.
    const stale = await author.fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world: { ...world, description: 'Other tab' }, revision: 1 } });
    expect(stale.status).toBe(409);
    const conflict = (await stale.json()) as { error: { code: string }; current: { revision: number; world: { description: string } } };
    expect(conflict.error.code).toBe('STALE_REVISION');
    expect(conflict.current.revision).toBe(2);
    expect(conflict.current.world.description).toBe('Second draft');

    // Another account: not visible before publication (404), refused after (403); nothing changes.
    expect((await other.fetch(`/api/worlds/${body.id}`)).status).toBe(404);
    expect((await other.fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world, revision: 2 } })).status).toBe(404);
    expect((await author.fetch(`/api/worlds/${body.id}/publish`, { method: 'POST' })).status).toBe(200);
    expect((await other.fetch(`/api/worlds/${body.id}`)).status).toBe(200);
    for (const [method, path, json] of [
      ['PUT', `/api/worlds/${body.id}`, { world, revision: 2 }],
      ['DELETE', `/api/worlds/${body.id}`, undefined],
      ['POST', `/api/worlds/${body.id}/unpublish`, undefined],
    ] as const) {
      const r = await other.fetch(path, { method, json });
      expect(r.status, `${method} ${path}`).toBe(403);
    }
    const guest = await new Browser(server.url).fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world, revision: 2 } });
    expect(guest.status).toBe(401);
    const final = (await (await author.fetch(`/api/worlds/${body.id}`)).json()) as { revision: number; world: { description: string } };
    expect(final).toMatchObject({ revision: 2, world: { description: 'Second draft' } });
  });

  /** The stored row as the database holds it (not as a route reports it). */
  async function storedRow(id: string) {
    const { rows } = await server.ctx.db.primary.query<{
      status: string;
      revision: number;
      definition: string;
      name: string;
      updated_at: Date;
      published_at: Date | null;
      live_revision: number | null;
      live_definition: string | null;
    }>('select status, revision, definition, name, updated_at, published_at, live_revision, live_definition from worlds where id = $1', [id]);
    return rows[0]!;
  }
  const eventCount = async (id: string) =>
    (await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from world_publication_events where world_id = $1', [id])).rows[0]!.n;

  it('publish by a non-author is refused in every state, and the world’s status and live version stay as they were', async () => {
    const world = sample('willow-street');
    const guest = new Browser(server.url);

    // A saved (never published) world: invisible to the other account, so 404; a guest is 401.
    const { body: saved } = await create(world);
    const savedBefore = await storedRow(saved.id);
    const refusedSaved = await other.fetch(`/api/worlds/${saved.id}/publish`, { method: 'POST' });
    expect(refusedSaved.status).toBe(404);
    expect(((await refusedSaved.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await guest.fetch(`/api/worlds/${saved.id}/publish`, { method: 'POST' })).status).toBe(401);
    expect(await storedRow(saved.id)).toEqual(savedBefore);
    expect(savedBefore.status).toBe('saved');
    expect(await eventCount(saved.id)).toBe(0);
    expect((await other.fetch(`/api/library/${saved.id}`)).status).toBe(404);

    // A published world: visible, but only its author may (re)publish it: 403, nothing recorded.
    const { body: live } = await create(world);
    expect((await author.fetch(`/api/worlds/${live.id}/publish`, { method: 'POST' })).status).toBe(200);
    const liveBefore = await storedRow(live.id);
    const liveEvents = await eventCount(live.id);
    expect(liveBefore).toMatchObject({ status: 'published', live_revision: 1 });
    const refusedLive = await other.fetch(`/api/worlds/${live.id}/publish`, { method: 'POST' });
    expect(refusedLive.status).toBe(403);
    expect(((await refusedLive.json()) as { error: { code: string } }).error.code).toBe('NOT_AUTHOR');
    expect(await storedRow(live.id)).toEqual(liveBefore);
    expect(await eventCount(live.id)).toBe(liveEvents);

    // An unpublished world with a newer draft: a non-author publish would put the draft live; it is refused.
    const { body: withdrawn } = await create(world);
    expect((await author.fetch(`/api/worlds/${withdrawn.id}/publish`, { method: 'POST' })).status).toBe(200);
    expect((await author.fetch(`/api/worlds/${withdrawn.id}/unpublish`, { method: 'POST' })).status).toBe(200);
    const draft = await author.fetch(`/api/worlds/${withdrawn.id}`, { method: 'PUT', json: { world: { ...world, description: 'Unreleased draft' }, revision: 1 } });
    expect(draft.status).toBe(200);
    const withdrawnBefore = await storedRow(withdrawn.id);
    const withdrawnEvents = await eventCount(withdrawn.id);
    expect(withdrawnBefore).toMatchObject({ status: 'unpublished', revision: 2, live_revision: 1 });
    expect((await other.fetch(`/api/worlds/${withdrawn.id}/publish`, { method: 'POST' })).status).toBe(404);
    expect(await storedRow(withdrawn.id)).toEqual(withdrawnBefore);
    expect(await eventCount(withdrawn.id)).toBe(withdrawnEvents);
    expect((await other.fetch(`/api/library/${withdrawn.id}`)).status).toBe(404);

    // The author still can: the same route works for the owner, so the refusals above were about authorship.
    const own = await author.fetch(`/api/worlds/${withdrawn.id}/publish`, { method: 'POST' });
    expect(own.status).toBe(200);
    expect(await storedRow(withdrawn.id)).toMatchObject({ status: 'published', live_revision: 2 });
  });

  it('an invalid update is 422 with every issue path; the stored world and its revision are unchanged', async () => {
    const world = sample('willow-street');
    const { body } = await create(world);
    const before = await storedRow(body.id);
    const invalid = { ...world, name: '', settings: { ...world.settings, temperature: 5 }, description: 'Broken edit' };
    const res = await author.fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world: invalid, revision: 1 } });
    expect(res.status).toBe(422);
    const result = (await res.json()) as { valid: boolean; issues: { path: string; message: string }[] };
    expect(result.valid).toBe(false);
    expect(result.issues.map((i) => i.path).sort()).toEqual(['name', 'settings.temperature']);
    expect(result.issues.every((i) => i.message.length > 0)).toBe(true);

    // Byte for byte the same row: definition, revision, name, updated_at.
    expect(await storedRow(body.id)).toEqual(before);
    const read = (await (await author.fetch(`/api/worlds/${body.id}`)).json()) as { revision: number; world: unknown };
    expect(read.revision).toBe(1);
    expect(read.world).toEqual(world);

    // A published world: the invalid edit neither changes the draft nor the live version, nor publishes anything.
    expect((await author.fetch(`/api/worlds/${body.id}/publish`, { method: 'POST' })).status).toBe(200);
    const published = await storedRow(body.id);
    const events = await eventCount(body.id);
    const again = await author.fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world: { ...world, variables: 'nope' }, revision: 1 } });
    expect(again.status).toBe(422);
    expect(((await again.json()) as { issues: { path: string }[] }).issues.map((i) => i.path)).toContain('variables');
    expect(await storedRow(body.id)).toEqual(published);
    expect(await eventCount(body.id)).toBe(events);
    expect(((await (await other.fetch(`/api/library/${body.id}`)).json()) as { world: unknown }).world).toEqual(world);

    // The refused write consumed no revision: a valid update on revision 1 still applies and makes revision 2.
    const ok = await author.fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world: { ...world, description: 'Valid edit' }, revision: 1 } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { revision: number }).revision).toBe(2);
  });

  it('public browsing lists and searches published worlds by name, tag and language, paginated', async () => {
    const zh = sample('changan-nights');
    const { body: z } = await create(zh);
    await author.fetch(`/api/worlds/${z.id}/publish`, { method: 'POST' });
    const { body: hidden } = await create({ ...sample('ashen-depths'), name: 'Unpublished Depths' });

    const all = (await (await other.fetch('/api/library?pageSize=50')).json()) as { worlds: { id: string; name: string; author: string }[] };
    expect(all.worlds.map((w) => w.id)).toContain(z.id);
    expect(all.worlds.map((w) => w.id)).not.toContain(hidden.id);
    expect(all.worlds.find((w) => w.id === z.id)!.author).toBe('Author');

    const byName = (await (await other.fetch(`/api/library?q=${encodeURIComponent(zh.name.slice(0, 2))}`)).json()) as { worlds: { id: string }[] };
    expect(byName.worlds.map((w) => w.id)).toEqual([z.id]);
    if (zh.language) {
      const byLang = (await (await other.fetch(`/api/library?language=${zh.language}`)).json()) as { worlds: { id: string }[] };
      expect(byLang.worlds.map((w) => w.id)).toContain(z.id);
    }
    if (zh.customTags?.length) {
      const byTag = (await (await other.fetch(`/api/library?tag=${encodeURIComponent(zh.customTags[0])}`)).json()) as { worlds: { id: string }[] };
      expect(byTag.worlds.map((w) => w.id)).toContain(z.id);
    }
    const page1 = (await (await other.fetch('/api/library?pageSize=1&page=1')).json()) as { worlds: unknown[]; hasMore: boolean };
    expect(page1.worlds).toHaveLength(1);
    expect(page1.hasMore).toBe(true);
    expect((await other.fetch('/api/library?pageSize=500')).status).toBe(400);

    const details = await other.fetch(`/api/library/${z.id}`);
    expect(((await details.json()) as { world: unknown }).world).toEqual(zh);
    expect((await other.fetch(`/api/library/${hidden.id}`)).status).toBe(404);

    await author.fetch(`/api/worlds/${z.id}/unpublish`, { method: 'POST' });
    expect((await other.fetch(`/api/library/${z.id}`)).status).toBe(404);
  });
});

describe('public browsing uses the read pool when configured', () => {
  it('library queries go to the read endpoint; writes stay on the primary', async () => {
    const server = await startTestServer((url) => ({ DATABASE_READ_URL: url }));
    try {
      expect(server.ctx.db.read).not.toBe(server.ctx.db.primary);
      const before = server.ctx.db.read.pressure().total;
      expect(before).toBe(0);
      await fetch(`${server.url}/api/library`);
      expect(server.ctx.db.read.pressure().total).toBe(1);
    } finally {
      await server.stop();
    }
  });
});
