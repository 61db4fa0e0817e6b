import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { freePort } from '../support/ports.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';

/**
 * Issue 35's journey in Chromium, with the embedded default's mail: sign up, verify the address
 * from the outbox page, forget the password in another browser, reset it from the outbox, and the
 * first browser's login is gone. Screenshots of each page at 1280 and 390 px.
 */
/** Links in mails point at PUBLIC_ORIGIN: the server's own address here. */
const port = await freePort();

describe('account recovery in a real browser, with the outbox', () => {
  let server: TestServer;
  let browser: Browser;
  useBrowserPlatform({ env: { PORT: String(port), PUBLIC_ORIGIN: `http://127.0.0.1:${port}` } }, (p) => ({ server, browser } = p));

  const shoot = async (page: Page, name: string) => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: screenPath(`${name}-${width}`), fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  /** Opens the newest mail with this subject on /dev/outbox and follows its link. */
  async function followMail(page: Page, subject: string, linkPath: string) {
    await page.goto(`${server.url}/dev/outbox`);
    await page.getByRole('link', { name: subject }).first().click();
    await page.getByTestId('mail-text').waitFor();
    await page.locator(`[data-testid="mail-text"] a[href*="${linkPath}#token="]`).click();
  }

  it('sign up → verify from the outbox → forget → reset → the old login is gone', async () => {
    const email = `journey-${Date.now()}@example.com`;
    const first = await browser.newContext();
    const page = await first.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/signup`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Display name').fill('Journey');
    await page.getByLabel('Password').fill('the first password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    // Verify-first: the page says to check the inbox, and nobody is signed in yet.
    await expect.poll(() => page.getByTestId('signup-sent').textContent()).toContain(email);
    expect(((await (await page.request.get(`${server.url}/api/auth/session`)).json()) as { account: unknown }).account).toBeNull();
    await shoot(page, 'signup-sent');
    await page.getByRole('button', { name: 'Send the mail again' }).click();
    await page.getByRole('status').filter({ hasText: 'Sent again' }).waitFor();

    await expect.poll(async () => (await fetch(`${server.url}/dev/outbox`)).text(), { timeout: 10_000 }).toContain('Finish creating your Yumina account');
    await page.goto(`${server.url}/dev/outbox`);
    await shoot(page, 'outbox');
    // The newest mail (the resend replaced the first link).
    await followMail(page, 'Finish creating your Yumina account', '/complete-signup');
    // The link alone is not enough: the password chosen at sign-up finishes it.
    await page.getByLabel('Password').fill('not the first password');
    await page.getByRole('button', { name: 'Finish creating my account' }).click();
    await expect.poll(() => page.locator('#signup-wrong-password').textContent()).toContain('not the password you chose');
    await page.getByLabel('Password').fill('the first password');
    await page.getByRole('button', { name: 'Finish creating my account' }).click();
    await expect.poll(() => page.getByTestId('signup-done').textContent()).toBe(`Welcome: your account for ${email} is ready, and you are signed in.`);
    expect(new URL(page.url()).hash).toBe(''); // the token left the address bar
    await shoot(page, 'complete-signup');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/app\/settings$/);
    await expect.poll(() => page.getByTestId('account-email').textContent()).toBe(`${email} verified`);
    // The profile: name, username and a picture (resized by the server); the list of logins; the data archive.
    const profile = page.getByRole('form', { name: 'Profile' });
    await profile.getByLabel('Display name').fill('Journey Keeper');
    await profile.getByLabel('Username').fill('journey_keeper');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await expect.poll(() => page.getByTestId('display-name').textContent()).toBe('Journey Keeper');
    const png = Buffer.from(await (await import('sharp')).default({ create: { width: 640, height: 480, channels: 3, background: '#7a4fd0' } }).png().toBuffer());
    await page.locator('#profile input[type=file]').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png });
    await page.getByTestId('profile-picture').waitFor();
    // The element shows before its picture has loaded: wait for the load, then check what came.
    await expect.poll(() => page.getByTestId('profile-picture').evaluate((img: HTMLImageElement) => img.complete)).toBe(true);
    expect(await page.getByTestId('profile-picture').evaluate((img: HTMLImageElement) => [img.complete, img.naturalWidth])).toEqual([true, 256]);
    await expect.poll(() => page.getByTestId('logins').getByRole('listitem').count()).toBe(1);
    expect(await page.getByTestId('logins').textContent()).toContain('this device');
    await page.getByRole('button', { name: 'Download my data' }).click();
    await page.getByRole('link', { name: /^Download \(\d+ KB\)$/ }).waitFor({ timeout: 30_000 });
    await page.getByRole('heading', { name: 'Profile', exact: true }).scrollIntoViewIfNeeded();
    await shoot(page, 'settings-account');

    // Another browser: forgot the password.
    const second = await browser.newContext();
    const other = await second.newPage();
    other.setDefaultTimeout(30_000);
    await other.goto(`${server.url}/login`);
    await other.getByRole('link', { name: 'Forgot your password?' }).click();
    await other.getByLabel('E-mail').fill(email);
    await other.getByRole('button', { name: 'Send the link' }).click();
    await expect.poll(() => other.getByTestId('forgot-sent').textContent()).toMatch(/If an account uses this address, we sent it a link/);
    await shoot(other, 'forgot-password');
    await expect.poll(async () => (await fetch(`${server.url}/dev/outbox`)).text(), { timeout: 10_000 }).toContain('Reset your Yumina password');
    await followMail(other, 'Reset your Yumina password', '/reset-password');
    await other.getByLabel('New password', { exact: true }).waitFor();
    await shoot(other, 'reset-password');
    await other.getByLabel('New password', { exact: true }).fill('the second password');
    await other.getByLabel('New password again').fill('the second password');
    await other.getByRole('button', { name: 'Set the new password' }).click();
    await other.waitForURL(/\/app\/settings\?password=reset$/);
    await expect.poll(() => other.getByText('Your new password is set, and every other device was signed out.').count()).toBe(1);

    // The first browser's login is gone: its settings send it to sign in.
    await page.goto(`${server.url}/app/settings`);
    await page.waitForURL(/\/login\?returnTo=/);
    expect(await (await page.request.get(`${server.url}/api/auth/session`)).json()).toMatchObject({ account: null });
    // The old password no longer works; the new one does.
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('the first password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The e-mail or password is wrong.');
    await page.getByLabel('Password').fill('the second password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/app\/settings/);

    // The same link again: a clear page that offers a new one.
    await followMail(other, 'Reset your Yumina password', '/reset-password');
    await expect.poll(() => other.getByTestId('link-refused').textContent()).toMatch(/already used/);
    await other.getByRole('link', { name: 'Send a new link' }).waitFor();
    await shoot(other, 'reset-password-used');
    await first.close();
    await second.close();
  }, 120_000);
});
