import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPostgres } from '../../../../tests/support/postgres.ts';
import { hasRedis } from '../../../../tests/support/redis.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

describe.runIf(hasPostgres && hasRedis)('world storage routes', () => {
  let server: TestServer;
  let author: Browser;
  let other: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    // These tests are about storage: publication goes live without review (the review rule has its own tests).
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    other = new Browser(server.url);
    await author.fetch('/api/auth/signup', { method: 'POST', json: { email: `author-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Author' } });
    await other.fetch('/api/auth/signup', { method: 'POST', json: { email: `other-${Date.now()}@example.com`, password: 'long enough pw' } });
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

describe.runIf(hasPostgres && hasRedis)('public browsing uses the read pool when configured', () => {
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
