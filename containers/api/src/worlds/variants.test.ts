import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observer } from '../../../../tests/support/postgres.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const sample = JSON.parse(readFileSync(new URL('../../../../packages/world/samples/willow-street.json', import.meta.url), 'utf8'));

interface Group {
  originalId: string | null;
  variants: { id: string; name: string; language: string | null; status: string; isOriginal: boolean }[];
}

/** Polls with some patience. */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 10_000, interval: 20 });

describe('language variants of a work', () => {
  let server: TestServer;
  let author: Browser;
  let other: Browser;
  const q = <R extends Record<string, unknown>>(sql: string, values?: unknown[]) => server.ctx.db.primary.query<R>(sql, values);

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    other = new Browser(server.url);
    for (const [b, name] of [
      [author, 'author'],
      [other, 'other'],
    ] as const) {
      const res = await signUp(server, b, { email: `${name}-${Date.now()}@example.com`, password: 'long enough pw', displayName: name });
      expect(res.status).toBe(201);
    }
    // Publication goes live at once here (the review rule has its own tests).
    await q('update review_rule set hold_first_publication = false, hold_all_publications = false');
  });
  afterAll(() => server?.stop());

  async function newWorld(opts: { name?: string; language?: string; publish?: boolean; owner?: Browser } = {}): Promise<string> {
    const owner = opts.owner ?? author;
    const world = { ...sample, name: opts.name ?? sample.name, ...(opts.language ? { language: opts.language } : {}) };
    const res = await owner.fetch('/api/worlds', { method: 'POST', json: { world } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    if (opts.publish) expect((await owner.fetch(`/api/worlds/${id}/publish`, { method: 'POST' })).status).toBe(200);
    return id;
  }

  async function link(b: Browser, id: string, originalId: string | null) {
    const res = await b.fetch(`/api/worlds/${id}/variant-of`, { method: 'PUT', json: { originalId } });
    return { status: res.status, body: (await res.json()) as Group & { error?: { code: string; message: string } } };
  }
  async function group(b: Browser, id: string) {
    const res = await b.fetch(`/api/worlds/${id}/variants`);
    return { status: res.status, body: (await res.json()) as Group & { error?: { code: string } } };
  }
  const rows = async () => (await q<{ world_id: string; original_id: string }>('select world_id, original_id from world_variants order by world_id')).rows;

  it('link and unlink round trip; GET lists the whole group except the world itself', async () => {
    const en = await newWorld({ name: 'Willow', language: 'en' });
    const ja = await newWorld({ name: 'ウィロー', language: 'ja' });
    const es = await newWorld({ name: 'Sauce', language: 'es' });
    expect((await group(author, en)).body).toEqual({ originalId: null, variants: [] });

    const linked = await link(author, ja, en);
    expect(linked.status).toBe(200);
    expect(linked.body).toEqual({ originalId: en, variants: [{ id: en, name: 'Willow', language: 'en', status: 'saved', isOriginal: true }] });
    expect((await link(author, es, en)).status).toBe(200);

    expect((await group(author, en)).body).toEqual({
      originalId: null,
      variants: [
        { id: es, name: 'Sauce', language: 'es', status: 'saved', isOriginal: false },
        { id: ja, name: 'ウィロー', language: 'ja', status: 'saved', isOriginal: false },
      ],
    });
    expect((await group(author, ja)).body.variants.map((v) => [v.id, v.isOriginal])).toEqual([
      [en, true],
      [es, false],
    ]);

    const unlinked = await link(author, ja, null);
    expect(unlinked).toEqual({ status: 200, body: { originalId: null, variants: [] } });
    expect((await rows()).filter((r) => [en, ja, es].includes(r.world_id))).toEqual([{ world_id: es, original_id: en }]);
    // Unlinking a world that is no variant changes nothing and answers the same.
    expect((await link(author, ja, null)).status).toBe(200);
    expect((await link(author, es, null)).status).toBe(200);
    expect((await group(author, en)).body).toEqual({ originalId: null, variants: [] });
  });

  it('linking to a variant links to its original (one level only)', async () => {
    const root = await newWorld({ language: 'en' });
    const variant = await newWorld({ language: 'ja' });
    const third = await newWorld({ language: 'es' });
    expect((await link(author, variant, root)).status).toBe(200);
    const res = await link(author, third, variant);
    expect(res.status).toBe(200);
    expect(res.body.originalId).toBe(root);
    expect((await rows()).filter((r) => r.world_id === third)).toEqual([{ world_id: third, original_id: root }]);
    // Moving a variant to another work replaces its link.
    const elsewhere = await newWorld({ language: 'en' });
    expect((await link(author, third, elsewhere)).body.originalId).toBe(elsewhere);
    expect((await rows()).filter((r) => r.world_id === third)).toEqual([{ world_id: third, original_id: elsewhere }]);
  });

  it('refuses self, cycles, links into its own group and worlds with variants (409); nothing changes', async () => {
    const a = await newWorld();
    const b = await newWorld();
    const c = await newWorld();
    const d = await newWorld();
    expect((await link(author, b, a)).status).toBe(200);
    expect((await link(author, c, a)).status).toBe(200);
    const before = await rows();
    const refusals: [string, string, string][] = [
      [a, a, 'VARIANT_SELF'],
      [b, b, 'VARIANT_SELF'],
      [a, b, 'VARIANT_SAME_GROUP'], // the original into its own variant: a cycle
      [b, c, 'VARIANT_SAME_GROUP'], // a sibling: already in that work
      [b, a, 'VARIANT_SAME_GROUP'],
      [a, d, 'VARIANT_HAS_VARIANTS'],
    ];
    for (const [id, originalId, code] of refusals) {
      const res = await link(author, id, originalId);
      expect(res.status, `${id} → ${originalId}`).toBe(409);
      expect(res.body.error?.code).toBe(code);
    }
    expect((await link(author, a, d)).body.error?.message).toMatch(/unlink its variants first/);
    expect(await rows()).toEqual(before);

    // Bad bodies: 400, nothing changes.
    for (const json of [{}, { originalId: 5 }, { originalId: d, extra: true }, { originalId: '' }]) {
      expect((await author.fetch(`/api/worlds/${d}/variant-of`, { method: 'PUT', json })).status).toBe(400);
    }
    expect((await new Browser(server.url).fetch(`/api/worlds/${d}/variant-of`, { method: 'PUT', json: { originalId: a } })).status).toBe(401);
    expect(await rows()).toEqual(before);
  });

  it('another account gets 404 for worlds it does not own and changes nothing', async () => {
    const mine = await newWorld({ publish: true });
    const mineToo = await newWorld();
    const theirs = await newWorld({ owner: other, publish: true });
    expect((await link(author, mineToo, mine)).status).toBe(200);
    const before = await rows();
    for (const [b, id, originalId] of [
      [other, mineToo, null], // unlink someone else's variant
      [other, mine, theirs], // link someone else's world into one's own
      [other, theirs, mine], // link one's own world to someone else's
      [author, theirs, mine],
      [author, mine, theirs],
      [author, mine, 'wld_nope'],
      [author, 'wld_nope', mine],
    ] as const) {
      const res = await link(b, id, originalId);
      expect(res.status, `${id} → ${originalId}`).toBe(404);
      expect(res.body.error?.code).toBe('NOT_FOUND');
    }
    expect(await rows()).toEqual(before);
  });

  it('a reader who is not the owner sees only the published members, and 404 for an unpublished world', async () => {
    const root = await newWorld({ name: 'Root', language: 'en', publish: true });
    const published = await newWorld({ name: 'Published', language: 'ja', publish: true });
    const hidden = await newWorld({ name: 'Hidden', language: 'es' });
    expect((await link(author, published, root)).status).toBe(200);
    expect((await link(author, hidden, root)).status).toBe(200);

    expect((await group(author, root)).body.variants.map((v) => v.id)).toEqual([hidden, published]);
    for (const reader of [other, new Browser(server.url)]) {
      expect((await group(reader, root)).body).toEqual({ originalId: null, variants: [{ id: published, name: 'Published', language: 'ja', status: 'published', isOriginal: false }] });
      expect((await group(reader, published)).body).toEqual({ originalId: root, variants: [{ id: root, name: 'Root', language: 'en', status: 'published', isOriginal: true }] });
      expect((await group(reader, hidden)).status).toBe(404);
      expect((await group(reader, 'wld_nope')).status).toBe(404);
    }
    // An unpublished original is not shown, and neither is its id.
    expect((await author.fetch(`/api/worlds/${root}/unpublish`, { method: 'POST' })).status).toBe(200);
    expect((await group(other, published)).body).toEqual({ originalId: null, variants: [] });
  });

  it('the update history of the original mixes the records of a linked published variant, each with its own world id', async () => {
    const original = await newWorld({ language: 'en', publish: true });
    const variant = await newWorld({ language: 'zh-CN', publish: true });
    const post = async (worldId: string, title: string) => {
      const res = await author.fetch(`/api/worlds/${worldId}/updates`, { method: 'POST', json: { title, content: '', isMajor: false, notifyPlayers: false } });
      expect(res.status).toBe(201);
      return ((await res.json()) as { update: { id: string } }).update.id;
    };
    const history = async (b: Browser, worldId: string) =>
      ((await (await b.fetch(`/api/worlds/${worldId}/updates`)).json()) as { updates: { id: string; worldId: string }[] }).updates.map((u) => [u.id, u.worldId]);
    const a = await post(original, 'EN notes');
    const b = await post(variant, 'ZH notes');
    expect(await history(other, original)).toEqual([[a, original]]);

    expect((await link(author, variant, original)).status).toBe(200);
    expect(await history(other, original)).toEqual([
      [b, variant],
      [a, original],
    ]);
    expect(await history(other, variant)).toEqual([
      [b, variant],
      [a, original],
    ]);
    expect((await link(author, variant, null)).status).toBe(200);
    expect(await history(other, original)).toEqual([[a, original]]);
  });

  it('deleting a variant removes its row; deleting an original removes the rows of its variants', async () => {
    const root = await newWorld();
    const v1 = await newWorld();
    const v2 = await newWorld();
    expect((await link(author, v1, root)).status).toBe(200);
    expect((await link(author, v2, root)).status).toBe(200);
    expect((await author.fetch(`/api/worlds/${v1}`, { method: 'DELETE' })).status).toBe(200);
    expect((await rows()).filter((r) => r.original_id === root)).toEqual([{ world_id: v2, original_id: root }]);
    expect((await group(author, root)).body.variants.map((v) => v.id)).toEqual([v2]);
    expect((await author.fetch(`/api/worlds/${root}`, { method: 'DELETE' })).status).toBe(200);
    expect((await rows()).filter((r) => r.world_id === v2 || r.original_id === root)).toEqual([]);
    expect((await group(author, v2)).body).toEqual({ originalId: null, variants: [] });
  });

  it('concurrency: racing links A→B and B→A (and a three-way A→B, B→C, C→A) never build a chain or a cycle', async () => {
    const holder = await observer(server.database.url);
    try {
      const waiting = async () =>
        (await holder.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0]!.n;
      for (let round = 0; round < 6; round++) {
        const three = round % 2 === 1;
        const ids = [await newWorld(), await newWorld(), ...(three ? [await newWorld()] : [])];
        const pairs = ids.map((id, i) => [id, ids[(i + 1) % ids.length]!] as const);
        // Hold the rows so every request has read its guess and waits at its lock; then let go.
        await holder.query('begin');
        await holder.query('select 1 from worlds where id = any($1::text[]) for update', [ids]);
        const racing = pairs.map(([id, originalId]) => link(author, id, originalId));
        await poll(waiting).toBe(pairs.length);
        await holder.query('commit');
        const answers = await Promise.all(racing);

        const statuses = answers.map((r) => r.status);
        const linked = (await rows()).filter((r) => ids.includes(r.world_id));
        expect(statuses.every((s) => s === 200 || s === 409), JSON.stringify(answers)).toBe(true);
        for (const r of answers) if (r.status === 409) expect(['VARIANT_SAME_GROUP', 'VARIANT_HAS_VARIANTS']).toContain(r.body.error?.code);
        // Each success is one row, and every row names an original that names nobody.
        expect(linked.length).toBe(statuses.filter((s) => s === 200).length);
        expect(linked.length).toBeGreaterThanOrEqual(1);
        expect(linked.length).toBeLessThanOrEqual(ids.length - 1);
        for (const r of linked) expect(linked.some((o) => o.world_id === r.original_id)).toBe(false);
        if (!three) expect(statuses.sort()).toEqual([200, 409]);
      }
      const chains = await q<{ n: number }>('select count(*)::int as n from world_variants v join world_variants o on o.original_id = v.world_id');
      expect(chains.rows[0]!.n).toBe(0);
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
    }
  }, 60_000);
});
