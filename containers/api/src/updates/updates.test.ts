import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observer } from '../../../../tests/support/postgres.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import type { UpdateRecord } from '@yumina/updates';
import { signUp as signUpAccount } from '../../../../tests/support/sign-up.ts';

const sample = JSON.parse(readFileSync(new URL('../../../../packages/world/samples/willow-street.json', import.meta.url), 'utf8'));

type Record_ = UpdateRecord;
interface History {
  updates: Record_[];
  canEdit: boolean;
  canCreate: boolean;
  canNotify: boolean;
}

/** Reads server-sent events from a streaming response. */
function eventReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queue: { event: string; data: unknown }[] = [];
  async function next(timeoutMs = 5000): Promise<{ event: string; data: unknown }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const queued = queue.shift();
      if (queued) return queued;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event in time');
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no event in time')), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) throw new Error('stream ended');
      buffer += decoder.decode(chunk.value, { stream: true });
      let cut = buffer.indexOf('\n\n');
      while (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) queue.push({ event, data: JSON.parse(data) });
        cut = buffer.indexOf('\n\n');
      }
    }
  }
  return { next, close: () => reader.cancel().catch(() => {}) };
}

describe('update records of a work', () => {
  let server: TestServer;
  let author: Browser;
  let other: Browser;
  let admin: Browser;
  let guest: Browser;
  const ids: Record<'author' | 'other' | 'admin', string> = { author: '', other: '', admin: '' };
  const q = <R extends Record<string, unknown>>(sql: string, values?: unknown[]) => server.ctx.db.primary.query<R>(sql, values);

  async function signUp(b: Browser, name: string): Promise<string> {
    const res = await signUpAccount(server, b, { email: `${name}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`, password: 'long enough pw', displayName: name });
    expect(res.status).toBe(201);
    return (res as { account: { id: string } }).account.id;
  }

  async function newWorld(publish: boolean, owner = author): Promise<string> {
    const res = await owner.fetch('/api/worlds', { method: 'POST', json: { world: sample } });
    const id = ((await res.json()) as { id: string }).id;
    if (publish) expect((await owner.fetch(`/api/worlds/${id}/publish`, { method: 'POST' })).status).toBe(200);
    return id;
  }

  async function create(b: Browser, worldId: string, json: unknown) {
    const res = await b.fetch(`/api/worlds/${worldId}/updates`, { method: 'POST', json });
    return { status: res.status, body: (await res.json()) as { update: Record_; notified: number; error?: { code: string } } };
  }

  async function history(b: Browser, worldId: string) {
    const res = await b.fetch(`/api/worlds/${worldId}/updates`);
    return { status: res.status, body: (await res.json()) as History };
  }

  /** Everything the update routes could write, to compare before and after. */
  async function everything() {
    const [updates, worlds, notes] = await Promise.all([
      q('select * from world_updates order by id'),
      q('select * from worlds order by id'),
      q('select * from update_notifications order by id'),
    ]);
    return { updates: updates.rows, worlds: worlds.rows, notes: notes.rows };
  }

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    other = new Browser(server.url);
    admin = new Browser(server.url);
    guest = new Browser(server.url);
    ids.author = await signUp(author, 'Author');
    ids.other = await signUp(other, 'Other');
    ids.admin = await signUp(admin, 'Admin');
    await q('update accounts set is_admin = true where id = $1', [ids.admin]);
    // Publications go live at once here; the pending-review test turns holding on where it needs it.
    await q('update review_rule set hold_first_publication = false, hold_all_publications = false');
  });
  afterAll(() => server?.stop());

  it('permission matrix: only the author edits and creates; administrators and other players read; guests read published works', async () => {
    const world = await newWorld(true);
    const first = await create(author, world, { title: 'First notes', content: 'Hello', isMajor: true, notifyPlayers: false });
    expect(first.status).toBe(201);
    expect(first.body.update).toMatchObject({ worldId: world, title: 'First notes', content: 'Hello', isMajor: true });
    const recordId = first.body.update.id;

    const authorView = await history(author, world);
    expect(authorView.status).toBe(200);
    expect(authorView.body).toMatchObject({ canEdit: true, canCreate: true, canNotify: true });
    expect(authorView.body.updates.map((u) => u.id)).toEqual([recordId]);
    for (const b of [other, admin, guest]) {
      const view = await history(b, world);
      expect(view.status).toBe(200);
      expect(view.body).toMatchObject({ canEdit: false, canCreate: false, canNotify: false });
      expect(view.body.updates.map((u) => u.id)).toEqual([recordId]);
    }

    const before = await everything();
    for (const [b, status] of [
      [other, 403],
      [admin, 403],
      [guest, 401],
    ] as const) {
      const post = await create(b, world, { title: 'Not mine', content: '', isMajor: false, notifyPlayers: false });
      expect(post.status).toBe(status);
      expect(post.body.error?.code).toBe(status === 401 ? 'UNAUTHENTICATED' : 'NOT_AUTHOR');
      const patch = await b.fetch(`/api/worlds/${world}/updates/${recordId}`, { method: 'PATCH', json: { title: 'Hijacked', content: 'x' } });
      expect(patch.status).toBe(status);
    }
    expect(await everything()).toEqual(before);

    const patched = await author.fetch(`/api/worlds/${world}/updates/${recordId}`, { method: 'PATCH', json: { title: 'First notes, corrected', content: 'Hello again' } });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { update: Record_ }).update).toMatchObject({ id: recordId, title: 'First notes, corrected', content: 'Hello again' });

    // An unpublished work is invisible to everyone but its author.
    const hidden = await newWorld(false);
    const hiddenRecord = await create(author, hidden, { title: 'Draft note', content: '', isMajor: false, notifyPlayers: false });
    expect(hiddenRecord.status).toBe(201);
    expect((await history(author, hidden)).body).toMatchObject({ canEdit: true, canCreate: true, canNotify: false });
    for (const b of [other, admin, guest]) {
      expect((await history(b, hidden)).status).toBe(404);
      expect((await create(b, hidden, { title: 'x', content: '', isMajor: false, notifyPlayers: false })).status).toBe(b === guest ? 401 : 404);
      const patch = await b.fetch(`/api/worlds/${hidden}/updates/${hiddenRecord.body.update.id}`, { method: 'PATCH', json: { title: 'x' } });
      expect(patch.status).toBe(b === guest ? 401 : 404);
    }
    expect((await history(author, 'wld_missing')).status).toBe(404);
  });

  it('PATCH keeps the timestamp and the major flag, writes nothing else and leaves notification snapshots alone', async () => {
    const world = await newWorld(true);
    expect((await other.fetch(`/api/worlds/${world}/favorite`, { method: 'PUT' })).status).toBe(200);
    const { body } = await create(author, world, { title: 'Patch 1.1', content: 'Bridges fixed', isMajor: true, notifyPlayers: true });
    expect(body.notified).toBe(1);
    await new Promise((r) => setTimeout(r, 20));
    const before = await everything();
    const row = before.updates.find((u) => u.id === body.update.id)!;

    const res = await author.fetch(`/api/worlds/${world}/updates/${body.update.id}`, { method: 'PATCH', json: { title: 'Patch 1.1 (typo)', content: 'Bridges and ferries fixed' } });
    expect(res.status).toBe(200);
    const { update } = (await res.json()) as { update: Record_ };
    expect(update).toMatchObject({ timestamp: body.update.timestamp, isMajor: true, worldId: world });

    const after = await everything();
    expect(after.worlds).toEqual(before.worlds); // no bump: updated_at and revision unchanged
    expect(after.notes).toEqual(before.notes); // the snapshot as sent, no new notification
    expect(after.updates).toHaveLength(before.updates.length); // no record created
    expect(after.updates.find((u) => u.id === body.update.id)).toEqual({ ...row, title: 'Patch 1.1 (typo)', content: 'Bridges and ferries fixed' });
    expect(after.updates.filter((u) => u.id !== body.update.id)).toEqual(before.updates.filter((u) => u.id !== body.update.id));

    const inbox = (await (await other.fetch('/api/inbox')).json()) as { items: { updateId: string; snapshot: { title: string } }[] };
    expect(inbox.items.find((i) => i.updateId === body.update.id)?.snapshot.title).toBe('Patch 1.1');

    // Content is optional in an edit: omitted, it stays.
    const titleOnly = await author.fetch(`/api/worlds/${world}/updates/${body.update.id}`, { method: 'PATCH', json: { title: 'Patch 1.1' } });
    expect(((await titleOnly.json()) as { update: Record_ }).update.content).toBe('Bridges and ferries fixed');
  });

  it('a PATCH naming a record of another work is refused and changes nothing', async () => {
    const a = await newWorld(true);
    const b = await newWorld(true);
    const foreign = await newWorld(true, other);
    const recordOfB = (await create(author, b, { title: 'B news', content: '', isMajor: false, notifyPlayers: false })).body.update.id;
    const recordOfForeign = (await create(other, foreign, { title: 'Foreign news', content: '', isMajor: false, notifyPlayers: false })).body.update.id;
    const before = await everything();
    const sameAuthor = await author.fetch(`/api/worlds/${a}/updates/${recordOfB}`, { method: 'PATCH', json: { title: 'Moved?', content: '' } });
    expect(sameAuthor.status).toBe(404);
    expect(((await sameAuthor.json()) as { error: { code: string } }).error.code).toBe('UPDATE_NOT_FOUND');
    const otherAuthor = await author.fetch(`/api/worlds/${a}/updates/${recordOfForeign}`, { method: 'PATCH', json: { title: 'Taken?', content: '' } });
    expect(otherAuthor.status).toBe(404);
    expect((await author.fetch(`/api/worlds/${a}/updates/upd_nope`, { method: 'PATCH', json: { title: 'x' } })).status).toBe(404);
    expect(await everything()).toEqual(before);
  });

  it('notifications: only on a published work, only when asked, to exactly the players who favorited it', async () => {
    const world = await newWorld(true);
    for (const b of [other, admin]) expect((await b.fetch(`/api/worlds/${world}/favorite`, { method: 'PUT' })).status).toBe(200);
    expect(((await (await admin.fetch(`/api/worlds/${world}/favorite`)).json()) as { favorited: boolean; count: number })).toEqual({ favorited: true, count: 2 });
    // A favorite of some other world must not be reached.
    const elsewhere = await newWorld(true);
    const outsider = new Browser(server.url);
    const outsiderId = await signUp(outsider, 'Outsider');
    await outsider.fetch(`/api/worlds/${elsewhere}/favorite`, { method: 'PUT' });

    const count = async () => (await q<{ n: number }>('select count(*)::int as n from update_notifications')).rows[0]!.n;
    const start = await count();
    // notifyPlayers omitted on a work that can notify: the older behaviour, a notify dialog in the
    // client; the server writes nothing until the choice comes.
    const before = await everything();
    const ask = await create(author, world, { title: 'Quiet', content: '', isMajor: false });
    expect(ask.status).toBe(409);
    expect(ask.body.error?.code).toBe('NOTIFY_CHOICE_REQUIRED');
    expect(await everything()).toEqual(before);
    expect((await create(author, world, { title: 'Quiet', content: '', isMajor: false, notifyPlayers: false })).body.notified).toBe(0);
    expect(await count()).toBe(start);

    const loud = await create(author, world, { title: 'Chapter 2 is out', content: 'New district', isMajor: true, notifyPlayers: true });
    expect(loud.status).toBe(201);
    expect(loud.body.notified).toBe(2);
    const sent = await q<{ account_id: string; snapshot: Record<string, unknown> }>('select account_id, snapshot from update_notifications where update_id = $1', [
      loud.body.update.id,
    ]);
    expect(sent.rows.map((r) => r.account_id).sort()).toEqual([ids.other, ids.admin].sort());
    expect(sent.rows.map((r) => r.account_id)).not.toContain(outsiderId);
    expect(sent.rows[0]!.snapshot).toMatchObject({ title: 'Chapter 2 is out', content: 'New district', isMajor: true, timestamp: loud.body.update.timestamp });

    const inbox = (await (await other.fetch('/api/inbox')).json()) as { items: { id: string; worldId: string }[]; unread: number };
    expect(inbox.items.filter((i) => i.worldId === world)).toHaveLength(1);
    expect(inbox.unread).toBeGreaterThanOrEqual(1);
    const read = await other.fetch('/api/inbox/read', { method: 'POST', json: { id: inbox.items[0]!.id } });
    expect(((await read.json()) as { changed: number }).changed).toBe(1);
    expect((await guest.fetch('/api/inbox')).status).toBe(401);

    // Unpublished (after having been published, with favoriters): never notifies, canNotify false.
    await author.fetch(`/api/worlds/${world}/unpublish`, { method: 'POST' });
    expect((await history(author, world)).body).toMatchObject({ canCreate: true, canNotify: false });
    const before2 = await count();
    const quiet = await create(author, world, { title: 'While unpublished', content: '', isMajor: true, notifyPlayers: true });
    expect(quiet.status).toBe(201);
    expect(quiet.body.notified).toBe(0);
    expect(await count()).toBe(before2);
    const savedOnly = await newWorld(false);
    expect((await create(author, savedOnly, { title: 'Never published', content: '', isMajor: false, notifyPlayers: true })).body.notified).toBe(0);
    // Where notifying is not possible yet, an omitted choice needs no dialog: added, nobody notified.
    const omitted = await create(author, savedOnly, { title: 'No choice to make', content: '', isMajor: false });
    expect(omitted.status).toBe(201);
    expect(omitted.body.notified).toBe(0);
    expect(await count()).toBe(before2);
  });

  it('contract: creating a record neither publishes the work nor saves editor changes', async () => {
    for (const publish of [false, true]) {
      const world = await newWorld(publish);
      const row = async () =>
        (await q('select * from worlds where id = $1', [world])).rows[0];
      const counts = async () =>
        (
          await q<{ reviews: number; events: number; records: number }>(
            `select (select count(*)::int from world_reviews where world_id = $1) as reviews,
                    (select count(*)::int from world_publication_events where world_id = $1) as events,
                    (select count(*)::int from world_updates where world_id = $1) as records`,
            [world],
          )
        ).rows[0]!;
      const worldBefore = await row();
      const countsBefore = await counts();
      // The editor's unsaved changes can not ride along: the body is strict and such a request changes nothing.
      const withEdits = await author.fetch(`/api/worlds/${world}/updates`, {
        method: 'POST',
        json: { title: 'Notes', content: '', isMajor: false, notifyPlayers: false, world: { ...sample, name: 'Edited in the editor' } },
      });
      expect(withEdits.status).toBe(400);
      expect(await row()).toEqual(worldBefore);
      const created = await create(author, world, { title: 'Notes', content: 'Only notes', isMajor: true, notifyPlayers: false });
      expect(created.status).toBe(201);
      // Exactly one record more; the work itself (definition, name, status, timestamps) untouched, no publication.
      expect(await row()).toEqual(worldBefore);
      expect(await counts()).toEqual({ ...countsBefore, records: countsBefore.records + 1 });
      expect((await history(author, world)).body).toMatchObject({ canCreate: true, canNotify: publish });
    }
  });

  it('a pending review must be resolved before a record is added', async () => {
    const world = await newWorld(true);
    const record = (await create(author, world, { title: 'Before review', content: '', isMajor: false, notifyPlayers: false })).body.update;
    const stillOpen = await newWorld(true);
    await q('update review_rule set hold_all_publications = true');
    try {
      // A held edit of a published work: the live version keeps serving, a review is pending.
      const saved = await author.fetch(`/api/worlds/${world}`, { method: 'PUT', json: { world: { ...sample, description: 'Edited' }, revision: 1 } });
      expect(saved.status).toBe(200);
      expect((await q(`select 1 from world_reviews where world_id = $1 and state = 'pending'`, [world])).rowCount).toBe(1);
      // A held first publication: the work itself is held.
      const first = await newWorld(false);
      expect((await author.fetch(`/api/worlds/${first}/publish`, { method: 'POST' })).status).toBe(200);
      expect((await q<{ status: string }>('select status from worlds where id = $1', [first])).rows[0]!.status).toBe('held');

      for (const id of [world, first]) {
        expect((await history(author, id)).body).toMatchObject({ canEdit: true, canCreate: false, canNotify: false });
        const before = await everything();
        const refused = await create(author, id, { title: 'During review', content: '', isMajor: false, notifyPlayers: true });
        expect(refused.status).toBe(409);
        expect(refused.body.error?.code).toBe('REVIEW_PENDING');
        expect(await everything()).toEqual(before);
      }
      // Correcting an existing record is still allowed.
      const fix = await author.fetch(`/api/worlds/${world}/updates/${record.id}`, { method: 'PATCH', json: { title: 'Before review (fixed)', content: '' } });
      expect(fix.status).toBe(200);
      // A work without a pending review is not affected.
      expect((await create(author, stillOpen, { title: 'Unaffected', content: '', isMajor: false, notifyPlayers: false })).status).toBe(201);
    } finally {
      await q('update review_rule set hold_all_publications = false');
    }
  });

  it('bad bodies answer 400 in the shared error shape and change nothing', async () => {
    const world = await newWorld(true);
    const record = (await create(author, world, { title: 'Solid', content: 'text', isMajor: false, notifyPlayers: false })).body.update;
    const before = await everything();
    const badPosts: unknown[] = [
      { content: 'no title', isMajor: false, notifyPlayers: false },
      { title: '   ', content: '', isMajor: false },
      { title: 42, content: '', isMajor: false },
      { title: 'x', content: 7, isMajor: false },
      { title: 'x', content: '', isMajor: 'yes' },
      { title: 'x', content: '', isMajor: false, notifyPlayers: 'true' },
      { title: 'x', content: '', isMajor: false, timestamp: '2020-01-01T00:00:00Z' },
      { title: 'x'.repeat(201), isMajor: false },
      { title: 'isMajor omitted', content: '', notifyPlayers: false },
      { title: 'isMajor null', content: '', isMajor: null, notifyPlayers: false },
      [],
      'title',
    ];
    for (const json of badPosts) {
      const res = await author.fetch(`/api/worlds/${world}/updates`, { method: 'POST', json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/INVALID_REQUEST|INVALID_JSON/);
    }
    // isMajor is the author's decision (seed 001 §4), never defaulted: its absence is named.
    const noMajor = await author.fetch(`/api/worlds/${world}/updates`, { method: 'POST', json: { title: 'x', content: '', notifyPlayers: false } });
    expect(((await noMajor.json()) as { error: { message: string } }).error.message).toBe('Invalid request body: isMajor: isMajor is required (true or false)');
    const badPatches: unknown[] = [
      { content: 'no title' },
      { title: 5, content: '' },
      { title: 'x', content: null },
      { title: 'x', content: '', isMajor: true },
      { title: 'x', content: '', timestamp: '2020-01-01T00:00:00Z' },
      { title: 'x', content: '', worldId: world },
      { title: 'x', notifyPlayers: true },
      {},
    ];
    for (const json of badPatches) {
      const res = await author.fetch(`/api/worlds/${world}/updates/${record.id}`, { method: 'PATCH', json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    }
    const notJson = await author.fetch(`/api/worlds/${world}/updates/${record.id}`, {
      method: 'PATCH',
      body: '{"title":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect(await everything()).toEqual(before);
  });

  it('an authorship change racing a PATCH never lets a non-author edit through', async () => {
    const world = await newWorld(true);
    const record = (await create(author, world, { title: 'Original', content: '', isMajor: false, notifyPlayers: false })).body.update;
    const url = `/api/worlds/${world}/updates/${record.id}`;
    const pg = await observer(server.database.url);
    try {
      const title = async () => (await q<{ title: string }>('select title from world_updates where id = $1', [record.id])).rows[0]!.title;
      const waitForLockWait = async () => {
        for (let i = 0; i < 200; i++) {
          // (Through the server's pool: inside the observer's open transaction the activity view is a frozen snapshot.)
          const { rows } = await q(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%update world_updates%'`);
          if (rows.length) return;
          await new Promise((r) => setTimeout(r, 10));
        }
        throw new Error('the PATCH never waited for the authorship change');
      };

      // 1. The transfer to another player is in flight when the author's PATCH arrives: the PATCH
      //    waits for it and, once it commits, is refused.
      await pg.query('begin');
      await pg.query('update worlds set owner_id = $2 where id = $1', [world, ids.other]);
      const lateAuthor = author.fetch(url, { method: 'PATCH', json: { title: 'Edited by the former author', content: '' } });
      await waitForLockWait();
      await pg.query('commit');
      expect((await lateAuthor).status).toBe(403);
      expect(await title()).toBe('Original');

      // 2. The transfer back is in flight: the future author is not the author yet, so refused at once...
      await pg.query('begin');
      await pg.query('update worlds set owner_id = $2 where id = $1', [world, ids.author]);
      const early = await author.fetch(url, { method: 'PATCH', json: { title: 'Edited too early', content: '' } });
      expect(early.status).toBe(403);
      // ...while the departing owner's PATCH waits and is refused once the transfer commits.
      const departing = other.fetch(url, { method: 'PATCH', json: { title: 'Edited by the departing owner', content: '' } });
      await waitForLockWait();
      await pg.query('commit');
      expect((await departing).status).toBe(403);
      expect(await title()).toBe('Original');

      // 3. A transfer that rolls back changes nothing: the waiting author's edit goes through.
      await pg.query('begin');
      await pg.query('update worlds set owner_id = $2 where id = $1', [world, ids.other]);
      const kept = author.fetch(url, { method: 'PATCH', json: { title: 'Edited by the author', content: '' } });
      await waitForLockWait();
      await pg.query('rollback');
      expect((await kept).status).toBe(200);
      expect(await title()).toBe('Edited by the author');

      // 4. Free-running races, audited: a trigger (test database only) notes, at the moment of every
      //    write, who owned the work; every edit that went through came from that owner.
      await q(`create table edit_audit (title text, owner_at_write text)`);
      await q(`create function audit_edit() returns trigger language plpgsql as $$
        begin
          insert into edit_audit values (new.title, (select owner_id from worlds where id = new.world_id));
          return new;
        end $$`);
      await q(`create trigger audit_edit before update on world_updates for each row execute function audit_edit()`);
      const accepted: string[] = [];
      for (let round = 0; round < 16; round++) {
        const to = round % 2 === 0 ? ids.other : ids.author;
        const transfer = (async () => {
          await new Promise((r) => setTimeout(r, Math.random() * 8));
          await q('update worlds set owner_id = $2 where id = $1', [world, to]);
        })();
        const edits = (['author', 'other'] as const).map(async (who) => {
            await new Promise((r) => setTimeout(r, Math.random() * 8));
            const res = await (who === 'author' ? author : other).fetch(url, { method: 'PATCH', json: { title: `${round}:${who}`, content: '' } });
            expect([200, 403]).toContain(res.status);
            if (res.status === 200) accepted.push(`${round}:${who}`);
        });
        await Promise.all([transfer, ...edits]);
      }
      const audit = (await q<{ title: string; owner_at_write: string }>('select title, owner_at_write from edit_audit')).rows;
      expect(audit.map((a) => a.title).sort()).toEqual([...accepted].sort());
      expect(accepted.length).toBeGreaterThan(0);
      for (const a of audit) expect(a.owner_at_write, a.title).toBe(a.title.endsWith(':author') ? ids.author : ids.other);
      await q('drop trigger audit_edit on world_updates');
      // The last transfer went to the author; the other player is locked out for good.
      expect((await other.fetch(url, { method: 'PATCH', json: { title: 'After the races', content: '' } })).status).toBe(403);
    } finally {
      await pg.query('rollback').catch(() => {});
      await pg.end();
    }
  });

  it('live overview: a published record reaches an open stream; held records stay out; status changes are announced', async () => {
    const world = await newWorld(true);
    const res = await other.fetch(`/api/worlds/${world}/updates/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = eventReader(res);
    try {
      expect(await events.next()).toEqual({ event: 'ready', data: { status: 'published', canEdit: false, canCreate: false, canNotify: false } });

      // A record held for review is neither in the history nor on the stream.
      await q(`insert into world_updates (id, world_id, author_id, title, status) values ('upd_held_1', $1, $2, 'Held note', 'held')`, [world, ids.author]);
      const live = await create(author, world, { title: 'Live note', content: 'now', isMajor: false, notifyPlayers: false });
      const got = await events.next();
      expect(got.event).toBe('record');
      expect((got.data as { update: Record_ }).update).toMatchObject({ id: live.body.update.id, title: 'Live note', worldId: world });
      expect((await history(other, world)).body.updates.map((u) => u.title)).toEqual(['Live note']);

      // Unpublishing is announced by the route, and the stream ends for a reader.
      await author.fetch(`/api/worlds/${world}/unpublish`, { method: 'POST' });
      expect((await events.next()).event).toBe('gone');
    } finally {
      await events.close();
    }

    // The author's stream reports canCreate/canNotify changes. Every route that changes the work's
    // status announces it on the store (not left to the overview's slow re-check): count them.
    const announced: string[] = [];
    const publish = server.ctx.store.publish.bind(server.ctx.store);
    server.ctx.store.publish = async (channel: string, message: string) => {
      if (channel === `world-updates:${world}`) announced.push((JSON.parse(message) as { type: string }).type);
      return publish(channel, message);
    };
    const mine = eventReader(await author.fetch(`/api/worlds/${world}/updates/events`));
    try {
      expect(await mine.next()).toEqual({ event: 'ready', data: { status: 'unpublished', canEdit: true, canCreate: true, canNotify: false } });
      // Publishing is announced by the route; going live releases the records held meanwhile into
      // the published history, live.
      await author.fetch(`/api/worlds/${world}/publish`, { method: 'POST' });
      // (Each message is read back before it is sent, so the two may arrive in either order.)
      const two = [await mine.next(), await mine.next()].sort((a, b) => a.event.localeCompare(b.event));
      expect(two[0]!.event).toBe('record');
      expect((two[0]!.data as { update: Record_ }).update.id).toBe('upd_held_1');
      expect(two[1]).toEqual({ event: 'status', data: { status: 'published', canEdit: true, canCreate: true, canNotify: true } });
      expect(announced).toEqual(['record', 'status']);

      // Review: an edit held under an administrator's flag, then approved on the administrators' page.
      expect((await admin.fetch(`/api/admin/accounts/${ids.author}/review-flag`, { method: 'PUT', json: { hold: true, reason: 'spot check' } })).status).toBe(200);
      try {
        const revision = (await q<{ revision: number }>('select revision from worlds where id = $1', [world])).rows[0]!.revision;
        const saved = await author.fetch(`/api/worlds/${world}`, { method: 'PUT', json: { world: { ...sample, description: 'Held edit' }, revision } });
        expect(saved.status).toBe(200);
        expect(await mine.next()).toEqual({ event: 'status', data: { status: 'published', canEdit: true, canCreate: false, canNotify: false } });
        const review = (await q<{ id: string }>(`select id from world_reviews where world_id = $1 and state = 'pending'`, [world])).rows[0]!;
        expect((await admin.fetch(`/api/admin/reviews/${review.id}/approve`, { method: 'POST', json: {} })).status).toBe(200);
        expect(await mine.next()).toEqual({ event: 'status', data: { status: 'published', canEdit: true, canCreate: true, canNotify: true } });
        expect(announced).toEqual(['record', 'status', 'status', 'status']); // the held save, then the approval
      } finally {
        await admin.fetch(`/api/admin/accounts/${ids.author}/review-flag`, { method: 'PUT', json: { hold: false, reason: '' } });
      }
    } finally {
      server.ctx.store.publish = publish;
      await mine.close();
    }
    expect((await guest.fetch(`/api/worlds/${await newWorld(false)}/updates/events`)).status).toBe(404);
  });

  it('language variants: the history mixes them and each record keeps its own source work', async () => {
    const original = await newWorld(true);
    const variant = await newWorld(true);
    const hiddenVariant = await newWorld(false);
    await q('insert into world_variants (world_id, original_id) values ($1, $3), ($2, $3)', [variant, hiddenVariant, original]);
    const a = (await create(author, original, { title: 'EN notes', content: '', isMajor: false, notifyPlayers: false })).body.update;
    const b = (await create(author, variant, { title: 'ZH notes', content: '', isMajor: false, notifyPlayers: false })).body.update;
    const c = (await create(author, hiddenVariant, { title: 'Unpublished variant notes', content: '', isMajor: false, notifyPlayers: false })).body.update;
    const forReader = (await history(other, original)).body.updates;
    expect(forReader.map((u) => [u.id, u.worldId])).toEqual([
      [b.id, variant],
      [a.id, original],
    ]);
    const forAuthor = (await history(author, variant)).body.updates;
    expect(forAuthor.map((u) => u.worldId).sort()).toEqual([original, variant, hiddenVariant].sort());
    // The client saves with each record's own source id; through the other variant it is refused.
    expect((await author.fetch(`/api/worlds/${original}/updates/${c.id}`, { method: 'PATCH', json: { title: 'x' } })).status).toBe(404);
    expect((await author.fetch(`/api/worlds/${hiddenVariant}/updates/${c.id}`, { method: 'PATCH', json: { title: 'y' } })).status).toBe(200);
  });
});

describe('live overview streams and shutdown', () => {
  it('an open stream does not hold up a graceful shutdown', async () => {
    const server = await startTestServer();
    try {
      const b = new Browser(server.url);
      await signUpAccount(server, b, { email: `close-${Date.now()}@example.com`, password: 'long enough pw' });
      const created = await b.fetch('/api/worlds', { method: 'POST', json: { world: sample } });
      const id = ((await created.json()) as { id: string }).id;
      const events = eventReader(await b.fetch(`/api/worlds/${id}/updates/events`));
      expect((await events.next()).event).toBe('ready');
      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(3000);
      // told to reconnect (to another replica, after the last event it saw), then the stream ends
      expect((await events.next(1000)).event).toBe('reconnect');
      await expect(events.next(1000)).rejects.toThrow(/stream ended|no event/);
    } finally {
      await server.stop();
    }
  });
});
