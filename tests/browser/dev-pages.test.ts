import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { TestServer } from '../support/server.ts';

describe('development pages in production mode', () => {
  let server: TestServer;
  let browser: Browser;

  useBrowserPlatform({ env: { NODE_ENV: 'production' } }, (p) => ({ server, browser } = p));

  it('/dev/sandbox is a 404, whether requested or reached by in-app navigation', async () => {
    const direct = await fetch(`${server.url}/dev/sandbox`, { headers: { accept: 'text/html' } });
    expect(direct.status).toBe(404);
    expect((await direct.json()).error.code).toBe('NOT_FOUND');
    // Other client-side pages are still served.
    expect((await fetch(`${server.url}/library`, { headers: { accept: 'text/html' } })).status).toBe(200);

    const page = await browser.newPage();
    const response = await page.goto(`${server.url}/dev/sandbox`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('iframe').count()).toBe(0);

    // From inside the app (no page load): the route asks the server first and shows "not found".
    await page.goto(`${server.url}/`);
    await page.evaluate(() => {
      window.history.pushState({}, '', '/dev/sandbox');
      window.dispatchEvent(new PopStateEvent('popstate'));
    });
    await expect.poll(() => page.getByTestId('not-found').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('iframe').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('/dev/outbox (the local mail outbox) is a 404 too', async () => {
    const res = await fetch(`${server.url}/dev/outbox`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('NOT_FOUND');
  });

  it('a page that sends mail says it stays in the outbox folder, without a link to the page that is not served (issue 44, point 5)', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/forgot-password`);
    await page.getByLabel('E-mail').fill(`nobody-${Date.now()}@example.com`);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByTestId('forgot-sent').waitFor();
    const note = page.getByTestId('outbox-note');
    await expect.poll(() => note.textContent(), { timeout: 20_000 }).toMatch(/local outbox.*outbox folder \(MAIL_OUTBOX_DIR\)/);
    expect(await note.getByRole('link').count()).toBe(0);
    await page.close();
  }, 60_000);
});
