import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../support/server.ts';
import { screenPath } from '../support/screens.ts';
import { finishSignUpInPage, signUp } from '../support/sign-up.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';

describe('settings in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  useBrowserPlatform({}, (p) => ({ server, browser } = p));

  it('signs up, saves an AI connection on /app/settings#ai-config, reloads and sees it masked', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(40_000);
    const email = `browser-${Date.now()}@example.com`;
    await page.goto(`${server.url}/signup?returnTo=${encodeURIComponent('/app/settings#ai-config')}`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Display name').fill('Browser Player');
    await page.getByLabel('Password').fill('a strong password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await finishSignUpInPage(server, page, email, 'a strong password');
    await page.waitForURL(/\/app\/settings#ai-config$/);
    await expect.poll(() => page.getByTestId('display-name').textContent()).toBe('Browser Player');

    const form = page.getByRole('form', { name: 'AI connection' });
    await form.getByLabel('Base URL').fill('https://llm.example/v1');
    await form.getByLabel('Default model').fill('story-model-1');
    await form.getByLabel('API key').fill('sk-secret-abcd1234WXYZ');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Saved.');

    await page.reload();
    await expect.poll(() => page.getByTestId('masked-key').textContent()).toMatch(/••••WXYZ/);
    expect(await form.getByLabel('Default model').inputValue()).toBe('story-model-1');
    expect(await form.getByLabel('API key').inputValue()).toBe('');
    const html = await page.content();
    expect(html).not.toContain('sk-secret-abcd1234WXYZ');

    // The key belongs to its base URL: another hosted URL without a key is refused and says why …
    await form.getByLabel('Base URL').fill('https://elsewhere.example/v1');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/previous base URL/);
    // … and a local (http) one is saved with the key removed, asking for it again.
    await form.getByLabel('Base URL').fill('http://ollama.example:11434/v1');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/stored API key was removed.*Enter the key for this base URL/);
    expect(await page.getByTestId('masked-key').count()).toBe(0);
    await page.close();
  }, 90_000);

  it('deletes the account only with its password, from a dialog (issue 43, point 7)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    const { account } = await signUp(server, page, { password: 'delete me carefully', displayName: 'Leaving Player' });
    await page.goto(`${server.url}/app/settings#delete-account`);
    await page.getByRole('button', { name: 'Delete my account…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' });
    await dialog.waitFor();
    await page.screenshot({ path: screenPath('delete-account-1280') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: screenPath('delete-account-390') });

    // Cancel closes it and changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Delete my account…' }).click();
    await dialog.getByLabel('Your password').fill('not my password');
    await dialog.getByRole('button', { name: 'Delete my account' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/password is wrong/);
    expect((await server.ctx.db.primary.query('select 1 from accounts where id = $1', [account.id])).rowCount).toBe(1);

    await dialog.getByLabel('Your password').fill('delete me carefully');
    await dialog.getByRole('button', { name: 'Delete my account' }).click();
    await page.waitForURL(`${server.url}/`);
    expect((await server.ctx.db.primary.query('select 1 from accounts where id = $1', [account.id])).rowCount).toBe(0);
    const session = (await (await page.request.get(`${server.url}/api/auth/session`)).json()) as { account: unknown };
    expect(session.account).toBeNull();
    await context.close();
  }, 90_000);
});
