import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld } from '../support/player-world.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 30 E, found by clicking: the adventure and the partner demo are reachable from home, a
 * guest is offered the guest preview when the platform allows it, The Ashen Depths' interface
 * greets on first open and keeps its input in view at every height and at 390 px, and no page logs
 * a console error.
 */

/** Console errors and uncaught exceptions of a page, by the address it was on. */
function watch(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return errors;
}

/** Whether the element's box lies inside the viewport (and inside its frame's, for a frame's element). */
async function inView(page: Page, frameSelector: string, selector: string): Promise<boolean> {
  const frame = await (await page.$(frameSelector))!.contentFrame();
  const box = await (await frame!.$(selector))!.boundingBox();
  const frameBox = await (await page.$(frameSelector))!.boundingBox();
  const viewport = page.viewportSize()!;
  if (!box || !frameBox) return false;
  return box.y >= frameBox.y - 1 && box.y + box.height <= frameBox.y + frameBox.height + 1 && box.y + box.height <= viewport.height + 1 && box.x >= 0 && box.x + box.width <= viewport.width + 1;
}

describe('issue 30 E: found by clicking', () => {
  let server: TestServer;
  let browser: Browser;
  let official: FakeOpenAi;
  let worldId: string;

  // Guests may play (guest turns on the platform's provider); local mode serves the demo partner.
  beforeAll(async () => {
    official = await startFakeOpenAi({ apiKey: 'platform-key' });
    [server, browser] = await Promise.all([
      startTestServer(
        { OFFICIAL_AI_BASE_URL: official.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform/story', GUEST_PREVIEW_TURNS_PER_HOUR: '5' },
        { web: true },
      ),
      launchBrowser(),
    ]);
    // A published Ashen Depths, by an author.
    const author = await browser.newPage();
    await author.goto(`${server.url}/`);
    await signUp(server, author);
    worldId = await author.evaluate(async (world) => {
      const post = (url: string, body?: unknown) =>
        fetch(url, { method: 'POST', headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((r) => r.json());
      return ((await post('/api/worlds', { world })) as { id: string }).id;
    }, sampleWorld('ashen-depths'));
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    expect(await author.evaluate((id) => fetch(`/api/worlds/${id}/publish`, { method: 'POST' }).then((r) => r.status), worldId)).toBeLessThan(300);
    await author.close();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await official?.close();
  });

  it('a guest finds the adventure, the partner game and the guest preview from home and the world page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const errors = watch(page);
    await page.goto(`${server.url}/`);
    const more = page.getByTestId('more-to-try');
    await expect.poll(() => more.count(), { timeout: 20_000 }).toBe(1);
    expect(await more.getByTestId('guest-preview-offer').count()).toBe(1);
    const partner = more.getByRole('link', { name: /partner game/ });
    expect(await partner.count()).toBeGreaterThan(0);
    const partnerPath = (await partner.first().getAttribute('href'))!;
    // The adventure board, by clicking.
    await more.getByRole('link', { name: 'The adventure board' }).click();
    await page.waitForURL(/\/adventure\/demo$/);
    await expect.poll(() => page.locator('h1, h2').first().textContent(), { timeout: 20_000 }).toMatch(/\S/);
    // The partner game's landing page answers.
    expect((await page.request.get(`${server.url}${partnerPath}`)).status()).toBe(200);
    // The world page offers the guest preview; it opens the world's interface in guest-preview mode.
    await page.goto(`${server.url}/worlds/${worldId}`);
    const guestPlay = page.getByTestId('guest-play');
    await expect.poll(() => guestPlay.count(), { timeout: 20_000 }).toBe(1);
    await guestPlay.click();
    await page.waitForURL(new RegExp(`/play/${worldId}$`));
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);
    expect(await page.getByTestId('guest-preview').count()).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('The Ashen Depths greets on first open and keeps its input in view at every height and at 390 px', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const errors = watch(page);
    await page.goto(`${server.url}/`);
    await signUp(server, page);
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);
    // The greeting, on first open.
    expect(await frame.getByTestId('ashen-greeting').textContent()).toMatch(/Ashen Depths/);
    // Many turns: the input stays in the frame's view, in the page's frame and in immersive mode, at each size.
    for (let i = 0; i < 8; i++) {
      // As a player would: the next message once Send is back (the turn ends when the stored reply is
      // read back, a moment after its streamed text shows; an Enter before that sends nothing).
      await expect.poll(() => frame.getByRole('button', { name: 'Send' }).isEnabled(), { timeout: 20_000 }).toBe(true);
      official.enqueue({ kind: 'completion', content: `Room ${i}. ${'The corridor goes on, damp and dark. '.repeat(6)}` });
      await frame.getByLabel('Message').fill(`I walk on (${i})`);
      await frame.getByLabel('Message').press('Enter');
      await expect.poll(() => frame.locator('[data-yumina="messages"]').textContent(), { timeout: 20_000 }).toContain(`Room ${i}.`);
    }
    // the newest reply is in view (the list scrolls to it)
    const frameHandle = await (await page.$('iframe[title="World interface"]'))!.contentFrame();
    expect(await frameHandle!.$eval('[data-yumina="messages"]', (el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(4);
    const sizes = [
      { width: 1280, height: 900 },
      { width: 1280, height: 600 },
      { width: 390, height: 844 },
      { width: 390, height: 640 },
    ];
    for (const size of sizes) {
      await page.setViewportSize(size);
      for (const immersive of [false, true]) {
        if (immersive) await page.getByRole('button', { name: 'Immersive mode' }).click();
        await page.locator('iframe[title="World interface"]').scrollIntoViewIfNeeded();
        await expect.poll(() => inView(page, 'iframe[title="World interface"]', 'textarea[aria-label="Message"]'), { timeout: 5_000 }).toBe(true);
        if (immersive) await page.getByRole('button', { name: 'Leave immersive mode' }).click();
      }
    }
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);

  it('no page logs a console error (signed out and signed in, every main page)', async () => {
    const guestPages = ['/', '/library', '/login', '/signup', '/forgot-password', '/studio', `/worlds/${worldId}`, `/play/${worldId}`, '/adventure/demo', '/no-such-page'];
    const memberPages = ['/', '/library', '/studio', '/studio/new', `/worlds/${worldId}`, `/play/${worldId}`, '/app/settings', '/app/inbox', '/app/models', '/adventure/demo'];
    const visit = async (context: BrowserContext, paths: string[]) => {
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      const errors = watch(page);
      for (const path of paths) {
        await page.goto(`${server.url}${path}`, { waitUntil: 'load' });
        // every page settles its reads (a request that fails logs its error then)
        await page.waitForLoadState('networkidle').catch(() => {});
        await expect.poll(() => page.locator('main, #main, h1, h2').count(), { timeout: 20_000 }).toBeGreaterThan(0);
      }
      await page.close();
      return errors;
    };
    const guest = await browser.newContext();
    // The 404 page is a 404 answer: Chromium logs "Failed to load resource" for it, which is the answer's status, not a page error.
    const guestErrors = (await visit(guest, guestPages)).filter((e) => !(e.includes('/no-such-page') && /status of 404/.test(e)));
    await guest.close();
    const member = await browser.newContext();
    const signIn = await member.newPage();
    await signIn.goto(`${server.url}/`);
    await signUp(server, signIn);
    await signIn.close();
    const memberErrors = await visit(member, memberPages);
    await member.close();
    expect([...guestErrors, ...memberErrors]).toEqual([]);
  }, 180_000);
});
