import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { signUp } from '../support/sign-up.ts';

interface WorldView {
  id: string;
  revision: number;
  status: string;
  world: {
    name: string;
    description: string;
    editorMode: string;
    entries: { id: string; section: string; keywords: string[]; content: string }[];
    variables: { id: string; type: string; min?: number; max?: number; defaultValue: unknown }[];
    rules: { id: string; trigger: { type: string; variableId?: string; threshold?: number }; actions: { type: string; message?: string }[] }[];
  };
}

/** Polls with the page's patience (vitest's default is one second). */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 100 });
/** Opens a section of the studio's sidebar. */
const section = (page: Page, name: string) => page.getByRole('navigation', { name: 'Studio sections' }).getByRole('button', { name, exact: true }).click();

describe('world studio in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let worldId: string;

  async function signup(ctx: BrowserContext, displayName: string): Promise<string> {
    const res = await signUp(server, ctx, { email: `${displayName.replace(/\W/g, '').toLowerCase()}-${Date.now()}@example.com`, password: 'a strong password', displayName });
    expect(res.status).toBeLessThan(300);
    return ((await (await ctx.request.get(`${server.url}/api/auth/session`)).json()) as { account: { id: string } }).account.id;
  }
  const getWorld = async (id: string) => (await (await context.request.get(`${server.url}/api/worlds/${id}`)).json()) as WorldView;
  const newPage = async (ctx = context): Promise<Page> => {
    const page = await ctx.newPage();
    page.setDefaultTimeout(40_000);
    return page;
  };

  useBrowserPlatform({}, async (p) => {
    ({ server, browser } = p);
    context = await browser.newContext();
    await signup(context, 'Studio Author');
  });

  it('creates a world in simple mode with an entry, a bounded number variable and a rule; saves; reloads; all there', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/studio/new`);
    await poll(() => page.getByTestId('save-first').isVisible()).toBe(true);
    await page.getByLabel('Name', { exact: true }).fill('The Old Well');
    await page.getByLabel('Description', { exact: true }).first().fill('A village with a well that listens.');

    await section(page, 'Entries');
    await page.getByRole('button', { name: 'Add entry' }).click();
    const entry = page.getByRole('group', { name: /^Entry 1/ });
    await entry.getByLabel('Entry id', { exact: true }).fill('old-well');
    await entry.getByLabel('Entry name', { exact: true }).fill('The well');
    await entry.getByLabel('Section', { exact: true }).selectOption('chat-history');
    await entry.getByLabel('Content', { exact: true }).fill('The well answers questions asked at midnight.');
    await entry.getByLabel('Keywords (comma-separated)', { exact: true }).fill('well, bucket');

    await section(page, 'Variables');
    await page.getByRole('button', { name: 'Add variable' }).click();
    const variable = page.getByRole('group', { name: 'Variable 1' });
    await variable.getByLabel('Variable id', { exact: true }).fill('courage');
    await variable.getByLabel('Variable name', { exact: true }).fill('Courage');
    await variable.getByLabel('Default value (JSON)', { exact: true }).fill('5');
    await variable.getByLabel('Minimum', { exact: true }).fill('0');
    await variable.getByLabel('Maximum', { exact: true }).fill('10');

    await section(page, 'Rules');
    await page.getByRole('button', { name: 'Add rule' }).click();
    const rule = page.getByRole('group', { name: 'Rule 1' });
    await rule.getByLabel('Rule id', { exact: true }).fill('brave-moment');
    await rule.getByLabel('Rule name', { exact: true }).fill('Brave moment');
    await rule.getByLabel('Trigger type', { exact: true }).selectOption('variable-crossed');
    await rule.getByLabel('Trigger variable', { exact: true }).fill('courage');
    await rule.getByLabel('Direction', { exact: true }).selectOption('rises-above');
    await rule.getByLabel('Threshold', { exact: true }).fill('8');
    await rule.getByRole('button', { name: 'Add action' }).click();
    await rule.getByRole('group', { name: 'Action 1' }).getByLabel('Message', { exact: true }).fill('You feel brave.');

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/studio\/wld_/);
    worldId = page.url().split('/studio/')[1]!;
    await poll(() => page.getByTestId('world-status').textContent()).toBe('Saved, never published');

    await page.reload();
    await section(page, 'Entries');
    await poll(() => page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Entry id', { exact: true }).inputValue()).toBe('old-well');
    expect(await page.getByTestId('draft-restored').count()).toBe(0);
    expect(await page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Keywords (comma-separated)', { exact: true }).inputValue()).toBe('well, bucket');
    await section(page, 'Variables');
    expect(await page.getByRole('group', { name: 'Variable 1' }).getByLabel('Maximum', { exact: true }).inputValue()).toBe('10');
    await section(page, 'Rules');
    expect(await page.getByRole('group', { name: 'Rule 1' }).getByLabel('Threshold', { exact: true }).inputValue()).toBe('8');

    const saved = await getWorld(worldId);
    expect(saved.revision).toBe(1);
    expect(saved.world.entries[0]).toMatchObject({ id: 'old-well', section: 'chat-history', keywords: ['well', 'bucket'] });
    expect(saved.world.variables[0]).toMatchObject({ id: 'courage', type: 'number', min: 0, max: 10, defaultValue: 5 });
    expect(saved.world.rules[0]).toMatchObject({
      id: 'brave-moment',
      trigger: { type: 'variable-crossed', variableId: 'courage', threshold: 8 },
      actions: [{ type: 'notify-player', message: 'You feel brave.' }],
    });
    await page.close();
  }, 90_000);

  it('advanced mode: an invalid edit shows its issue at its path and cannot be saved; the local draft survives a reload', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/studio/${worldId}`);
    await page.getByRole('button', { name: 'Advanced mode' }).click();
    const editor = page.getByLabel('World JSON', { exact: true });
    const json = JSON.parse(await editor.inputValue()) as WorldView['world'];
    expect(json.editorMode).toBe('advanced');
    json.variables[0]!.type = 'nope';
    await editor.fill(JSON.stringify(json, null, 2));

    const issue = page.locator('[data-issue-path="variables[0].type"]');
    await poll(() => issue.isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);

    await page.reload();
    await poll(() => page.getByTestId('draft-restored').isVisible()).toBe(true);
    expect(await page.getByLabel('World JSON', { exact: true }).inputValue()).toContain('"nope"');
    await poll(() => issue.isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
    expect((await getWorld(worldId)).revision).toBe(1);

    // The issue links to its field in simple mode; fixing it there makes the world savable.
    await issue.getByRole('button', { name: 'Show in simple mode' }).click();
    await poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-path'))).toBe('variables[0].type');
    await page.getByRole('group', { name: 'Variable 1' }).getByLabel('Type', { exact: true }).selectOption('number');
    // Back to the saved content: nothing to save. One real change makes it savable.
    await poll(() => page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
    await page.getByRole('group', { name: 'Variable 1' }).getByLabel('Maximum', { exact: true }).fill('12');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(async () => (await getWorld(worldId)).revision).toBe(2);
    expect((await getWorld(worldId)).world.editorMode).toBe('simple');
    expect((await getWorld(worldId)).world.variables[0]).toMatchObject({ type: 'number', max: 12 });
    await page.close();
  }, 90_000);

  it('two tabs: the second save gets the conflict view and loses neither version', async () => {
    const a = await newPage();
    const b = await newPage();
    await a.goto(`${server.url}/studio/${worldId}`);
    await b.goto(`${server.url}/studio/${worldId}`);
    await poll(() => b.getByLabel('Name', { exact: true }).inputValue()).toBe('The Old Well');
    await a.getByLabel('Description', { exact: true }).first().fill('Tab A rewrote the description.');
    await b.getByLabel('Name', { exact: true }).fill('The Listening Well');
    await a.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(async () => (await getWorld(worldId)).revision).toBe(3);

    await b.getByRole('button', { name: 'Save', exact: true }).click();
    const conflict = b.getByRole('region', { name: 'Conflict' });
    await poll(() => conflict.isVisible()).toBe(true);
    expect(await conflict.getByTestId('conflict-description').textContent()).toContain('Tab A rewrote the description.');
    expect(await conflict.getByTestId('conflict-name').textContent()).toContain('The Listening Well');
    // Nothing was overwritten by the stale save.
    expect((await getWorld(worldId)).world).toMatchObject({ name: 'The Old Well', description: 'Tab A rewrote the description.' });

    await conflict.getByRole('button', { name: 'Keep both (save mine as a copy)' }).click();
    await poll(() => b.getByRole('status').textContent()).toMatch(/saved as a new world/);
    const mine = (await (await context.request.get(`${server.url}/api/worlds`)).json()) as { worlds: { id: string; name: string }[] };
    const copy = mine.worlds.find((w) => w.name === 'The Listening Well (my copy)');
    expect(copy).toBeDefined();
    expect((await getWorld(copy!.id)).world.description).toBe('A village with a well that listens.');
    expect((await getWorld(worldId)).world).toMatchObject({ name: 'The Old Well', description: 'Tab A rewrote the description.' });
    // Tab B now shows the server's version, ready to keep editing.
    await poll(() => b.getByLabel('Name', { exact: true }).inputValue()).toBe('The Old Well');

    // Keep mine: a deliberate overwrite, at the server's current revision.
    await a.reload();
    await a.getByLabel('Name', { exact: true }).fill('Tab A name');
    await b.getByLabel('Name', { exact: true }).fill('Tab B name');
    await a.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(async () => (await getWorld(worldId)).revision).toBe(4);
    await b.getByRole('button', { name: 'Save', exact: true }).click();
    await b.getByRole('region', { name: 'Conflict' }).getByRole('button', { name: 'Keep mine' }).click();
    await poll(async () => (await getWorld(worldId)).world.name).toBe('Tab B name');
    expect((await getWorld(worldId)).revision).toBe(5);
    await a.close();
    await b.close();
  }, 90_000);

  it('assets: a PNG uploads in the studio and renders from its reference; HTML named .png is refused', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/studio/${worldId}`);
    const panel = page.getByRole('region', { name: 'Assets' });
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    await panel.getByLabel('Upload a file', { exact: true }).setInputFiles({ name: 'map.png', mimeType: 'image/png', buffer: png });
    await poll(() => panel.getByRole('status').textContent()).toMatch(/Uploaded map\.png: asset:\/\/ast_/);
    const img = panel.getByRole('img', { name: 'map.png' });
    await poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(1);
    expect(await img.getAttribute('src')).toMatch(new RegExp(`^/api/worlds/${worldId}/assets/ast_`));

    await panel.getByLabel('Upload a file', { exact: true }).setInputFiles({ name: 'cat.png', mimeType: 'image/png', buffer: Buffer.from('<!DOCTYPE html><script>alert(1)</script>') });
    await poll(() => panel.getByRole('status').textContent()).toMatch(/content of this file is none of these/);
    expect(await panel.getByRole('img').count()).toBe(1);
    await page.close();
  }, 60_000);

  it('publish: held for review on a first publication, approved on the administrators’ page, then in the library; a rejection shows its reason', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/studio/${worldId}`);
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await poll(() => page.getByTestId('world-status').textContent()).toBe('Held for review');
    const library = async () => ((await (await context.request.get(`${server.url}/api/library`)).json()) as { worlds: { id: string }[] }).worlds.map((w) => w.id);
    expect(await library()).not.toContain(worldId);

    const adminContext = await browser.newContext();
    const adminId = await signup(adminContext, 'Admin');
    await server.ctx.db.primary.query('update accounts set is_admin = true where id = $1', [adminId]);
    const admin = await newPage(adminContext);
    await admin.goto(`${server.url}/admin/reviews`);
    const row = admin.locator(`tr[data-world-id="${worldId}"]`);
    await row.getByRole('button', { name: 'Approve' }).click();
    await poll(() => library()).toContain(worldId);
    await page.reload();
    await poll(() => page.getByTestId('world-status').textContent()).toBe('Published');

    // A second work, with every publication held: rejected with a reason the author sees.
    const second = ((await (await context.request.post(`${server.url}/api/worlds`, { data: { world: { version: '20.0.0', name: 'Second work' } } })).json()) as { id: string }).id;
    await admin.getByLabel('Hold every publication and edit', { exact: true }).click();
    await poll(async () => ((await (await adminContext.request.get(`${server.url}/api/admin/review-rule`)).json()) as { rule: { holdAllPublications: boolean } }).rule.holdAllPublications).toBe(true);
    await page.goto(`${server.url}/studio/${second}`);
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await poll(() => page.getByTestId('world-status').textContent()).toBe('Held for review');
    await admin.reload();
    const secondRow = admin.locator(`tr[data-world-id="${second}"]`);
    await secondRow.getByLabel('Reason for Second work', { exact: true }).fill('Please add a description.');
    await secondRow.getByRole('button', { name: 'Reject' }).click();
    await poll(() => admin.getByRole('status').textContent()).toContain('Rejected');
    await page.reload();
    await poll(() => page.getByTestId('review-reason').textContent()).toContain('Please add a description.');
    expect(await page.getByTestId('world-status').textContent()).toBe('Saved, never published');
    expect(await library()).not.toContain(second);
    await adminContext.close();
    await page.close();
  }, 90_000);

  it('language variants: the overview links this work as a variant of another and lists its group', async () => {
    const create = async (name: string, language: string) =>
      ((await (await context.request.post(`${server.url}/api/worlds`, { data: { world: { version: '20.0.0', name, language } } })).json()) as { id: string }).id;
    const original = await create('Lantern Road', 'en');
    const variant = await create('提灯の道', 'ja');
    const page = await newPage();
    await page.goto(`${server.url}/studio/${variant}`);
    const section = page.getByRole('group', { name: 'Language variants' });
    await section.getByLabel('Make this a language variant of', { exact: true }).selectOption(original);
    await section.getByRole('button', { name: 'Link', exact: true }).click();
    const item = section.locator(`li[data-variant-id="${original}"]`);
    await poll(() => item.textContent()).toMatch(/Lantern Road \(en\).*original/);
    expect(await item.getByRole('link', { name: 'Lantern Road' }).getAttribute('href')).toBe(`/studio/${original}`);
    const rows = await server.ctx.db.primary.query('select original_id from world_variants where world_id = $1', [variant]);
    expect(rows.rows).toEqual([{ original_id: original }]);
    await section.getByRole('button', { name: 'Unlink', exact: true }).click();
    await poll(() => item.count()).toBe(0);
    expect((await server.ctx.db.primary.query('select 1 from world_variants where world_id = $1', [variant])).rowCount).toBe(0);
    await page.close();
  }, 60_000);
});
