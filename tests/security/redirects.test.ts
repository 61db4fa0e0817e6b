import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type Collector, startCollector } from '../support/collector.ts';
import { type LoopbackOidc, startLoopbackOidc } from '../support/oidc.ts';
import { freePort } from '../support/redis.ts';
import { Browser as CookieClient, startTestServer, type TestServer } from '../support/server.ts';
import { finishSignUpInPage, signUp } from '../support/sign-up.ts';

/**
 * Item 6 of issue 18: open redirects after login, sign-up and OAuth. Chromium resolves
 * evil.example to a loopback collector, so a page that leaves the platform's origin is counted.
 * The four targets of the acceptance list, as they appear in the address bar.
 */
const TARGETS = ['/%5Cevil.example/', '/%09/evil.example/', '//evil.example', 'https://evil.example'];

describe('returnTo stays on the platform origin', () => {
  let server: TestServer;
  let oidc: LoopbackOidc;
  let collector: Collector;
  let browser: Browser;

  beforeAll(async () => {
    [oidc, collector] = await Promise.all([startLoopbackOidc(), startCollector()]);
    const port = await freePort();
    [server, browser] = await Promise.all([
      startTestServer({ PORT: String(port), PUBLIC_ORIGIN: `http://127.0.0.1:${port}`, ...oidc.env() }, { web: true }),
      // The attacker's site is the collector, on whatever port the browser asks for.
      launchBrowser([`--host-resolver-rules=MAP evil.example 127.0.0.1:${collector.port}`]),
    ]);
    expect((await signUp(server, new CookieClient(server.url), { email: 'redirected@example.com', password: 'long enough pw' })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await oidc?.stop();
    await collector?.close();
  });

  /** Waits until the page has left `from` (or a while has passed) and the navigation settled. */
  async function settled(page: Page, from: string): Promise<URL> {
    await expect.poll(() => new URL(page.url()).pathname !== from, { timeout: 10_000 }).toBe(true).catch(() => {});
    await page.waitForLoadState('load').catch(() => {});
    await page.waitForTimeout(500);
    return new URL(page.url());
  }

  it('the collector is reachable as evil.example (the harness would see an escape)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto('http://evil.example/probe');
    expect(collector.requests.map((r) => r.url)).toContain('/probe');
    await context.close();
    collector.requests.length = 0;
    collector.connections = 0;
  });

  for (const target of TARGETS) {
    it(`after login with returnTo=${target} the page is on the platform's origin`, async () => {
      const context = await browser.newContext();
      const reached = collector.total();
      try {
        const page = await context.newPage();
        await page.goto(`${server.url}/login?returnTo=${target}`);
        await page.locator('input[name=email]').fill('redirected@example.com');
        await page.locator('input[name=password]').fill('long enough pw');
        await page.getByRole('button', { name: 'Sign in' }).click();
        const where = await settled(page, '/login');
        expect(where.origin).toBe(server.url);
        expect(collector.total() - reached).toBe(0);
        // And it really signed in.
        expect(((await (await context.request.get(`${server.url}/api/auth/session`)).json()) as { account: unknown }).account).not.toBeNull();
      } finally {
        await context.close();
      }
    });

    it(`after sign-up with returnTo=${target} the page is on the platform's origin`, async () => {
      const context = await browser.newContext();
      const reached = collector.total();
      try {
        const page = await context.newPage();
        await page.goto(`${server.url}/signup?returnTo=${target}`);
        const email = `signup-${TARGETS.indexOf(target)}@example.com`;
        await page.locator('input[name=email]').fill(email);
        await page.locator('input[name=password]').fill('long enough pw');
        await page.getByRole('button', { name: 'Sign up' }).click();
        // The link mailed to the address finishes the sign-up; "Continue" follows the returnTo.
        await finishSignUpInPage(server, page, email, 'long enough pw');
        const where = await settled(page, '/complete-signup');
        expect(where.origin).toBe(server.url);
        expect(collector.total() - reached).toBe(0);
      } finally {
        await context.close();
      }
    });

    it(`after OAuth with returnTo=${target} the page is on the platform's origin`, async () => {
      const context = await browser.newContext();
      const reached = collector.total();
      try {
        const page = await context.newPage();
        oidc.identity = { sub: `redirect-sub-${TARGETS.indexOf(target)}`, email: 'oauth-redirect@example.com', name: 'Redirected' };
        await page.goto(`${server.url}/api/auth/oauth/google/start?returnTo=${target}`);
        const where = await settled(page, '/api/auth/oauth/google/start');
        expect(where.origin).toBe(server.url);
        expect(where.pathname).toBe('/');
        expect(collector.total() - reached).toBe(0);
      } finally {
        await context.close();
      }
    });
  }
});
