import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 44, point 5: on a local install mail goes to the outbox (DATA_DIR/outbox), not to an inbox.
 * The pages that send mail — sign-up, password reset, address change — say where it went and link
 * /dev/outbox, where the message is.
 */
describe('pages that send mail say it went to the local outbox', () => {
  let server: TestServer;
  let browser: Browser;
  useBrowserPlatform({}, (p) => ({ server, browser } = p));

  /** Follows the note's link (it opens a new tab) and answers that tab's text. */
  async function outboxFrom(page: Page): Promise<string> {
    const note = page.getByTestId('outbox-note');
    const link = note.getByRole('link', { name: '/dev/outbox' });
    expect(await link.getAttribute('href')).toBe('/dev/outbox');
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab.waitForLoadState();
    const text = (await tab.locator('body').textContent()) ?? '';
    await tab.close();
    return text;
  }

  it('sign-up: "check your inbox" says the mail is in /dev/outbox, and the link shows it (1280 and 390 px)', async () => {
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 844 }, ...(width < 500 ? { hasTouch: true, isMobile: true } : {}) });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      const email = `outbox-${width}-${Date.now()}@example.com`;
      await page.goto(`${server.url}/signup`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Display name').fill('Outbox Reader');
      await page.getByLabel('Password').fill('a strong password');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByTestId('signup-sent').waitFor();
      const note = page.getByTestId('outbox-note');
      await expect.poll(() => note.textContent(), { timeout: 20_000 }).toMatch(/does not send real mail.*local outbox.*Open \/dev\/outbox/);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: screenPath(`signup-outbox-${width}`) });
      // The mail queue sends shortly after the answer: the outbox shows the message once it has.
      await expect.poll(() => outboxFrom(page), { timeout: 15_000 }).toMatch(new RegExp(`${email.replace(/[.+]/g, '\\$&')}\\s*Finish creating your Yumina account`));
      await context.close();
    }
  }, 90_000);

  it('password reset and address change say it too', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const account = await signUp(server, page, { email: `reset-${Date.now()}@example.com` });

    // Address change, from Settings → Account.
    await page.goto(`${server.url}/app/settings#account`);
    await page.getByText('Change the address').click();
    const form = page.getByRole('form', { name: 'Change the e-mail address' });
    const newEmail = `moved-${Date.now()}@example.com`;
    await form.getByLabel('New address').fill(newEmail);
    await form.getByLabel('Your password').fill(account.password);
    await form.getByRole('button', { name: 'Send a link to the new address' }).click();
    await expect.poll(() => page.getByTestId('pending-email').count(), { timeout: 20_000 }).toBe(1);
    expect(await page.getByTestId('outbox-note').count()).toBe(1);
    await expect.poll(() => outboxFrom(page), { timeout: 15_000 }).toContain(`${newEmail}Confirm your new e-mail address for Yumina`);

    // Password reset, signed out.
    const guest = await browser.newContext();
    const resetPage = await guest.newPage();
    resetPage.setDefaultTimeout(30_000);
    await resetPage.goto(`${server.url}/forgot-password`);
    await resetPage.getByLabel('E-mail').fill(account.email);
    await resetPage.getByRole('button', { name: 'Send the link' }).click();
    await resetPage.getByTestId('forgot-sent').waitFor();
    await expect.poll(() => resetPage.getByTestId('outbox-note').count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => outboxFrom(resetPage), { timeout: 15_000 }).toContain(`${account.email}Reset your Yumina password`);
    await guest.close();
    await context.close();
  }, 90_000);
});
