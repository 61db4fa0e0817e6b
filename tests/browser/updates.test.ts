import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { signUp as signUpAccount } from '../support/sign-up.ts';

const sample = JSON.parse(readFileSync(new URL('../../packages/world/samples/willow-street.json', import.meta.url), 'utf8'));

describe('update records in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let authorCtx: BrowserContext;
  let readerCtx: BrowserContext;
  let worldId: string;

  async function signUp(ctx: BrowserContext, name: string): Promise<void> {
    const res = await signUpAccount(server, ctx, { email: `${name}-${Date.now()}@example.com`, password: 'a strong password', displayName: name });
    expect(res.status).toBe(201);
  }

  async function openOverview(ctx: BrowserContext): Promise<Page> {
    const page = await ctx.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/worlds/${worldId}`);
    await page.locator('section.updates[data-live="ready"]').waitFor();
    return page;
  }

  useBrowserPlatform({}, async (p) => {
    ({ server, browser } = p);
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false, hold_all_publications = false');
    authorCtx = await browser.newContext({ locale: 'en-US' });
    readerCtx = await browser.newContext({ locale: 'en-US' });
    await signUp(authorCtx, 'Author');
    await signUp(readerCtx, 'Reader');
    const created = await authorCtx.request.post(`${server.url}/api/worlds`, { data: { world: sample } });
    worldId = ((await created.json()) as { id: string }).id;
    expect((await authorCtx.request.post(`${server.url}/api/worlds/${worldId}/publish`)).status()).toBe(200);
  });

  it('the author adds a record with notification; a second open overview and a reader see it live; the reader has no edit control', async () => {
    const reader = await openOverview(readerCtx);
    await reader.getByRole('button', { name: 'Favorite' }).click();
    await expect.poll(() => reader.getByTestId('favorite-count').textContent()).toBe('1 favorite(s)');

    const first = await openOverview(authorCtx);
    const second = await openOverview(authorCtx);
    await second.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });

    const form = first.getByRole('form', { name: 'Add an update record' });
    await form.getByLabel('Title').fill('Chapter 2 is out');
    await form.getByLabel('Details').fill('The ferry district opens.');
    await form.getByLabel('Major update').check();
    await form.getByLabel('Notify players who favorited this world').check();
    const [sent] = await Promise.all([
      first.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith(`/api/worlds/${worldId}/updates`)),
      form.getByRole('button', { name: 'Add record' }).click(),
    ]);
    // The overview always sends an explicit choice (omitting it would mean the older notify dialog).
    expect(sent.postDataJSON()).toMatchObject({ title: 'Chapter 2 is out', isMajor: true, notifyPlayers: true });
    await expect.poll(() => form.getByRole('status').textContent()).toBe('Record added; 1 player(s) notified.');

    // The other open overview and the reader's page receive it without a reload.
    for (const page of [second, reader]) {
      await expect.poll(() => page.getByTestId('update-record').first().textContent()).toContain('Chapter 2 is out');
    }
    expect(await second.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // The reader sees the history read-only.
    expect(await reader.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    expect(await reader.getByRole('form', { name: 'Add an update record' }).count()).toBe(0);

    // The reader's inbox has the notification as sent.
    await reader.goto(`${server.url}/app/inbox`);
    await expect.poll(() => reader.getByTestId('inbox-item').first().textContent()).toContain('Chapter 2 is out');
    await Promise.all([first.close(), second.close(), reader.close()]);
  }, 90_000);

  it('the author edits a record: a failed save keeps the draft for a retry; cancel discards it', async () => {
    const page = await openOverview(authorCtx);
    const record = page.getByTestId('update-record').filter({ hasText: 'Chapter 2 is out' });
    await record.getByRole('button', { name: 'Edit' }).click();
    let dialog = page.getByRole('dialog', { name: 'Edit update record' });
    await dialog.getByLabel('Title').fill('Chapter 2 is out (ferries fixed)');
    await dialog.getByLabel('Details').fill('The ferry district opens; ferries run on time.');

    // Force the first save to fail.
    let failures = 0;
    await page.route('**/api/worlds/*/updates/*', async (route) => {
      if (route.request().method() === 'PATCH' && failures === 0) {
        failures++;
        await route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'BUSY', message: 'Try again.' } }) });
      } else {
        await route.continue();
      }
    });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('Saving failed. Your text is kept');
    expect(await dialog.getByLabel('Title').inputValue()).toBe('Chapter 2 is out (ferries fixed)');
    expect(await dialog.getByLabel('Details').inputValue()).toBe('The ferry district opens; ferries run on time.');
    const stored = async () =>
      (await server.ctx.db.primary.query<{ title: string; is_major: boolean }>('select title, is_major from world_updates where world_id = $1', [worldId])).rows;
    expect((await stored())[0]!.title).toBe('Chapter 2 is out');

    // Retry succeeds with the kept draft.
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(failures).toBe(1);
    await expect.poll(async () => (await stored())[0]).toEqual({ title: 'Chapter 2 is out (ferries fixed)', is_major: true });
    await expect.poll(() => page.getByTestId('update-record').first().textContent()).toContain('Chapter 2 is out (ferries fixed)');

    // Cancel discards a draft.
    await page.getByTestId('update-record').first().getByRole('button', { name: 'Edit' }).click();
    dialog = page.getByRole('dialog', { name: 'Edit update record' });
    await dialog.getByLabel('Title').fill('Discard me');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('update-record').first().getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByRole('dialog', { name: 'Edit update record' }).getByLabel('Title').inputValue()).toBe('Chapter 2 is out (ferries fixed)');
    expect((await stored())[0]!.title).toBe('Chapter 2 is out (ferries fixed)');

    // Read-only inspection offers no editing, even to the author.
    await page.goto(`${server.url}/worlds/${worldId}?inspect=1`);
    await page.getByTestId('update-record').first().waitFor();
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    await page.close();
  }, 90_000);

  it('the studio overview hosts the same history with the author controls', async () => {
    const page = await authorCtx.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/studio/${worldId}`);
    const history = page.locator('#update-history section.updates[data-live="ready"]');
    await history.waitFor();
    await expect.poll(() => history.getByTestId('update-record').first().textContent()).toContain('Chapter 2 is out (ferries fixed)');
    expect(await history.getByRole('button', { name: 'Edit' }).count()).toBeGreaterThan(0);
    expect(await history.getByRole('form', { name: 'Add an update record' }).count()).toBe(1);

    // Adding a record from the overview sends an explicit "no" by default and only the record:
    // no save of the editor's work, no publication request.
    const writes: string[] = [];
    page.on('request', (r) => {
      if (r.method() !== 'GET') writes.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    const form = history.getByRole('form', { name: 'Add an update record' });
    await form.getByLabel('Title').fill('Studio note');
    const [sent] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith(`/api/worlds/${worldId}/updates`)),
      form.getByRole('button', { name: 'Add record' }).click(),
    ]);
    expect(sent.postDataJSON()).toEqual({ title: 'Studio note', content: '', isMajor: false, notifyPlayers: false });
    await expect.poll(() => form.getByRole('status').textContent()).toContain('Record added');
    expect(writes).toEqual([`POST /api/worlds/${worldId}/updates`]);
    await page.close();
  }, 60_000);

  it('seed 001: on an unpublished work the overview sends an explicit notifyPlayers: false, on the details page and in the studio overview; published meanwhile, it notifies no one and offers the checkbox next', async () => {
    // A work a reader has favorited, then unpublished: its pages say notifications are not available yet.
    const created = await authorCtx.request.post(`${server.url}/api/worlds`, { data: { world: sample } });
    const id = ((await created.json()) as { id: string }).id;
    expect((await authorCtx.request.post(`${server.url}/api/worlds/${id}/publish`)).status()).toBe(200);
    expect((await readerCtx.request.put(`${server.url}/api/worlds/${id}/favorite`)).status()).toBe(200);
    expect((await authorCtx.request.post(`${server.url}/api/worlds/${id}/unpublish`)).status()).toBe(200);
    const notifications = async (title: string) =>
      (
        await server.ctx.db.primary.query<{ n: number }>(
          'select count(*)::int as n from update_notifications n join world_updates u on u.id = n.update_id where u.world_id = $1 and u.title = $2',
          [id, title],
        )
      ).rows[0]!.n;
    const records = async (title: string) =>
      (await server.ctx.db.primary.query('select 1 from world_updates where world_id = $1 and title = $2', [id, title])).rowCount;

    for (const [surface, path] of [
      ['details', `/worlds/${id}`],
      ['studio', `/studio/${id}`],
    ] as const) {
      const page = await authorCtx.newPage();
      page.setDefaultTimeout(30_000);
      await page.goto(`${server.url}${path}`);
      const form = page.getByRole('form', { name: 'Add an update record' });
      await form.getByText('Notifications become available once the world is published.').waitFor();
      expect(await form.getByLabel('Notify players who favorited this world').count()).toBe(0);

      // Unpublished: the choice is sent, and it is "no".
      const unpublished = `Draft note from the ${surface} page`;
      await form.getByLabel('Title').fill(unpublished);
      const [first] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/api/worlds/${id}/updates`)),
        form.getByRole('button', { name: 'Add record' }).click(),
      ]);
      expect(first.request().postDataJSON()).toEqual({ title: unpublished, content: '', isMajor: false, notifyPlayers: false });
      expect(first.status()).toBe(201);
      await expect.poll(() => form.getByRole('status').textContent()).toBe('Record added.');
      expect(await records(unpublished)).toBe(1);
      expect(await notifications(unpublished)).toBe(0);

      // Published while the page (its live stream cut) still shows it could not notify: the record
      // is added as the form said, without notification (no dialog); the checkbox appears next.
      await page.route('**/updates/events', (route) => route.abort());
      expect((await authorCtx.request.post(`${server.url}/api/worlds/${id}/publish`)).status()).toBe(200);
      const title = `Note from the ${surface} page`;
      await form.getByLabel('Title').fill(title);
      await form.getByLabel('Major update').check();
      const [second] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/api/worlds/${id}/updates`)),
        form.getByRole('button', { name: 'Add record' }).click(),
      ]);
      expect(second.request().postDataJSON()).toEqual({ title, content: '', isMajor: true, notifyPlayers: false });
      expect(second.status()).toBe(201);
      expect(await page.getByRole('dialog').count()).toBe(0);
      expect(await records(title)).toBe(1);
      expect(await notifications(title)).toBe(0);
      await form.getByLabel('Notify players who favorited this world').waitFor();
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await page.screenshot({ path: `/tmp/updates-explicit-choice-${surface}-${width}.png`, fullPage: true });
      }
      expect((await authorCtx.request.post(`${server.url}/api/worlds/${id}/unpublish`)).status()).toBe(200);
      await page.close();
    }
  }, 120_000);
});
