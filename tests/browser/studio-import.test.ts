import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { decodeBase64Utf8, encodeBase64Utf8, exportCard, pngReplaceText, pngWithText, readPngText, validateWorld, type WorldDefinition } from '../../packages/world/src/index.ts';
import { gradientPng } from '../support/png.ts';
import { screenPath } from '../support/screens.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/worlds/${name}`, import.meta.url), 'utf8');
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 100 });

describe('studio Import button in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;

  useBrowserPlatform({}, async (p) => {
    ({ server, browser } = p);
    context = await browser.newContext();
    const res = await signUp(server, context, { email: `importer-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Importer' });
    expect(res.status).toBeLessThan(300);
  });

  const count = async () => (await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from worlds')).rows[0]!.n;

  async function openImport(): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/studio/new`);
    await page.getByRole('button', { name: 'Import…' }).click();
    return page;
  }

  it('a V3 PNG card: the report shows before saving; saving creates the draft and opens it', async () => {
    const page = await openImport();
    const png = pngWithText({ ccv3: encodeBase64Utf8(fixture('card-v3.json')) });
    await page.getByLabel('File').setInputFiles({ name: 'lumen.png', mimeType: 'image/png', buffer: Buffer.from(png) });
    const report = page.getByTestId('import-report');
    await poll(() => report.textContent()).toContain('chara_card_v3 (png)');
    expect(await report.locator('[data-kind="dropped"]').allTextContents()).toEqual([
      'Left out data.nickname the card\'s "nickname" has no counterpart in a world here',
      'Left out data.character_version the card\'s "character_version" has no counterpart in a world here',
    ]);
    // In an author's words (issue 44 point 7): no schema names, no "copy for old readers".
    expect(await page.getByTestId('import-summary').textContent()).toMatch(/^Read as a SillyTavern character card \(chara_card_v3 \(png\)\)\. \d+ things were adjusted on the way in:$/);
    expect(await report.textContent()).not.toMatch(/WorldDefinition|old readers|\bdropped\b|\bdefaulted\b/);
    expect(await report.locator('[data-asset]').getAttribute('data-asset')).toBe('dome');
    const before = await count();
    await page.getByRole('button', { name: 'Save as a new world' }).click();
    await poll(() => page.url()).toMatch(/\/studio\/wld_/);
    const id = decodeURIComponent(page.url().split('/studio/')[1] ?? '');
    expect(await count()).toBe(before + 1);
    const world = (await (await context.request.get(`${server.url}/api/worlds/${id}`)).json()) as { status: string; world: { name: string; version: string } };
    expect(world).toMatchObject({ status: 'saved', world: { name: 'Professor Lumen', version: '20.0.0' } });
    await poll(() => page.getByRole('heading', { name: 'Studio · Professor Lumen' }).isVisible()).toBe(true);
  }, 120_000);

  it('pasted JSON that is not a world shows the issue and cannot be saved', async () => {
    const page = await openImport();
    await page.getByLabel('Pasted JSON').fill(JSON.stringify({ version: '4.2.0', name: 'Old' }));
    await page.getByRole('button', { name: 'Read pasted JSON' }).click();
    const issues = page.getByTestId('import-issues');
    await poll(() => issues.isVisible()).toBe(true);
    expect(await issues.locator('[data-issue-path]').evaluateAll((items) => items.map((item) => item.getAttribute('data-issue-path')))).toEqual(['version']);
    expect(await page.getByRole('button', { name: 'Save as a new world' }).isDisabled()).toBe(true);
  }, 120_000);

  it('a card with a picture and a lorebook: folded report lines, the kept picture, and Export card on the new draft (1280 and 390 px)', async () => {
    const entries = Array.from({ length: 12 }, (_, index) => ({
      keys: [`tower ${index}`],
      content: `Tower ${index} rings at dusk.`,
      enabled: true,
      insertion_order: index,
      extensions: { position: 4, depth: 4, group: 'bells', probability: 100, useProbability: true },
    }));
    const card = { spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'Bell Keeper', description: '{{char}} keeps the bells.', first_mes: 'Ding.', personality: '', scenario: '', mes_example: '', extensions: { regex_scripts: [{ scriptName: 'Hide status' }] }, character_book: { entries } } };
    const png = pngReplaceText(new Uint8Array(gradientPng(400, 600, [40, 60, 160], [200, 120, 40])), { ccv3: encodeBase64Utf8(JSON.stringify(card)) });
    for (const width of [1280, 390]) {
      const page = await openImport();
      await page.setViewportSize({ width, height: 900 });
      await page.getByLabel('File').setInputFiles({ name: 'bells.png', mimeType: 'image/png', buffer: Buffer.from(png) });
      const report = page.getByTestId('import-report');
      await poll(() => report.textContent()).toContain('chara_card_v3 (png)');
      expect(await report.locator('[data-count="12"]').count()).toBe(1);
      expect(await report.locator('[data-count="12"]').textContent()).toContain('12×');
      expect(await report.locator('[data-kept="picture"]').textContent()).toContain("becomes the world's cover and the character's avatar");
      expect(await report.textContent()).toContain('no script will hide them');
      expect(await page.getByTestId('card-kept').textContent()).toContain('Export card writes it back with your edits');
      await page.screenshot({ path: screenPath(`studio-import-${width}`), fullPage: true });
      if (width === 390) break;
      await page.getByRole('button', { name: 'Save as a new world' }).click();
      await poll(() => page.url()).toMatch(/\/studio\/wld_/);
      // Export card: first, in plain words, what the card holds and what it cannot; then the download.
      await page.getByRole('button', { name: 'Export card…' }).click();
      const cardReport = page.getByTestId('card-report');
      await poll(() => cardReport.textContent()).toContain('This world came from a character card');
      expect(await cardReport.textContent()).toContain("The picture is the world's own, as it was imported or uploaded");
      expect(await cardReport.textContent()).toContain('Nothing: SillyTavern can use all of this world.');
      const link = page.getByRole('link', { name: 'Download card (PNG)' });
      await poll(() => link.isVisible()).toBe(true);
      const href = await link.getAttribute('href');
      const exported = await context.request.get(`${server.url}${href}`);
      expect(exported.status()).toBe(200);
      const texts = readPngText(new Uint8Array(await exported.body()));
      expect((JSON.parse(decodeBase64Utf8(texts.get('ccv3')!)) as { data: { name: string } }).data.name).toBe('Bell Keeper');
      // The card is the imported one, in its own picture (400 × 600, not re-encoded).
      expect((JSON.parse(decodeBase64Utf8(texts.get('ccv3')!)) as { data: { extensions: { regex_scripts: unknown } } }).data.extensions.regex_scripts).toEqual([{ scriptName: 'Hide status' }]);
      for (const size of [1280, 390]) {
        await page.setViewportSize({ width: size, height: 900 });
        await page.getByRole('dialog', { name: 'Export as a character card' }).scrollIntoViewIfNeeded();
        await page.screenshot({ path: screenPath(`studio-export-card-${size}`), fullPage: true });
      }
      await page.close();
    }
  }, 180_000);

  it("a card from here, edited elsewhere in a field made of two entries: the author takes the card's text, and the saved world has it (issue 49)", async () => {
    const parsed = validateWorld(JSON.parse(readFileSync(new URL('../../packages/world/samples/willow-street.json', import.meta.url), 'utf8')));
    if (!parsed.ok) throw new Error('the sample does not validate');
    const example = parsed.world.entries.find((entry) => entry.section === 'examples')!;
    const world: WorldDefinition = { ...parsed.world, entries: [...parsed.world.entries, { ...example, id: 'more-examples', content: '<START>\n{{user}}: Tea?\n{{char}}: Always.', position: example.position + 1 }] };
    const card = exportCard(world).card as { data: Record<string, unknown> };
    card.data.mes_example = '<START>\n{{user}}: Coffee?\n{{char}}: Never.';
    const page = await openImport();
    await page.getByLabel('File').setInputFiles({ name: 'mina.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(card)) });
    const conflicts = page.getByTestId('import-conflicts');
    await poll(() => conflicts.textContent()).toContain('data.mes_example was changed after the card left here; this world makes it of 2 entries.');
    await conflicts.getByLabel(/the card's text/).check();
    await page.getByRole('button', { name: 'Save as a new world' }).click();
    await poll(() => page.url()).toMatch(/\/studio\/wld_/);
    const id = page.url().split('/studio/')[1]!.split(/[/?#]/)[0]!;
    await poll(async () => {
      const saved = (await (await context.request.get(`${server.url}/api/worlds/${id}`)).json()) as { world: WorldDefinition };
      return saved.world.entries.filter((entry) => entry.section === 'examples').map((entry) => entry.content);
    }).toEqual(['<START>\n{{user}}: Coffee?\n{{char}}: Never.']);
    await page.close();
  }, 120_000);
});
