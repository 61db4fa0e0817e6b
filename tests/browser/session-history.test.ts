import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { fillLongSession } from '../support/long-session.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/** Issue 24: a 2,000-message session opens on its newest page; scrolling up loads every earlier one. */
describe('a long session in the player', () => {
  let server: TestServer;
  let browser: Browser;

  useBrowserPlatform({}, (p) => ({ server, browser } = p));

  it('opens at the newest of 2,000 messages and scrolls back through all of them, in order, once each', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/`);
    const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
    await signUp(server, page, { email: `history-${Date.now()}@example.com`, password: 'long enough pw' });
    const { worldId, sessionId } = await page.evaluate(async (world) => {
      const post = (url: string, body?: unknown) =>
        fetch(url, { method: 'POST', headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((r) => r.json());
      const created = (await post('/api/worlds', { world })) as { id: string };
      const session = (await post(`/api/worlds/${created.id}/sessions`)) as { session: { id: string } };
      return { worldId: created.id, sessionId: session.session.id };
    }, world);
    await fillLongSession(server.ctx.db.primary, sessionId, 2000);

    // Count the responses of the session route: the opening reads one page, not the history.
    const sizes: number[] = [];
    page.on('response', (res) => {
      if (new URL(res.url()).pathname === `/api/sessions/${sessionId}`) void res.body().then((b) => sizes.push(b.length), () => {});
    });
    await page.goto(`${server.url}/play/${worldId}`);
    const items = page.locator('[data-testid="messages"] li[data-role]');
    await expect.poll(() => items.count(), { timeout: 30_000 }).toBe(50);
    expect(await items.last().textContent()).toContain('#1999 ');
    expect(await items.first().textContent()).toContain('#1950 ');
    await expect.poll(() => sizes.length).toBeGreaterThan(0);
    expect(Math.max(...sizes)).toBeLessThan(100 * 1024);
    // It opens scrolled to the end.
    const atBottom = await page.locator('[data-testid="messages"]').evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 5);
    expect(atBottom).toBe(true);

    // Scroll to the top again and again: each time the page before loads, the place is kept.
    let count = 50;
    for (let round = 0; round < 40 && count < 2000; round++) {
      await page.locator('[data-testid="messages"]').evaluate((el) => {
        el.scrollTop = 0;
        el.dispatchEvent(new Event('scroll'));
      });
      await expect.poll(() => items.count(), { timeout: 20_000 }).toBeGreaterThan(count);
      const next = await items.count();
      const top = await page.locator('[data-testid="messages"]').evaluate((el) => el.scrollTop);
      if (next < 2000) expect(top).toBeGreaterThan(0);
      count = next;
    }
    expect(count).toBe(2000);
    const numbers = await items.evaluateAll((lis) => lis.map((li) => Number(/#(\d+) /.exec(li.textContent ?? '')?.[1])));
    expect(numbers).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    await expect.poll(() => page.locator('[data-testid="earlier"]').count()).toBe(0);
    await page.close();
  }, 300_000);
});
