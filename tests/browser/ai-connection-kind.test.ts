import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 47 point 1: the AI connection form's Provider select. The base URL's host names Anthropic
 * or Gemini until a kind is chosen by hand; an Anthropic connection lists its models with the key
 * in `x-api-key`, says when the key is refused, and saves with its kind. At 1280 px and 390 px,
 * against the loopback Anthropic fake.
 */
describe('the AI connection form with a provider kind', () => {
  let server: TestServer;
  let browser: Browser;
  let anthropic: FakeAnthropic;
  useBrowserPlatform({}, (p) => ({ server, browser } = p));
  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: 'sk-ant-form-4412' });
  });
  afterAll(async () => {
    await anthropic?.close();
  });

  for (const viewport of [
    { width: 1280, height: 900, name: '1280' },
    { width: 390, height: 844, name: '390' },
  ]) {
    it(`at ${viewport.name} px: the host names the kind; an Anthropic connection is listed, tested and saved with its kind`, async () => {
      const context = await browser.newContext({
        viewport: { width: viewport.width, height: viewport.height },
        ...(viewport.width < 500 ? { hasTouch: true, isMobile: true } : {}),
      });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      await page.goto(`${server.url}/`);
      await signUp(server, page, { email: `kind-${viewport.name}-${Date.now()}@example.com` });
      await page.goto(`${server.url}/app/settings#ai-config`);
      const form = page.getByRole('form', { name: 'AI connection' });
      await expect.poll(() => form.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
      const kind = form.getByRole('combobox', { name: 'Provider' });
      expect(await kind.inputValue()).toBe('openai');

      // the host names the kind (no key typed: nothing is asked of those hosts)
      await form.getByLabel('Base URL').fill('https://api.anthropic.com/v1');
      await expect.poll(() => kind.inputValue()).toBe('anthropic');
      await form.getByLabel('Base URL').fill('https://generativelanguage.googleapis.com/v1beta');
      await expect.poll(() => kind.inputValue()).toBe('gemini');
      await form.getByLabel('Base URL').fill('https://openrouter.ai/api/v1');
      await expect.poll(() => kind.inputValue()).toBe('openai');

      // chosen by hand, it stays whatever the base URL
      await kind.selectOption('anthropic');
      await form.getByLabel('Base URL').fill(anthropic.url);
      expect(await kind.inputValue()).toBe('anthropic');

      // a key for another provider: Anthropic's 401, said plainly
      await form.getByLabel('API key').fill('sk-proj-openai-key');
      await expect.poll(() => page.getByTestId('model-list-note').textContent(), { timeout: 20_000 }).toMatch(/^The connection failed: Anthropic refused this key \(401\)/);
      await form.getByLabel('API key').fill('sk-ant-form-4412');
      await expect.poll(() => page.getByTestId('model-list-note').textContent(), { timeout: 20_000 }).toBe('Connection works: 2 models listed.');
      expect(await form.getByRole('combobox', { name: 'Default model' }).inputValue()).toBe('claude-sonnet-4-5');
      expect(anthropic.requests.at(-1)!.headers['x-api-key']).toBe('sk-ant-form-4412');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await form.screenshot({ path: screenPath(`settings-ai-kind-${viewport.name}`) });

      await form.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toBe('Saved.');
      const saved = await page.evaluate(() => fetch('/api/settings/ai').then((r) => r.json() as Promise<Record<string, unknown>>));
      expect(saved).toMatchObject({ configured: true, kind: 'anthropic', baseUrl: anthropic.url, defaultModel: 'claude-sonnet-4-5' });
      // reloaded, the form shows the saved kind
      await page.reload();
      await expect.poll(() => form.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
      expect(await form.getByRole('combobox', { name: 'Provider' }).inputValue()).toBe('anthropic');
      await context.close();
    }, 90_000);
  }
});
