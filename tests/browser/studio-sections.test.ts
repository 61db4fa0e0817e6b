import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { gradientPng } from '../support/png.ts';
import type { TestServer } from '../support/server.ts';
import { screenPath } from '../support/screens.ts';
import { signUp } from '../support/sign-up.ts';

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
    await signUp(server, context, { email: `sections-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Sections' });
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

  /** Every visible input, select, textarea and button that reaches past the card (or the page) it sits in. */
  const overflowing = (page: Page) =>
    page.evaluate(() => {
      const out: string[] = [];
      for (const el of document.querySelectorAll<HTMLElement>('main input, main select, main textarea, main button, main .cm-editor')) {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || getComputedStyle(el).visibility === 'hidden' || el.closest('.visually-hidden')) continue;
        const frame = (el.closest('.card, fieldset, .character-actions') ?? document.querySelector('main'))!.getBoundingClientRect();
        if (box.right > frame.right + 1 || box.left < frame.left - 1) out.push(`${el.tagName.toLowerCase()} "${el.getAttribute('aria-label') ?? el.textContent?.slice(0, 30) ?? ''}" ${Math.round(box.left)}–${Math.round(box.right)} outside ${Math.round(frame.left)}–${Math.round(frame.right)}`);
      }
      if (document.documentElement.scrollWidth > window.innerWidth) {
        // The outermost elements that reach past the page's right edge, to name the culprit.
        const wide = [...document.querySelectorAll<HTMLElement>('main *')].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1);
        const outer = wide.filter((el) => !wide.includes(el.parentElement!)).slice(0, 3);
        out.push(`page ${document.documentElement.scrollWidth} px wide in ${window.innerWidth}: ${outer.map((el) => `${el.tagName.toLowerCase()}.${el.className}`).join(', ')}`);
      }
      return out;
    });

  it("issue 30 B: a portrait uploaded in the studio shows on the character's bubbles with the character's name (not the world's); the persona's avatar on the player's", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `faces-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Faces' });
    const worldId = await page.evaluate(async (providerUrl) => {
      const call = (url: string, method: string, body: unknown) => fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
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

  it('issue 30 D: a character made in plain words in the character editor, with a portrait, plays with its face and name; an edit keeps its entries', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `maker-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Maker' });
    await page.evaluate(async (providerUrl) => {
      const call = (url: string, method: string, body: unknown) => fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'studio-key' });
    }, provider.url);

    // My worlds → New character: a sheet in plain words, no ids, sections or JSON.
    await page.goto(`${server.url}/studio`);
    await page.getByRole('link', { name: 'New character' }).click();
    await page.waitForURL(/\/studio\/new\/character$/);
    await poll(() => page.title()).toBe('Character editor · New character · Yumina');
    const play = page.getByRole('button', { name: 'Play', exact: true });
    expect(await play.isDisabled()).toBe(true);
    expect(await page.getByTestId('character-message').textContent()).toBe('Give the character a name.');
    for (const hidden of ['Entry id', 'Section', 'Message role', 'Position']) expect(await page.getByLabel(hidden, { exact: true }).count()).toBe(0);
    await page.getByLabel('Name', { exact: true }).fill('Ember');
    await page.getByLabel('Tagline', { exact: true }).fill('A lighthouse keeper who talks to storms.');
    await page.getByLabel('Tags', { exact: true }).fill('cozy, sea');
    await page.getByLabel('Description', { exact: true }).fill('{{char}} keeps the lighthouse on Gull Rock and has for forty years.');
    await page.getByLabel('Personality', { exact: true }).fill('Dry humour, fiercely loyal.');
    await page.getByLabel('Scenario', { exact: true }).fill('A storm has stranded {{user}} at the lighthouse.');
    await page.getByLabel('Greeting', { exact: true }).fill('"Shut the door, {{user}}, the wind bites."');
    await page.getByRole('button', { name: 'Add an alternate greeting' }).click();
    await page.getByLabel('Alternate greeting 1', { exact: true }).fill('"Another one washed up, then."');
    await page.getByLabel('Example dialogue', { exact: true }).fill('<START>\n{{user}}: Is it always this loud?\n{{char}}: Only when the sea has opinions.');
    await page.getByRole('button', { name: 'Add a lore entry' }).click();
    await poll(() => page.getByTestId('character-message').textContent()).toContain('needs a keyword');
    await page.getByLabel('Lore entry 1 name', { exact: true }).fill('The lamp');
    await page.getByLabel('Lore entry 1 keywords', { exact: true }).fill('lamp, light');
    await page.getByLabel('Lore entry 1 text', { exact: true }).fill('The lamp has not gone out in ninety years.');
    await page.getByLabel('Upload a portrait').setInputFiles({ name: 'ember.png', mimeType: 'image/png', buffer: gradientPng(400, 600, [236, 120, 40], [40, 30, 110]) });
    await poll(() => page.getByTestId('portrait').getAttribute('src')).toMatch(/^blob:/);
    await poll(() => page.title()).toBe('Character editor · Ember · Yumina');
    expect(await overflowing(page)).toEqual([]);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenPath('character-editor-1280') });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflowing(page)).toEqual([]);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenPath('character-editor-390') });
    await page.setViewportSize({ width: 1280, height: 900 });

    // Play: the world is saved with the portrait, and the player shows the character's face and name.
    await play.click();
    await page.waitForURL(/\/play\/wld_/);
    const worldId = decodeURIComponent(page.url().split('/play/')[1]!);
    const greeting = page.locator('[data-testid="messages"] li[data-message-id]').first();
    await poll(() => greeting.locator('.chat-name').textContent()).toBe('Ember');
    expect(await greeting.getByTestId('message-text').textContent()).toMatch(/^"Shut the door, \S+, the wind bites\."$/);
    // The avatar is the whole portrait (within 512 × 768, never enlarged).
    const face = greeting.locator('img.chat-avatar');
    await poll(() => face.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(400);
    expect(await face.getAttribute('src')).toMatch(new RegExp(`^/api/worlds/${worldId}/assets/ast_`));
    await poll(() => page.title()).toBe('Play · Ember · Yumina');
    const stored = (await (await context.request.get(`${server.url}/api/worlds/${worldId}`)).json()) as {
      avatarUrl: string;
      coverUrl: string;
      world: { name: string; description: string; customTags: string[]; entries: { id: string; section: string; content: string; keywords: string[] }[] };
    };
    expect(stored.avatarUrl).toBe(await face.getAttribute('src'));
    expect(stored.coverUrl).toMatch(/\/assets\/ast_/);
    expect(stored.world).toMatchObject({ name: 'Ember', description: 'A lighthouse keeper who talks to storms.', customTags: ['cozy', 'sea'] });
    // The ids and sections are derived as the card importer derives them.
    expect(stored.world.entries.map((e) => `${e.id}:${e.section}`)).toEqual([
      'character:system-presets',
      'personality:system-presets',
      'scenario:system-presets',
      'example-messages:examples',
      'greeting:chat-history',
      'greeting-2:chat-history',
      'lore-0:chat-history',
    ]);
    expect(stored.world.entries.find((e) => e.id === 'lore-0')).toMatchObject({ keywords: ['lamp', 'light'], content: 'The lamp has not gone out in ninety years.' });

    // Back in the editor: the saved sheet; an edit keeps the entries' ids.
    await page.goto(`${server.url}/studio/${worldId}/character`);
    await poll(() => page.getByLabel('Greeting', { exact: true }).inputValue()).toBe('"Shut the door, {{user}}, the wind bites."');
    expect(await page.getByTestId('portrait').getAttribute('src')).toBe(stored.avatarUrl);
    expect(await page.getByLabel('Lore entry 1 keywords', { exact: true }).inputValue()).toBe('lamp, light');
    await page.getByLabel('Personality', { exact: true }).fill('');
    await page.getByLabel('Greeting', { exact: true }).fill('"Door. Now."');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(() => page.getByTestId('character-message').textContent()).toBe('Saved.');
    const edited = (await (await context.request.get(`${server.url}/api/worlds/${worldId}`)).json()) as { world: { entries: { id: string; content: string }[] } };
    expect(edited.world.entries.map((e) => e.id)).toEqual(['character', 'scenario', 'example-messages', 'greeting', 'greeting-2', 'lore-0']);
    expect(edited.world.entries.find((e) => e.id === 'greeting')!.content).toBe('"Door. Now."');
    await context.close();
  }, 180_000);

  it('issue 30 D: the studio at 1280 and 390 px — the code editor at least half the width, a usable playtest, no overflowing input; the greeting role goes where greetings go', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('dialog', (d) => void d.accept());
    await signUp(server, context, { email: `layout-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Layout' });
    // Two works: the Overview offers the other as a language variant (its select once overflowed the card).
    const create = async (name: string) => ((await (await context.request.post(`${server.url}/api/worlds`, { data: { world: { version: '20.0.0', name, language: 'en' } } })).json()) as { id: string }).id;
    await create('A work with a rather long name to choose as the original of its language variants');
    const id = await create('Layout');
    await page.goto(`${server.url}/studio/${id}`);
    const nav = page.getByRole('navigation', { name: 'Studio sections' });
    await page.getByRole('combobox', { name: 'Make this a language variant of' }).waitFor();
    await poll(() => page.title()).toBe('Studio · Layout · Yumina');

    // The greeting role puts an entry where greetings go.
    await nav.getByRole('button', { name: 'Entries', exact: true }).click();
    await page.getByRole('button', { name: 'Add entry' }).click();
    const entry = page.getByRole('group', { name: /^Entry 1/ });
    expect(await entry.getByLabel('Section', { exact: true }).inputValue()).toBe('system-presets');
    await entry.getByLabel('Role', { exact: true }).selectOption('greeting');
    await poll(() => page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Section', { exact: true }).inputValue()).toBe('chat-history');
    expect(await page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Message role', { exact: true }).inputValue()).toBe('assistant');
    await page.getByRole('group', { name: /^Entry 1/ }).getByLabel('Content', { exact: true }).fill('Welcome in.');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(() => page.getByRole('status').first().textContent()).toBe('Saved.');

    // Everything of the page is there before it is measured (the assets panel's file input once reached past its card).
    await page.getByLabel('Upload a file').waitFor();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const section of ['Basics', 'Entries', 'Cover and tags', 'Settings']) {
        await nav.getByRole('button', { name: section, exact: true }).click();
        expect({ width, section, outside: await overflowing(page) }).toEqual({ width, section, outside: [] });
      }
      // The interface: the code editor at least half the page's width (all of it on a phone).
      await nav.getByRole('button', { name: 'Interface', exact: true }).click();
      if (width === 1280) await page.getByRole('button', { name: 'Add a custom interface' }).click();
      const code = page.locator('.code-editor');
      await code.waitFor();
      const codeWidth = (await code.boundingBox())!.width;
      expect(codeWidth).toBeGreaterThanOrEqual(width === 1280 ? 640 : 300);
      expect(await overflowing(page)).toEqual([]);
      // The playtest: the chat and its composer in view, the greeting there.
      const save = page.getByRole('button', { name: 'Save', exact: true });
      if (await save.isEnabled()) {
        await save.click();
        await poll(() => save.isEnabled()).toBe(false);
      }
      await nav.getByRole('button', { name: 'Playtest', exact: true }).click();
      const chat = page.getByRole('region', { name: 'Conversation' });
      await poll(() => chat.getByTestId('message-text').first().textContent()).toBe('Welcome in.');
      expect((await chat.boundingBox())!.width).toBeGreaterThanOrEqual(width === 1280 ? 640 : 300);
      expect(await chat.getByRole('button', { name: 'Send', exact: true }).isVisible()).toBe(true);
      expect(await overflowing(page)).toEqual([]);
      await poll(() => page.frameLocator('iframe[title="World interface"]').getByText('My world').count()).toBe(1);
      await chat.evaluate((el) => el.scrollIntoView({ block: 'end' }));
      await page.screenshot({ path: screenPath(`studio-playtest-${width}`) });
      expect(await page.title()).toBe('Studio · Layout · Yumina');
    }
    await context.close();
  }, 180_000);
});
