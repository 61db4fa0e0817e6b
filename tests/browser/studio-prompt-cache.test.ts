import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { TestServer } from '../support/server.ts';
import { screenPath } from '../support/screens.ts';
import { signUp } from '../support/sign-up.ts';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 150 });

/** Issue 47: the studio's cache-friendly placement setting and its expected saving, on an imported card with a 27-entry lorebook. */
describe('studio: cache-friendly lorebook placement', () => {
  let server: TestServer;
  let browser: Browser;
  useBrowserPlatform({ provider: { apiKey: 'studio-key' } }, (p) => ({ server, browser } = p));

  it('shows the expected saving, and the setting is saved with the world (1280 and 390 px)', async () => {
    const context = await browser.newContext();
    const page: Page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signUp(server, context, { email: `cache-studio-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Cache' });
    const card = readFileSync(new URL('../fixtures/prompt-cache/saltreach-innkeeper.json', import.meta.url));
    const imported = await context.request.post(`${server.url}/api/worlds/import`, { data: { file: { name: 'saltreach-innkeeper.json', base64: card.toString('base64') } } });
    expect(imported.status()).toBe(201);
    const { id } = (await imported.json()) as { id: string };
    await page.goto(`${server.url}/studio/${id}`);
    await page.getByRole('navigation', { name: 'Studio sections' }).getByRole('button', { name: 'Settings', exact: true }).click();
    const estimate = page.getByTestId('prompt-cache-estimate');
    await estimate.waitFor();
    const text = (await estimate.textContent()) ?? '';
    // "mentioning 24 of this world's entries: 1x % ... with it off, 9x % with it on"
    expect(text).toMatch(/mentioning 24 of this world.s entries/);
    const [off, on] = [...text.matchAll(/(\d+)\s% of the prompt repeats with it off, (\d+)\s% with it on/g)][0]!.slice(1).map(Number);
    expect(off).toBeLessThan(50);
    expect(on).toBeGreaterThan(85);
    // the card's always-sent entries use no changing macro
    expect(await page.getByTestId('prompt-cache-changing').count()).toBe(0);
    const box = page.getByLabel('Cache-friendly lorebook placement', { exact: true });
    expect(await box.isChecked()).toBe(false);
    await box.check();
    await poll(() => estimate.textContent()).toMatch(/on for this world/);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await estimate.scrollIntoViewIfNeeded();
      await page.screenshot({ path: screenPath(`studio-prompt-cache-${width}`) });
    }
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(() => page.getByRole('status').first().textContent()).toBe('Saved.');
    const saved = (await (await context.request.get(`${server.url}/api/worlds/${id}`)).json()) as { world: { settings: Record<string, unknown> } };
    expect(saved.world.settings.cacheFriendlyPlacement).toBe(true);
    await context.close();
  });
});
