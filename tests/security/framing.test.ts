import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { TestServer } from '../support/server.ts';

/**
 * Issue 28, point 7: another site cannot frame the platform's pages (clickjacking). A page on a
 * second loopback port (another origin) frames the app's pages: none of them renders. The
 * platform's own pages may still frame it, the partner landing page keeps its own policy, and a
 * page load logs no console error (the host policy once carried a directive Chromium does not know).
 */
const PAGES = ['/', '/library', '/index.html', '/play/wld_someworld', '/studio', '/app/settings', '/no-such-page'];

describe('other sites cannot frame the platform', () => {
  let server: TestServer;
  let browser: Browser;
  let other: Server;
  let otherOrigin: string;
  useBrowserPlatform({}, (p) => ({ server, browser } = p));
  beforeAll(async () => {
    // The other site: one page that frames the given platform URLs.
    other = createServer((req, res) => {
      const urls = new URL(req.url ?? '/', 'http://x').searchParams.getAll('u');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>other site</title>${urls.map((u, i) => `<iframe id="f${i}" src="${u}" width="600" height="400"></iframe>`).join('')}`);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => other?.close(resolve));
  });

  /** Whether a frame of `page` shows the web app (its root element rendered something). */
  async function appRendered(page: Page, index: number): Promise<boolean> {
    const element = await page.$(`#f${index}`);
    const frame = await element?.contentFrame();
    if (!frame) return false;
    return frame.evaluate(() => (document.getElementById('root')?.childElementCount ?? 0) > 0).catch(() => false);
  }

  it('every page of the app sends frame-ancestors and does not render in another origin’s frame', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${otherOrigin}/?${PAGES.map((p) => `u=${encodeURIComponent(server.url + p)}`).join('&')}`);
      await page.waitForLoadState('load');
      // Time for a framed app to boot and render, were it allowed to.
      await page.waitForTimeout(1500);
      const rendered: string[] = [];
      for (let i = 0; i < PAGES.length; i++) if (await appRendered(page, i)) rendered.push(PAGES[i]!);
      expect.soft(rendered, 'pages rendered inside another site’s frame').toEqual([]);
    } finally {
      await page.close();
    }
    // Plain and as the build's precompressed copies of the shell (issue 32): the policy is on each.
    for (const path of PAGES) {
      for (const encoding of ['identity', 'br', 'gzip']) {
        const res = await fetch(`${server.url}${path}`, { headers: { accept: 'text/html', 'accept-encoding': encoding } });
        const label = `${path} (${encoding})`;
        expect.soft(res.headers.get('content-encoding') ?? 'identity', label).toBe(encoding);
        expect.soft(res.headers.get('content-type'), label).toMatch(/^text\/html/);
        expect.soft(res.headers.get('content-security-policy'), label).toContain("frame-ancestors 'self'");
        expect.soft(res.headers.get('x-frame-options'), label).toBe('SAMEORIGIN');
      }
    }
  }, 60_000);

  it('a page of the platform’s own origin may frame it (frame-ancestors self)', async () => {
    const page = await browser.newPage();
    try {
      // A same-origin document without a policy of its own (the app's shell allows no frames at all).
      await page.goto(`${server.url}/api/version`);
      await page.evaluate(() => {
        const frame = document.createElement('iframe');
        frame.id = 'f0';
        frame.src = '/library';
        document.body.appendChild(frame);
      });
      await expect.poll(() => appRendered(page, 0), { timeout: 15_000 }).toBe(true);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('the partner landing page keeps its own policy (frames only the partner client, framed by nobody)', async () => {
    const res = await fetch(`${server.url}/demo`);
    expect(res.status).toBe(200);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toMatch(/frame-src http:\/\/127\.0\.0\.1:\d+/);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy.match(/frame-ancestors/g)).toHaveLength(1);
  });

  it('a page load logs no console error', async () => {
    const page = await browser.newPage();
    const logged: string[] = [];
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error') logged.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => logged.push(`${page.url()}: ${e.message}`));
    try {
      for (const path of ['/', '/library', '/dev/sandbox']) {
        await page.goto(`${server.url}${path}`);
        await page.waitForLoadState('networkidle');
      }
      await page.getByTestId('sandbox-frame').waitFor();
      await page.waitForTimeout(500);
      expect(logged).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
