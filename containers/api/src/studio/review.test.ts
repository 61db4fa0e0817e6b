import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

interface Review {
  id: string;
  worldId: string;
  kind: string;
  state: string;
  reason: string | null;
  revision: number;
}

describe('review workflow', () => {
  let server: TestServer;
  let admin: Browser;
  let reader: Browser;

  async function signup(displayName: string): Promise<{ browser: Browser; id: string }> {
    const browser = new Browser(server.url);
    const res = await signUp(server, browser, { email: `${displayName.toLowerCase().replace(/\W/g, '')}-${Date.now()}-${Math.random()}@example.com`, password: 'long enough pw', displayName });
    expect(res.status).toBeLessThan(300);
    const session = (await (await browser.fetch('/api/auth/session')).json()) as { account: { id: string } };
    return { browser, id: session.account.id };
  }

  async function createWorld(author: Browser, world: unknown): Promise<{ id: string; revision: number }> {
    const res = await author.fetch('/api/worlds', { method: 'POST', json: { world } });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; revision: number };
  }

  const libraryIds = async () => ((await (await reader.fetch('/api/library?pageSize=50')).json()) as { worlds: { id: string }[] }).worlds.map((w) => w.id);
  const pending = async () => ((await (await admin.fetch('/api/admin/reviews')).json()) as { reviews: Review[] }).reviews;

  beforeAll(async () => {
    server = await startTestServer();
    const a = await signup('Admin');
    admin = a.browser;
    await server.ctx.db.primary.query('update accounts set is_admin = true where id = $1', [a.id]);
    reader = new Browser(server.url);
  });
  afterAll(() => server?.stop());

  it('first publication is held out of the library until an administrator approves; every transition recorded', async () => {
    const { browser: author, id: authorId } = await signup('New Author');
    const world = sample('willow-street');
    const { id } = await createWorld(author, world);

    const res = await author.fetch(`/api/worlds/${id}/publish`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; review: { held: boolean; because: string } };
    expect(body.status).toBe('held');
    expect(body.review).toMatchObject({ held: true, because: 'first-publication' });
    expect(await libraryIds()).not.toContain(id);
    expect((await reader.fetch(`/api/library/${id}`)).status).toBe(404);
    expect((await reader.fetch(`/api/worlds/${id}`)).status).toBe(404);

    // Only administrators see the queue and decide.
    expect((await author.fetch('/api/admin/reviews')).status).toBe(403);
    const queued = (await pending()).find((r) => r.worldId === id)!;
    expect(queued).toMatchObject({ kind: 'publication', state: 'pending', revision: 1 });
    expect((await author.fetch(`/api/admin/reviews/${queued.id}/approve`, { method: 'POST', json: {} })).status).toBe(403);

    const own = (await (await author.fetch(`/api/worlds/${id}/review`)).json()) as { pending: boolean; review: Review };
    expect(own.pending).toBe(true);

    expect((await admin.fetch(`/api/admin/reviews/${queued.id}/approve`, { method: 'POST', json: {} })).status).toBe(200);
    expect(await libraryIds()).toContain(id);
    const live = (await (await reader.fetch(`/api/library/${id}`)).json()) as { world: unknown };
    expect(live.world).toEqual(world);
    // A decided review cannot be decided again.
    const again = await admin.fetch(`/api/admin/reviews/${queued.id}/reject`, { method: 'POST', json: { reason: 'late' } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('REVIEW_NOT_PENDING');

    // The account has been published once: its next publication is not held.
    const { id: second } = await createWorld(author, { ...world, name: 'Second work' });
    const next = (await (await author.fetch(`/api/worlds/${second}/publish`, { method: 'POST' })).json()) as { status: string };
    expect(next.status).toBe('published');
    expect(await libraryIds()).toContain(second);

    const events = (await (await author.fetch(`/api/worlds/${id}/review`)).json()) as { events: { action: string; actorId: string; at: string }[] };
    expect(events.events.map((e) => e.action)).toEqual(['held', 'approved']);
    expect(events.events[0]!.actorId).toBe(authorId);
    expect(events.events[1]!.actorId).not.toBe(authorId);
    expect(Date.parse(events.events[1]!.at)).toBeGreaterThan(0);
  });

  it('a rejection returns the work with a reason the author sees; bad input is 400 and changes nothing', async () => {
    const { browser: author } = await signup('Rejected Author');
    const { id } = await createWorld(author, sample('ashen-depths'));
    await author.fetch(`/api/worlds/${id}/publish`, { method: 'POST' });
    const review = (await pending()).find((r) => r.worldId === id)!;

    const noReason = await admin.fetch(`/api/admin/reviews/${review.id}/reject`, { method: 'POST', json: { reason: '  ' } });
    expect(noReason.status).toBe(400);
    expect(((await noReason.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    expect((await pending()).map((r) => r.id)).toContain(review.id);
    expect((await admin.fetch('/api/admin/reviews/rev_nope/reject', { method: 'POST', json: { reason: 'x' } })).status).toBe(404);

    const reason = 'The opening entry contains copyrighted lyrics; please remove them.';
    expect((await admin.fetch(`/api/admin/reviews/${review.id}/reject`, { method: 'POST', json: { reason } })).status).toBe(200);
    const seen = (await (await author.fetch(`/api/worlds/${id}/review`)).json()) as { pending: boolean; review: Review; events: { action: string; reason: string }[] };
    expect(seen.pending).toBe(false);
    expect(seen.review).toMatchObject({ state: 'rejected', reason });
    expect(seen.events.at(-1)).toMatchObject({ action: 'rejected', reason });
    const mine = (await (await author.fetch(`/api/worlds/${id}`)).json()) as { status: string };
    expect(mine.status).toBe('saved');
    expect(await libraryIds()).not.toContain(id);
    // Another account cannot read the author's review.
    expect((await reader.fetch(`/api/worlds/${id}/review`)).status).toBe(401);
  });

  it('a held edit of a published work leaves the published version serving until approved', async () => {
    const { browser: author, id: authorId } = await signup('Flagged Author');
    const world = sample('changan-nights');
    const { id } = await createWorld(author, world);
    await author.fetch(`/api/worlds/${id}/publish`, { method: 'POST' });
    await admin.fetch(`/api/admin/reviews/${(await pending()).find((r) => r.worldId === id)!.id}/approve`, { method: 'POST', json: {} });
    expect(await libraryIds()).toContain(id);

    // An administrator flags the account: its edits are now held too.
    expect((await admin.fetch(`/api/admin/accounts/${authorId}/review-flag`, { method: 'PUT', json: { hold: true, reason: 'spam reports' } })).status).toBe(200);
    const edited = { ...world, description: 'An edit waiting for review' };
    const saved = await author.fetch(`/api/worlds/${id}`, { method: 'PUT', json: { world: edited, revision: 1 } });
    expect(saved.status).toBe(200);
    expect(((await saved.json()) as { status: string; revision: number; liveRevision: number })).toMatchObject({ status: 'published', revision: 2, liveRevision: 1 });

    // Readers still get revision 1, through the library and the world route; the author sees the edit.
    const served = (await (await reader.fetch(`/api/library/${id}`)).json()) as { description: string; world: { description: string } };
    expect(served.world.description).toBe(world.description);
    expect(served.description).toBe(world.description);
    expect(((await (await reader.fetch(`/api/worlds/${id}`)).json()) as { world: { description: string } }).world.description).toBe(world.description);
    expect(((await (await author.fetch(`/api/worlds/${id}`)).json()) as { world: { description: string } }).world.description).toBe(edited.description);

    const held = (await pending()).find((r) => r.worldId === id)!;
    expect(held).toMatchObject({ kind: 'edit', revision: 2 });
    const detail = (await (await admin.fetch(`/api/admin/reviews/${held.id}`)).json()) as { world: { description: string } };
    expect(detail.world.description).toBe(edited.description);
    await admin.fetch(`/api/admin/reviews/${held.id}/approve`, { method: 'POST', json: { reason: 'fine' } });
    const after = (await (await reader.fetch(`/api/library/${id}`)).json()) as { world: { description: string } };
    expect(after.world.description).toBe(edited.description);
  });

  it('the rule is a setting administrators change; holding all publications and unpublishing withdraws the review', async () => {
    expect((await reader.fetch('/api/admin/review-rule')).status).toBe(401);
    const initial = (await (await admin.fetch('/api/admin/review-rule')).json()) as { rule: { holdFirstPublication: boolean; holdAllPublications: boolean } };
    expect(initial.rule).toEqual({ holdFirstPublication: true, holdAllPublications: false });
    expect((await admin.fetch('/api/admin/review-rule', { method: 'PUT', json: { holdFirstPublication: 'yes' } })).status).toBe(400);

    // Off: a new account's first publication goes straight to the library.
    await admin.fetch('/api/admin/review-rule', { method: 'PUT', json: { holdFirstPublication: false, holdAllPublications: false } });
    const { browser: a } = await signup('Trusted');
    const { id: direct } = await createWorld(a, sample('willow-street'));
    expect(((await (await a.fetch(`/api/worlds/${direct}/publish`, { method: 'POST' })).json()) as { status: string }).status).toBe('published');

    await admin.fetch('/api/admin/review-rule', { method: 'PUT', json: { holdFirstPublication: true, holdAllPublications: true } });
    const { id: heldId } = await createWorld(a, { ...sample('willow-street'), name: 'Held by the all rule' });
    expect(((await (await a.fetch(`/api/worlds/${heldId}/publish`, { method: 'POST' })).json()) as { status: string }).status).toBe('held');
    expect((await a.fetch(`/api/worlds/${heldId}/unpublish`, { method: 'POST' })).status).toBe(200);
    expect((await pending()).map((r) => r.worldId)).not.toContain(heldId);
    const view = (await (await a.fetch(`/api/worlds/${heldId}/review`)).json()) as { review: Review; events: { action: string }[] };
    expect(view.review.state).toBe('withdrawn');
    expect(view.events.map((e) => e.action)).toEqual(['held', 'withdrawn']);
    await admin.fetch('/api/admin/review-rule', { method: 'PUT', json: { holdFirstPublication: true, holdAllPublications: false } });
  });
});
