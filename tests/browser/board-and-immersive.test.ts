import { levelLabel } from '@yumina/companion';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';
import { newLawn } from '../../web/src/companion/lawn.ts';

/** Issue 44 point 4: on a phone (390 × 844, touch) the adventure board and an immersive world fit the screen. */
const PHONE = { width: 390, height: 844 };

async function within(page: Page, what: string, box: { x: number; y: number; width: number; height: number } | null): Promise<void> {
  expect(box, what).not.toBeNull();
  expect(box!.x, `${what}: left`).toBeGreaterThanOrEqual(0);
  expect(box!.y, `${what}: top`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${what}: right`).toBeLessThanOrEqual(PHONE.width);
  expect(box!.y + box!.height, `${what}: bottom`).toBeLessThanOrEqual(PHONE.height);
}

describe('the adventure board and immersive mode: they fit a 390 px phone; a won level leads on', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;

  useBrowserPlatform({ provider: { apiKey: 'phone-key' } }, (p) => ({ server, browser, provider } = p));

  const phone = (): Promise<BrowserContext> => browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true, deviceScaleFactor: 1 });

  it('the adventure board: the lawn, its toolbar and the page are no wider than the screen', async () => {
    const context = await phone();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'phone-key', worlds: [] });
    await page.goto(`${server.url}/adventure/demo?level=1`);
    const lawn = page.getByRole('region', { name: 'Lawn' });
    await lawn.waitFor();
    const box = (await lawn.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    // Every cell of a row is on the screen, the last one included.
    await within(page, 'row 1, column 9', await page.getByRole('button', { name: /^Row 1, column 9/ }).boundingBox());
    await within(page, 'the plants toolbar', await page.getByRole('toolbar', { name: 'Plants' }).boundingBox());
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: screenPath('phone-adventure-board') });
    await context.close();
  }, 120_000);

  it('immersive mode: the world\'s interface and its message box are within the screen', async () => {
    const context = await phone();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [worldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'phone-key', worlds: [sampleWorld('ashen-depths')] });
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);
    await page.getByRole('button', { name: 'Immersive mode' }).click();
    await page.getByRole('button', { name: 'Leave immersive mode' }).waitFor();
    await within(page, 'the interface', await page.locator('iframe[title="World interface"]').boundingBox());
    await within(page, 'the message box', await frame.getByLabel('Message').boundingBox());
    await within(page, 'Send', await frame.getByRole('button', { name: 'Send' }).boundingBox());
    await within(page, 'Leave immersive mode', await page.getByRole('button', { name: 'Leave immersive mode' }).boundingBox());
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: screenPath('phone-immersive') });
    // The same at 1280 px: the interface fills the window below the head row.
    await page.setViewportSize({ width: 1280, height: 800 });
    const wide = (await page.locator('iframe[title="World interface"]').boundingBox())!;
    expect(wide.y + wide.height).toBeLessThanOrEqual(800);
    expect(wide.height).toBeGreaterThan(600);
    await page.screenshot({ path: screenPath('immersive-1280') });
    // Leaving it brings the page back, with the default chat.
    await page.getByRole('button', { name: 'Leave immersive mode' }).click();
    await page.getByRole('button', { name: 'Immersive mode' }).waitFor();
    await context.close();
  }, 120_000);
  it('issue 44 point 7: a won adventure level offers the next level (and playing it again), not only "Try again"', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'phone-key', worlds: [] });
    // The player's adventure save, as the board writes it: level 3 with every wave spawned and
    // cleared and no zombie left, so the board ends it as won on its first step.
    const waves = newLawn(3, 1).waves.length;
    const lawn = {
      version: 1, level: 3, cycle: 1, simMs: 60_000, sun: 50, plants: [], zombies: [], peas: [], mowers: [true, true, true, true, true], lastMowerAtMs: null,
      nextWave: waves, clearedWaves: Array.from({ length: waves }, (_, i) => i + 1), nextSkySunAtMs: 90_000, belt: [], nextBeltAtMs: 0, bonusSeeds: [], rng: 1, nextId: 1,
    };
    const save = { format: 'yumina-save', version: 1, chunks: [{ id: 100, data: Buffer.from(JSON.stringify(lawn)).toString('base64') }] };
    expect(await page.evaluate(async (body) => (await fetch('/api/games/companion-demo/saves/adventure', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status, { revision: 0, save, defeated: false })).toBe(200);
    await page.goto(`${server.url}/adventure/demo`);
    await expect.poll(() => page.getByTestId('board-state').textContent(), { timeout: 20_000 }).toBe('Won');
    expect(await page.getByText('Level complete!').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Play again' }).count()).toBe(1);
    await page.getByRole('button', { name: `Next level (${levelLabel(4)})` }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Adventure demo · ${levelLabel(4)}`);
    await expect.poll(() => page.getByTestId('board-state').textContent()).toBe('Running');
    await page.close();
  }, 120_000);
});
