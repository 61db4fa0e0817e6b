import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 44, point 1: the AI connection form, a player's first step. Typing a base URL and key lists
 * the provider's models and tests the connection before anything is saved; Save works without a
 * model typed (the list's choice); the model field's placeholder does not look like a value.
 * At 1280 px and at 390 px (touch), against the loopback OpenAI-compatible provider.
 */
describe('the AI connection form before anything is saved', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  useBrowserPlatform(
    {
      provider: {
        apiKey: 'sk-form-key-7781',
        models: [
          { id: 'story-large', name: 'Story Large', context_length: 128000 },
          { id: 'story-small', context_length: 8192 },
        ],
      },
    },
    (p) => ({ server, browser, provider } = p),
  );

  const saved = (page: Page) => page.evaluate(() => fetch('/api/settings/ai').then((r) => r.json() as Promise<Record<string, unknown>>));

  for (const viewport of [
    { width: 1280, height: 900, name: '1280' },
    { width: 390, height: 844, name: '390' },
  ]) {
    it(`at ${viewport.name} px: the typed URL and key list the models and test the connection; Save without typing a model`, async () => {
      const context = await browser.newContext({
        viewport: { width: viewport.width, height: viewport.height },
        ...(viewport.width < 500 ? { hasTouch: true, isMobile: true } : {}),
      });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      await page.goto(`${server.url}/`);
      await signUp(server, page, { email: `form-${viewport.name}-${Date.now()}@example.com` });
      await page.goto(`${server.url}/app/settings#ai-config`);
      const form = page.getByRole('form', { name: 'AI connection' });
      const modelInput = form.getByRole('textbox', { name: 'Default model' });
      await expect.poll(() => form.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');

      // The empty model field does not look filled in: its placeholder is no model id.
      const placeholder = (await modelInput.getAttribute('placeholder')) ?? '';
      expect(placeholder).not.toMatch(/^[\w./:-]+$/);
      expect(placeholder).toMatch(/optional/i);
      expect(await form.getByRole('button', { name: 'Test connection' }).isDisabled()).toBe(true);

      const answers: Promise<string>[] = [];
      page.on('response', (r) => {
        if (r.url().endsWith('/api/settings/ai/probe')) answers.push(r.text());
      });
      const before = provider.requests.length;
      await form.getByLabel('Base URL').fill(provider.url);
      await form.getByLabel('API key').fill('sk-form-key-7781');
      // The provider's models are listed and the connection is tested, nothing saved yet.
      const modelSelect = form.getByRole('combobox', { name: 'Default model' });
      await expect.poll(() => modelSelect.count(), { timeout: 20_000 }).toBe(1);
      await expect.poll(() => page.getByTestId('model-list-note').textContent(), { timeout: 20_000 }).toBe('Connection works: 2 models listed.');
      expect(await modelSelect.locator('option').allTextContents()).toEqual(
        expect.arrayContaining(['Story Large (story-large) · 128,000 tokens', 'story-small · 8,192 tokens']),
      );
      // The list's choice: the first listed model, shown as chosen.
      expect(await modelSelect.inputValue()).toBe('story-large');
      expect(await saved(page)).toEqual({ configured: false });
      expect(provider.requests.slice(before).every((r) => r.path === '/v1/models' && r.headers.authorization === 'Bearer sk-form-key-7781')).toBe(true);

      await form.getByRole('button', { name: 'Test connection' }).click();
      await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/^Connection works: 2 models available\. Not saved yet/);
      // The server's answers never echo the key.
      expect(answers.length).toBeGreaterThanOrEqual(2);
      for (const text of await Promise.all(answers)) expect(text).not.toContain('sk-form-key-7781');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await form.screenshot({ path: screenPath(`settings-ai-unsaved-${viewport.name}`) });

      // A wrong key says so, before anything is saved.
      await form.getByLabel('API key').fill('sk-wrong');
      await expect.poll(() => page.getByTestId('model-list-note').textContent(), { timeout: 20_000 }).toMatch(/^The connection failed: .*API key/);
      await form.getByLabel('API key').fill('sk-form-key-7781');
      await expect.poll(() => page.getByTestId('model-list-note').textContent(), { timeout: 20_000 }).toBe('Connection works: 2 models listed.');

      await form.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toBe('Saved.');
      expect(await saved(page)).toMatchObject({ configured: true, baseUrl: provider.url, defaultModel: 'story-large', keyStatus: 'ok' });
      await context.close();
    }, 90_000);
  }

  it('Save with the model left empty before the list arrives takes the first model the provider lists, and says so', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `form-quick-${Date.now()}@example.com` });
    await page.goto(`${server.url}/app/settings#ai-config`);
    const form = page.getByRole('form', { name: 'AI connection' });
    await expect.poll(() => form.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
    await form.getByLabel('Base URL').fill(provider.url);
    await form.getByLabel('API key').fill('sk-form-key-7781');
    // Saved at once, before the form asked the provider (it waits for typing to settle).
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toBe('Saved with the model story-large, the first your provider lists.');
    expect(await saved(page)).toMatchObject({ configured: true, defaultModel: 'story-large' });
    await page.close();
  }, 60_000);
});
