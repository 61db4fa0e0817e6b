import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradientPng } from '../../../../tests/support/png.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { repoRoot } from '../web.ts';
import { decodeCursor, encodeCursor } from './library.ts';
import { publishSampleWorlds, SAMPLE_WORLDS } from './samples.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

interface Card {
  id: string;
  name: string;
  tags: string[];
  coverUrl: string | null;
  plays: number;
}
interface Page {
  worlds: Card[];
  hasMore: boolean;
  nextCursor: string | null;
}

describe('library, covers, my worlds, review notifications, credits (issue 22)', () => {
  let server: TestServer;
  let author: Browser;
  let reader: Browser;
  let admin: Browser;
  const emails: Record<string, string> = {};

  async function signup(displayName: string): Promise<Browser> {
    const b = new Browser(server.url);
    const email = `${displayName.toLowerCase().replace(/\W/g, '')}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.com`;
    const res = await signUp(server, b, { email, password: 'long enough pw', displayName });
    expect(res.status).toBe(201);
    emails[displayName] = email;
    return b;
  }
  const json = async <T>(res: Response | Promise<Response>) => (await (await res).json()) as T;
  async function create(name: string, tags: string[] = [], b = author): Promise<string> {
    const res = await b.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name, description: `${name} described`, customTags: tags } } });
    expect(res.status).toBe(201);
    return (await json<{ id: string }>(res)).id;
  }
  const publish = (id: string, b = author) => b.fetch(`/api/worlds/${id}/publish`, { method: 'POST' });

  beforeAll(async () => {
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: 'http://127.0.0.1:9/v1', OFFICIAL_AI_API_KEY: 'platform-key', WELCOME_CREDITS: '25' });
    author = await signup('Author');
    reader = await signup('Reader');
    admin = await signup('Admin');
    await server.ctx.db.primary.query('update accounts set is_admin = true where lower(email) = lower($1)', [emails.Admin]);
  }, 60_000);
  afterAll(async () => server?.stop());

  it('pages through every published world by keyset cursor in each sort, ties included, with no repeats', async () => {
    // Another author, whose publications are not held (the others' first publications stay held).
    const pager = await signup('Pager');
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await create(`Paged ${i}`, i % 2 ? ['odd'] : ['even'], pager));
      expect((await publish(ids[i]!, pager)).status).toBe(200);
    }
    // Two worlds published at the very same microsecond: the id breaks the tie.
    await server.ctx.db.primary.query(`update worlds set published_at = '2026-01-01T00:00:00.123456Z', live_updated_at = '2026-01-01T00:00:00.123456Z' where id = any($1)`, [[ids[1], ids[2]]]);
    // ids[3] has two players, ids[4] one.
    for (const b of [reader, admin]) expect((await b.fetch(`/api/worlds/${ids[3]}/sessions`, { method: 'POST' })).status).toBe(201);
    expect((await reader.fetch(`/api/worlds/${ids[4]}/sessions`, { method: 'POST' })).status).toBe(201);

    for (const sort of ['new', 'popular', 'updated']) {
      const whole = await json<Page>(reader.fetch(`/api/library?sort=${sort}&pageSize=50`));
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await json<Page>(reader.fetch(`/api/library?sort=${sort}&pageSize=2${cursor ? `&cursor=${cursor}` : ''}`));
        expect(page.worlds.length).toBeLessThanOrEqual(2);
        seen.push(...page.worlds.map((w) => w.id));
        cursor = page.nextCursor;
        expect(page.hasMore).toBe(cursor !== null);
      } while (cursor);
      expect(seen).toEqual(whole.worlds.map((w) => w.id));
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of ids) expect(seen).toContain(id);
    }
    const popular = await json<Page>(reader.fetch('/api/library?sort=popular&pageSize=2'));
    expect(popular.worlds.map((w) => [w.id, w.plays])).toEqual([
      [ids[3], 2],
      [ids[4], 1],
    ]);
    const odd = await json<Page>(reader.fetch('/api/library?tag=odd&pageSize=50'));
    expect(odd.worlds.map((w) => w.id).sort()).toEqual([ids[1], ids[3]].sort());
    const tags = await json<{ tags: { tag: string; count: number }[] }>(reader.fetch('/api/library/tags'));
    expect(tags.tags).toEqual(expect.arrayContaining([{ tag: 'even', count: 3 }, { tag: 'odd', count: 2 }]));

    // A forged or broken cursor is a 400 with the error shape, never a 500.
    for (const bad of ['nope', encodeCursor({ key: 'abc', id: 'x' }), Buffer.from('["1"]').toString('base64url')]) {
      const res = await reader.fetch(`/api/library?cursor=${bad}`);
      expect(res.status).toBe(400);
      expect((await json<{ error: { code: string } }>(res)).error.code).toMatch(/BAD_CURSOR|VALIDATION/);
    }
    expect(decodeCursor(encodeCursor({ key: '1767225600123456', id: 'wld_x' }))).toEqual({ key: '1767225600123456', id: 'wld_x' });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = true');
  });

  it('the player count is maintained: concurrent first sessions count each player once, a last session deleted uncounts, maintenance repairs drift; /api/home reads it', async () => {
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const owner = await signup('Count Author');
    const counted = await create('Counted world', ['counted'], owner);
    expect((await publish(counted, owner)).status).toBe(200);
    const players = await Promise.all([signup('Counter A'), signup('Counter B'), signup('Counter C')]);
    const plays = async () => (await json<Card>(reader.fetch(`/api/library/${counted}`))).plays;
    // Three players start four sessions each, all at once: 3 players.
    const started = await Promise.all(players.flatMap((b) => Array.from({ length: 4 }, () => b.fetch(`/api/worlds/${counted}/sessions`, { method: 'POST' }))));
    expect(started.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(await plays()).toBe(3);
    const { rows } = await server.ctx.db.primary.query<{ n: number }>('select count(distinct account_id)::int as n from chat_sessions where world_id = $1', [counted]);
    expect(rows[0]!.n).toBe(3);
    // Player A deletes three of their four sessions: still a player; the fourth too: no longer.
    const sessionsOfA = (await json<{ sessions: { id: string }[] }>(players[0]!.fetch(`/api/worlds/${counted}/sessions`))).sessions;
    expect(sessionsOfA).toHaveLength(4);
    for (const [i, s] of sessionsOfA.entries()) {
      expect((await players[0]!.fetch(`/api/sessions/${s.id}`, { method: 'DELETE' })).status).toBe(200);
      expect(await plays()).toBe(i < 3 ? 3 : 2);
    }
    // The most played list reads the same count, and the home page shows it.
    const newcomer = await signup('Homebody');
    const home = await json<{ popular: Card[]; newest: Card[]; recent: unknown; hasConnection: unknown }>(newcomer.fetch('/api/home'));
    expect(home.popular.find((w) => w.id === counted)?.plays).toBe(2);
    expect(home.newest[0]!.id).toBe(counted);
    expect(home.recent).toEqual([]);
    expect(home.hasConnection).toBe(false);
    const recentOfB = await json<{ recent: { worldId: string }[] }>(players[1]!.fetch('/api/home'));
    expect(recentOfB.recent.map((r) => r.worldId)).toEqual([counted]);
    const anonymous = await json<{ recent: unknown; hasConnection: unknown }>(new Browser(server.url).fetch('/api/home'));
    expect(anonymous).toMatchObject({ recent: null, hasConnection: null });
    // Drift (a count written by hand): maintenance puts it back from the sessions.
    await server.ctx.db.primary.query('update worlds set player_count = 40 where id = $1', [counted]);
    await server.ctx.db.primary.query('delete from world_players where world_id = $1', [counted]);
    expect(await plays()).toBe(40);
    const { repairPlayerCounts } = await import('./player-count.ts');
    expect(await repairPlayerCounts(server.ctx.db.primary)).toBeGreaterThanOrEqual(1);
    expect(await plays()).toBe(2);
    expect(await repairPlayerCounts(server.ctx.db.primary)).toBe(0);
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = true');
  });

  it('a cover is an image asset of the world checked by content; it reaches readers through publication', async () => {
    const id = await create('Covered');
    const upload = (bytes: Buffer) =>
      author.fetch(`/api/worlds/${id}/assets?name=cover.png`, { method: 'POST', body: new Uint8Array(bytes), headers: { 'content-type': 'application/octet-stream' } });
    // Text named cover.png is refused by its content; nothing is stored.
    expect((await upload(Buffer.from('this is not a picture'))).status).toBe(415);
    const png = await json<{ asset: { id: string } }>(upload(gradientPng(16, 9, [0, 0, 0], [255, 255, 255])));
    const other = await create('Other');
    const foreign = await json<{ asset: { id: string } }>(
      author.fetch(`/api/worlds/${other}/assets?name=x.png`, { method: 'POST', body: new Uint8Array(gradientPng(4, 4, [1, 2, 3], [4, 5, 6])), headers: { 'content-type': 'application/octet-stream' } }),
    );
    // Another world's asset, a stranger, a bad body: refused, the cover unchanged.
    expect((await author.fetch(`/api/worlds/${id}/cover`, { method: 'PUT', json: { assetId: foreign.asset.id } })).status).toBe(404);
    expect((await reader.fetch(`/api/worlds/${id}/cover`, { method: 'PUT', json: { assetId: png.asset.id } })).status).toBe(404);
    expect((await author.fetch(`/api/worlds/${id}/cover`, { method: 'PUT', json: { asset: 1 } })).status).toBe(400);
    const set = await author.fetch(`/api/worlds/${id}/cover`, { method: 'PUT', json: { assetId: png.asset.id } });
    expect(set.status).toBe(200);
    const view = await json<{ coverUrl: string; revision: number }>(set);
    expect(view.coverUrl).toBe(`/api/worlds/${id}/assets/${png.asset.id}`);
    expect(view.revision).toBe(2);
    const bytes = await author.fetch(view.coverUrl);
    expect(bytes.headers.get('content-type')).toBe('image/png');

    // Published (after review): the library card and the reader's view carry the cover.
    expect((await json<{ review: { held: boolean; reviewId: string } }>(publish(id))).review.held).toBe(true);
    const reviews = await json<{ reviews: { id: string; worldId: string }[] }>(admin.fetch('/api/admin/reviews'));
    const review = reviews.reviews.find((r) => r.worldId === id)!;
    expect((await admin.fetch(`/api/admin/reviews/${review.id}/approve`, { method: 'POST', json: {} })).status).toBe(200);
    const card = await json<Card>(reader.fetch(`/api/library/${id}`));
    expect(card.coverUrl).toBe(view.coverUrl);
    expect((await reader.fetch(view.coverUrl)).status).toBe(200);
  });

  it('my worlds carry the review state; decisions reach the author’s inbox with the reason; the admin sees the diff base', async () => {
    // The author published before: hold every publication for this test.
    await server.ctx.db.primary.query('update review_rule set hold_all_publications = true');
    const id = await create('Reviewed');
    expect((await json<{ review: { held: boolean } }>(publish(id))).review.held).toBe(true);
    const mine = async () => (await json<{ worlds: { id: string; status: string; review: { state: string; submittedAt: string; reason: string | null } | null }[] }>(author.fetch('/api/worlds'))).worlds.find((w) => w.id === id)!;
    expect(await mine()).toMatchObject({ status: 'held', review: { state: 'pending' } });
    expect(Date.parse((await mine()).review!.submittedAt)).toBeGreaterThan(0);

    const pending = async () => (await json<{ reviews: { id: string; worldId: string }[] }>(admin.fetch('/api/admin/reviews'))).reviews.find((r) => r.worldId === id)!;
    const first = await pending();
    const detail = await json<{ approved: unknown; world: { name: string } }>(admin.fetch(`/api/admin/reviews/${first.id}`));
    expect(detail.approved).toBeNull();
    expect(detail.world.name).toBe('Reviewed');
    // A reader is not an administrator: the queue and the decisions are refused.
    expect((await reader.fetch(`/api/admin/reviews/${first.id}`)).status).toBe(403);

    expect((await admin.fetch(`/api/admin/reviews/${first.id}/reject`, { method: 'POST', json: { reason: 'Add an opening scene.' } })).status).toBe(200);
    expect(await mine()).toMatchObject({ status: 'saved', review: { state: 'rejected', reason: 'Add an opening scene.' } });
    let inbox = await json<{ items: { worldId: string; snapshot: { title: string; content: string; kind: string } }[]; unread: number }>(author.fetch('/api/inbox'));
    expect(inbox.items[0]).toMatchObject({ worldId: id, snapshot: { kind: 'review.rejected', title: 'Not approved: Reviewed', content: 'Reason: Add an opening scene.' } });

    expect((await json<{ review: { held: boolean } }>(publish(id))).review.held).toBe(true);
    const second = await pending();
    expect((await admin.fetch(`/api/admin/reviews/${second.id}/approve`, { method: 'POST', json: {} })).status).toBe(200);
    inbox = await json(author.fetch('/api/inbox'));
    expect(inbox.items[0]!.snapshot).toMatchObject({ kind: 'review.approved', title: 'Approved: Reviewed is published' });
    expect(inbox.unread).toBeGreaterThanOrEqual(2);
    // The reader got nothing.
    expect((await json<{ items: unknown[] }>(reader.fetch('/api/inbox'))).items.filter((i) => (i as { worldId: string }).worldId === id)).toEqual([]);

    // A held edit of the live work: the admin's diff base is the approved version; other players keep playing it.
    const current = await json<{ revision: number; world: Record<string, unknown> }>(author.fetch(`/api/worlds/${id}`));
    const saved = await author.fetch(`/api/worlds/${id}`, { method: 'PUT', json: { world: { ...current.world, description: 'Edited while live' }, revision: current.revision } });
    expect(saved.status).toBe(200);
    const edit = await pending();
    const editDetail = await json<{ approved: { world: { description: string } }; world: { description: string } }>(admin.fetch(`/api/admin/reviews/${edit.id}`));
    expect(editDetail.approved.world.description).toBe('Reviewed described');
    expect(editDetail.world.description).toBe('Edited while live');
    const session = await json<{ session: { id: string } }>(reader.fetch(`/api/worlds/${id}/sessions`, { method: 'POST' }));
    expect(session.session.id).toBeTruthy();
    const played = await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from chat_sessions where id = $1', [session.session.id]);
    expect(played.rows[0]!.n).toBe(1);
    expect((await mine()).review).toMatchObject({ state: 'pending' });
    expect((await mine()).status).toBe('published');
    await server.ctx.db.primary.query('update review_rule set hold_all_publications = false');
  });

  it('duplicate makes a new draft of the working copy; only the author can', async () => {
    const id = await create('Original');
    const res = await author.fetch(`/api/worlds/${id}/duplicate`, { method: 'POST' });
    expect(res.status).toBe(201);
    const copy = await json<{ id: string; status: string; world: { name: string } }>(res);
    expect(copy.id).not.toBe(id);
    expect(copy).toMatchObject({ status: 'saved', world: { name: 'Original (copy)' } });
    expect((await reader.fetch(`/api/worlds/${id}/duplicate`, { method: 'POST' })).status).toBe(404);
  });

  it('credits: welcome credits, automatic source of AI, grants and holds by e-mail or name', async () => {
    const fresh = await signup('Fresh Player');
    let billing = await json<{ credits: number; preference: string; source: string; officialAvailable: boolean; ledger: { kind: string; detail: string }[] }>(fresh.fetch('/api/billing'));
    expect(billing).toMatchObject({ credits: 25, preference: 'auto', source: 'official', officialAvailable: true });
    expect(billing.ledger[0]).toMatchObject({ kind: 'grant', detail: 'Welcome credits' });
    // With a connection of their own, 'auto' plays on it.
    expect((await fresh.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: 'https://llm.example/v1', defaultModel: 'm', apiKey: 'sk-own-1234567890' } })).status).toBe(200);
    billing = await json(fresh.fetch('/api/billing'));
    expect(billing.source).toBe('private');
    expect((await fresh.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'official' } })).status).toBe(200);
    expect((await json<{ source: string }>(fresh.fetch('/api/billing'))).source).toBe('official');
    expect((await fresh.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'free-lunch' } })).status).toBe(400);

    // Grants name the account by e-mail or display name; several of one name are a 409; nobody is a 404.
    const grant = (account: string) => admin.fetch('/api/admin/credits', { method: 'POST', json: { account, amount: 10, reason: 'Thanks' } });
    const byEmail = await grant(emails['Fresh Player']!.toUpperCase());
    expect(byEmail.status).toBe(200);
    expect(await json(byEmail)).toMatchObject({ credits: 35, account: { displayName: 'Fresh Player' } });
    expect((await grant('Fresh Player')).status).toBe(200);
    await signup('Fresh Player');
    const twice = await grant('Fresh Player');
    expect(twice.status).toBe(409);
    expect((await json<{ error: { code: string; message: string } }>(twice)).error.code).toBe('AMBIGUOUS_ACCOUNT');
    expect((await grant('nobody@example.com')).status).toBe(404);
    expect((await reader.fetch('/api/admin/credits', { method: 'POST', json: { account: emails.Reader, amount: 5, reason: 'me' } })).status).toBe(403);
    expect((await admin.fetch('/api/admin/credits', { method: 'POST', json: { amount: 5, reason: 'x' } })).status).toBe(400);

    // Holding an account's publications by its e-mail.
    const hold = await admin.fetch('/api/admin/review-flag', { method: 'PUT', json: { account: emails.Reader, hold: true, reason: 'spam' } });
    expect(hold.status).toBe(200);
    expect(await json(hold)).toMatchObject({ displayName: 'Reader', hold: true });
    const flags = await json<{ flaggedAccounts: { displayName: string }[] }>(admin.fetch('/api/admin/review-rule'));
    expect(flags.flaggedAccounts.map((f) => f.displayName)).toContain('Reader');
  });

  it('npm run admin -- grant|revoke <email> changes the role; an unknown e-mail fails', async () => {
    const env = { ...process.env, DATABASE_URL: server.database.url, DATA_DIR: server.dataDir, LOG_LEVEL: 'fatal' };
    const run = (...args: string[]) => promisify(execFile)('npx', ['tsx', 'scripts/admin.ts', ...args], { cwd: repoRoot, env });
    const isAdmin = async () => (await server.ctx.db.primary.query<{ is_admin: boolean }>('select is_admin from accounts where lower(email) = lower($1)', [emails.Reader])).rows[0]!.is_admin;
    expect(await isAdmin()).toBe(false);
    expect((await run('grant', emails.Reader!)).stdout).toContain('is now an administrator');
    expect(await isAdmin()).toBe(true);
    expect((await run('revoke', emails.Reader!)).stdout).toContain('is no longer an administrator');
    expect(await isAdmin()).toBe(false);
    await expect(run('grant', 'nobody@example.com')).rejects.toMatchObject({ code: 1 });
    await expect(run('promote', emails.Reader!)).rejects.toMatchObject({ code: 2 });
  }, 180_000); // four admin commands as processes (tsx compiles each): 13 s each at load 19

  it('sample worlds are published once by the samples account', async () => {
    expect(await publishSampleWorlds(server.ctx)).toBe(SAMPLE_WORLDS.length);
    expect(await publishSampleWorlds(server.ctx)).toBe(0);
    const card = await json<Card & { author: string }>(reader.fetch('/api/library/wld_sample_willow_street'));
    expect(card).toMatchObject({ name: 'Rain on Willow Street', author: 'Yumina samples' });
    const all = await json<Page>(reader.fetch('/api/library?pageSize=50&q=Ashen'));
    expect(all.worlds.map((w) => w.id)).toEqual(['wld_sample_ashen_depths']);
  });
});
