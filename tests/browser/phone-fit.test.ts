import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';

/** Issue 44 point 4: on a phone (390 × 844, touch) the adventure board and an immersive world fit the screen. */
const PHONE = { width: 390, height: 844 };

async function within(page: Page, what: string, box: { x: number; y: number; width: number; height: number } | null): Promise<void> {
  expect(box, what).not.toBeNull();
  expect(box!.x, `${what}: left`).toBeGreaterThanOrEqual(0);
  expect(box!.y, `${what}: top`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${what}: right`).toBeLessThanOrEqual(PHONE.width);
  expect(box!.y + box!.height, `${what}: bottom`).toBeLessThanOrEqual(PHONE.height);
}

describe('phones: the adventure board and immersive mode fit a 390 px screen', () => {
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
});
