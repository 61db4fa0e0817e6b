import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import type { TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { signUp } from '../support/sign-up.ts';

describe('the model browser in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  useBrowserPlatform(
    {
      provider: {
        apiKey: 'k-models',
        models: [
          { id: 'tiny-story', context_length: 4096 },
          { id: 'big-story', name: 'Big Story', context_length: 128000 },
        ],
      },
    },
    (p) => ({ server, browser, provider } = p),
  );

  it('lists the models of the account’s OpenAI-compatible server; a pin persists across reloads', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `models-${Date.now()}@example.com`, password: 'long enough pw' });
    await page.evaluate(async (url) => {
      const send = (path: string, method: string, body: unknown) =>
        fetch(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await send('/api/settings/ai', 'PUT', { baseUrl: url, defaultModel: 'tiny-story', apiKey: 'k-models' });
    }, provider.url);
    await page.goto(`${server.url}/app/models`);
    const list = page.getByRole('list', { name: 'Models' });
    await expect.poll(() => list.locator('li').count()).toBe(2);
    expect(await list.locator('li[data-model="big-story"]').textContent()).toContain('128,000 tokens');
    await page.getByLabel('Search models').fill('big');
    await expect.poll(() => list.locator('li').count()).toBe(1);
    await list.locator('li[data-model="big-story"]').getByRole('button', { name: 'Pin' }).click();
    await expect.poll(() => list.locator('li[data-model="big-story"] button[aria-pressed="true"]').count()).toBe(1);
    await page.reload();
    await expect.poll(() => page.getByRole('list', { name: 'Models' }).locator('li').count()).toBe(2);
    expect(await page.locator('li[data-model="big-story"] button[aria-pressed]').getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('li[data-model="tiny-story"] button[aria-pressed]').getAttribute('aria-pressed')).toBe('false');
    // Pinned models come first.
    expect(await page.getByRole('list', { name: 'Models' }).locator('li').first().getAttribute('data-model')).toBe('big-story');
    await page.close();
  }, 90_000);
});
