import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { screenPath } from '../support/screens.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Issue 44, point 6: with the platform's provider configured and GUEST_PREVIEW_TURNS_PER_HOUR left
 * unset, a signed-out visitor gets a few turns (5 an hour per address) and the world page offers
 * "Try it now".
 */
describe('guests try a world on the platform’s provider by default', () => {
  let server: TestServer;
  let browser: Browser;
  let official: FakeOpenAi;

  // The server needs the provider's address in its settings: started one after the other.
  beforeAll(async () => {
    official = await startFakeOpenAi({ apiKey: 'platform-key' });
    [server, browser] = await Promise.all([
      startTestServer(
        // No GUEST_PREVIEW_TURNS_PER_HOUR: the default is what is tested.
        { SAMPLE_WORLDS: '1', OFFICIAL_AI_BASE_URL: official.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform/story' },
        { web: true },
      ),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await official?.close();
  });

  for (const viewport of [
    { width: 1280, height: 900, name: '1280' },
    { width: 390, height: 844, name: '390' },
  ]) {
    it(`at ${viewport.name} px: the world page offers "Try it now" to a signed-out visitor, and the guest’s turn is answered`, async () => {
      const context = await browser.newContext({
        viewport: { width: viewport.width, height: viewport.height },
        ...(viewport.width < 500 ? { hasTouch: true, isMobile: true } : {}),
      });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      await page.goto(`${server.url}/worlds/wld_sample_willow_street`);
      const tryIt = page.getByRole('link', { name: 'Try it now' });
      await expect.poll(() => tryIt.count(), { timeout: 20_000 }).toBe(1);
      expect(await page.getByTestId('guest-turns').textContent()).toBe('No account needed: 5 turns an hour as a guest.');
      expect(await page.getByTestId('play').textContent()).toBe('Sign up to play');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await page.screenshot({ path: screenPath(`world-try-it-${viewport.name}`) });

      await tryIt.click();
      await page.waitForURL(/\/play\/wld_sample_willow_street$/);
      await expect.poll(() => page.getByTestId('guest-preview').count(), { timeout: 20_000 }).toBe(1);
      official.enqueue({ kind: 'completion', content: `The rain keeps falling on Willow Street (${viewport.name}).` });
      await page.getByRole('textbox', { name: 'Message' }).fill('I open the door');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => page.getByTestId('messages').textContent(), { timeout: 20_000 }).toContain(`The rain keeps falling on Willow Street (${viewport.name}).`);
      // It played on the platform's provider.
      expect(official.completions.at(-1)?.body?.model).toBe('platform/story');
      await context.close();
    }, 90_000);
  }

  it('the allowance is 5 turns an hour per address by default', async () => {
    expect(server.ctx.config.guestPreviewTurnsPerHour).toBe(5);
    const info = (await (await fetch(`${server.url}/api/platform`)).json()) as { guestPreview: boolean; guestTurnsPerHour: number };
    expect(info).toMatchObject({ guestPreview: true, guestTurnsPerHour: 5 });
  });
});
