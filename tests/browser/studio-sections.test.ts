import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { gradientPng } from '../support/png.ts';
import type { TestServer } from '../support/server.ts';
import { screenPath } from '../support/screens.ts';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 150 });

/** The studio's sidebar sections, issues beside their fields, list search/collapse/reorder, CodeMirror with a live preview, Export. */
describe('studio sections in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  useBrowserPlatform({ provider: { apiKey: 'studio-key' } }, (p) => ({ server, browser, provider } = p));

  it('sections, inline issues, list tools, the interface editor and its preview, export', async () => {
    const context = await browser.newContext({ acceptDownloads: true });
    const page: Page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('dialog', (d) => void d.accept());
    await context.request.post(`${server.url}/api/auth/signup`, { data: { email: `sections-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Sections' } });
    const entry = (id: string, name: string) => ({ id, name, content: `${name} content`, section: 'system-presets', keywords: [] });
    const created = await context.request.post(`${server.url}/api/worlds`, {
      data: { world: { version: '20.0.0', name: 'Sectioned', entries: [entry('harbour', 'Harbour'), entry('lighthouse', 'Lighthouse'), entry('market', 'Market')] } },
    });
    const { id } = (await created.json()) as { id: string };
    await page.goto(`${server.url}/studio/${id}`);
    const nav = page.getByRole('navigation', { name: 'Studio sections' });
    const open = (name: string) => nav.getByRole('button', { name, exact: true }).click();
    await page.getByLabel('Name', { exact: true }).waitFor();
    // One section at a time.
    expect(await page.getByRole('button', { name: 'Add entry' }).count()).toBe(0);
    await open('Entries');
    await poll(() => page.getByLabel('Name', { exact: true }).count()).toBe(0);
    expect(await nav.getByRole('button', { name: 'Entries', exact: true }).getAttribute('aria-current')).toBe('page');

    // Search narrows the list; collapse hides an entry's fields; move down reorders.
    const search = page.getByLabel('Search entries', { exact: true });
    await search.fill('light');
    await poll(() => page.getByRole('group', { name: /^Entry \d/ }).count()).toBe(1);
    await search.fill('');
    await poll(() => page.getByRole('group', { name: /^Entry \d/ }).count()).toBe(3);
    const first = page.getByRole('group', { name: /^Entry 1/ });
    await first.getByRole('button', { name: /^Collapse Entry 1/ }).click();
    await poll(() => first.getByLabel('Content', { exact: true }).count()).toBe(0);
    await first.getByRole('button', { name: /^Expand Entry 1/ }).click();
    await first.getByLabel('Content', { exact: true }).waitFor();
    await first.getByRole('button', { name: /^Move Entry 1 .* down$/ }).click();
    await poll(() => page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Entry id', { exact: true }).inputValue()).toBe('lighthouse');

    // An issue shows beside its field and counts on its section.
    await page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Entry id', { exact: true }).fill('Not Kebab');
    await poll(() => page.locator('[data-issue-for="entries[0].id"]').count()).toBe(1);
    expect(await nav.getByRole('button', { name: /^Entries/ }).textContent()).toMatch(/Entries\s*1/);
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
    await page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Entry id', { exact: true }).fill('lighthouse');
    await poll(() => page.locator('[data-issue-for="entries[0].id"]').count()).toBe(0);

    // The interface: CodeMirror edits the code, the sandboxed preview follows.
    await open('Interface');
    await page.getByRole('button', { name: 'Add a custom interface' }).click();
    const editor = page.getByRole('textbox', { name: 'Interface code: index.tsx' });
    await editor.waitFor();
    const preview = page.frameLocator('iframe[title="Interface preview"]');
    await poll(() => preview.getByText('My world').count()).toBe(1);
    await editor.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('export default function S() { return <p>Hello from the studio</p>; }');
    await poll(() => preview.getByText('Hello from the studio').count()).toBe(1);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: screenPath('studio-interface') });

    // Save, then Export downloads the saved world as JSON.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(() => page.getByRole('status').first().textContent()).toBe('Saved.');
    const saved = (await (await context.request.get(`${server.url}/api/worlds/${id}`)).json()) as { world: { entries: { id: string }[]; rootComponent: { files: Record<string, string> } } };
    expect(saved.world.entries.map((e) => e.id)).toEqual(['lighthouse', 'harbour', 'market']);
    expect(saved.world.rootComponent.files['index.tsx']).toContain('Hello from the studio');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export', exact: true }).click()]);
    expect(download.suggestedFilename()).toBe('Sectioned.json');
    const exported = JSON.parse(readFileSync((await download.path())!, 'utf8')) as { name: string; entries: { id: string }[] };
    expect(exported.name).toBe('Sectioned');
    expect(exported.entries.map((e) => e.id)).toEqual(['lighthouse', 'harbour', 'market']);
    await context.close();
  }, 120_000);

  it("issue 30 B: a portrait uploaded in the studio shows on the character's bubbles with the character's name (not the world's); the persona's avatar on the player's", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const worldId = await page.evaluate(async (providerUrl) => {
      const call = (url: string, method: string, body: unknown) => fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
      await call('/api/auth/signup', 'POST', { email: `faces-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Faces' });
      await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'studio-key' });
      const entries = [
        { id: 'frame', name: 'Story frame', content: 'Tell the story from her side.', section: 'system-presets', role: 'system' },
        { id: 'mina', name: 'Mina Park', content: 'Mina Park, 27, runs a florist shop.', section: 'system-presets', role: 'character', position: 1 },
        { id: 'hello', name: 'Greeting', content: 'Mina looks up from the tulips.', section: 'chat-history', role: 'greeting', apiRole: 'assistant' },
      ];
      return ((await call('/api/worlds', 'POST', { world: { version: '20.0.0', name: 'Rain on Willow Street', entries } })) as { id: string }).id;
    }, provider.url);

    // Cover and tags: the portrait, uploaded at once (the world had no cover: it gets one from the portrait too).
    await page.goto(`${server.url}/studio/${worldId}#tags`);
    await page.getByLabel('Upload a portrait').setInputFiles({ name: 'mina.png', mimeType: 'image/png', buffer: gradientPng(400, 600, [236, 120, 40], [40, 30, 110]) });
    await poll(() => page.getByTestId('portrait-message').textContent()).toBe('Portrait set.');
    const portrait = (await page.getByTestId('portrait').getAttribute('src'))!;
    expect(portrait).toMatch(new RegExp(`^/api/worlds/${worldId}/assets/ast_`));
    expect(await page.getByTestId('cover-picker').getByRole('img', { name: 'Cover of Rain on Willow Street' }).count()).toBe(1);

    // The persona's avatar: uploaded in Settings, shown on the player's own bubbles.
    await page.goto(`${server.url}/app/settings#personas`);
    await page.getByLabel('Persona name').fill('Captain Vale');
    await page.getByRole('button', { name: 'Add persona' }).click();
    await page.getByLabel('Upload avatar for Captain Vale').setInputFiles({ name: 'vale.png', mimeType: 'image/png', buffer: gradientPng(300, 300, [20, 140, 120], [10, 40, 60]) });
    const personaFace = page.getByTestId('persona-avatar');
    await poll(() => personaFace.getAttribute('src')).toMatch(/^\/api\/account-pictures\/acc_/);
    const personaSrc = (await personaFace.getAttribute('src'))!;
    await page.goto(`${server.url}/play/${worldId}`);
    await poll(() => page.title()).toBe('Play · Rain on Willow Street · Yumina');
    const greeting = page.locator('[data-testid="messages"] li[data-message-id]').first();
    await poll(() => greeting.locator('.chat-name').textContent()).toBe('Mina Park');
    // The avatar is the whole portrait (within 512 × 768, never enlarged).
    await poll(() => greeting.locator('img.chat-avatar').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(400);
    expect(await greeting.locator('img.chat-avatar').getAttribute('src')).toBe(portrait);
    provider.enqueue({ kind: 'completion', content: 'She hands you a towel without a word.' });
    await page.getByLabel('Message', { exact: true }).fill('Are you open?');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const bubbles = page.locator('[data-testid="messages"] li[data-message-id]');
    await poll(() => bubbles.last().getByTestId('message-text').textContent()).toBe('She hands you a towel without a word.');
    const mine = page.locator('[data-testid="messages"] li[data-role="user"]').last();
    expect(await mine.locator('.chat-name').textContent()).toBe('Captain Vale');
    await poll(() => mine.locator('img.chat-avatar').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(256);
    expect(await mine.locator('img.chat-avatar').getAttribute('src')).toBe(personaSrc);
    expect(await bubbles.last().locator('.chat-name').textContent()).toBe('Mina Park');
    await page.screenshot({ path: screenPath('player-faces-1280') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: screenPath('player-faces-390') });
    await context.close();
  }, 180_000);
});
