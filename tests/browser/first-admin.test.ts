import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { screenPath } from '../support/screens.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp, signUpLink } from '../support/sign-up.ts';

/**
 * Issue 44, point 2: publishing on a fresh install no longer waits for nobody. On the embedded
 * default (FIRST_ACCOUNT_ADMIN, on there; set here on the real PostgreSQL of the tests) the first
 * account made becomes the administrator and is told so; an author whose world is held is told it
 * waits for an administrator's review and, when the install has none, that nobody can give it and
 * how one is made. At 1280 px and at 390 px (touch).
 */

const VIEWPORTS = [
  { width: 1280, height: 900, name: '1280' },
  { width: 390, height: 844, name: '390' },
] as const;

function contextAt(browser: Browser, viewport: (typeof VIEWPORTS)[number]): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: viewport.width, height: viewport.height }, ...(viewport.width < 500 ? { hasTouch: true, isMobile: true } : {}) });
}

/** Signs up in the page and follows the mailed link; stays on the page that finished it. */
async function signUpInPage(server: TestServer, page: Page, email: string): Promise<void> {
  await page.goto(`${server.url}/signup`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Display name').fill(email.split('@')[0]!);
  await page.getByLabel('Password').fill('a strong password');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByTestId('signup-sent').waitFor();
  const link = await signUpLink(server, email.toLowerCase(), 1);
  await page.goto(`${server.url}${link.pathname}${link.hash}`);
  await page.getByLabel('Password').fill('a strong password');
  await page.getByRole('button', { name: 'Finish creating my account' }).click();
  await page.getByTestId('signup-done').waitFor();
}

/** A world created and submitted through the API as the page's account; the studio opened on it. */
async function submitWorld(server: TestServer, page: Page, name: string): Promise<string> {
  const id = await page.evaluate(async (name) => {
    const created = (await (
      await fetch('/api/worlds', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ world: { version: '20.0.0', name } }) })
    ).json()) as { id: string };
    await fetch(`/api/worlds/${created.id}/publish`, { method: 'POST' });
    return created.id;
  }, name);
  await page.goto(`${server.url}/studio/${id}`);
  await expect.poll(() => page.getByTestId('world-status').textContent(), { timeout: 20_000 }).toBe('Held for review');
  return id;
}

describe('a fresh install: the first account is the administrator', () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer({ FIRST_ACCOUNT_ADMIN: '1' }, { web: true }), launchBrowser()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('at 1280 px the first account is told it is the administrator; at 390 px the second is not, and its held world waits for that administrator', async () => {
    const first = await contextAt(browser, VIEWPORTS[0]);
    const page = await first.newPage();
    page.setDefaultTimeout(30_000);
    await signUpInPage(server, page, `first-${Date.now()}@example.com`);
    const notice = page.getByTestId('first-administrator');
    expect(await notice.textContent()).toMatch(/You are this installation’s administrator/);
    expect(await notice.getByRole('link', { name: 'review queue' }).getAttribute('href')).toBe('/admin/reviews');
    await page.screenshot({ path: screenPath('first-administrator-1280') });
    expect(await page.evaluate(() => fetch('/api/auth/session').then((r) => r.json() as Promise<{ account: { isAdmin: boolean } }>))).toMatchObject({
      account: { isAdmin: true },
    });

    const second = await contextAt(browser, VIEWPORTS[1]);
    const author = await second.newPage();
    author.setDefaultTimeout(30_000);
    await signUpInPage(server, author, `second-${Date.now()}@example.com`);
    expect(await author.getByTestId('first-administrator').count()).toBe(0);
    await author.screenshot({ path: screenPath('first-administrator-second-390') });
    await submitWorld(server, author, 'Waits for the administrator');
    const wait = author.getByTestId('review-wait');
    await expect.poll(() => wait.textContent(), { timeout: 20_000 }).toMatch(/^Waiting for an administrator’s review\./);
    // An administrator exists: nothing says otherwise.
    expect(await author.getByTestId('no-administrator').count()).toBe(0);
    expect(await author.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await first.close();
    await second.close();
  }, 120_000);
});

describe('an install without an administrator (first-account rule off)', () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    // On PostgreSQL from DATABASE_URL the rule is off by default.
    [server, browser] = await Promise.all([startTestServer({}, { web: true }), launchBrowser()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.name} px the author of a held world is told nobody can review it yet, and how an administrator is made`, async () => {
      const context = await contextAt(browser, viewport);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      await page.goto(`${server.url}/`);
      await signUp(server, page, { email: `alone-${viewport.name}-${Date.now()}@example.com` });
      expect(await page.evaluate(() => fetch('/api/auth/session').then((r) => r.json() as Promise<{ account: { isAdmin: boolean } }>))).toMatchObject({
        account: { isAdmin: false },
      });
      await submitWorld(server, page, `Nobody reviews ${viewport.name}`);
      const wait = page.getByTestId('review-wait');
      await expect.poll(() => wait.textContent(), { timeout: 20_000 }).toMatch(/^Waiting for an administrator’s review\./);
      const none = page.getByTestId('no-administrator');
      expect(await none.textContent()).toMatch(/no administrator yet.*npm run admin -- grant <e-mail>/);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await wait.scrollIntoViewIfNeeded();
      await page.screenshot({ path: screenPath(`review-wait-${viewport.name}`) });
      await context.close();
    }, 90_000);
  }
});
