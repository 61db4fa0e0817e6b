import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';
import { screenPath } from '../support/screens.ts';
import { seriousViolations } from '../support/axe.ts';

/**
 * axe-core on every main page of the app, at 1280 px and at 390 px (with the menu open), in light
 * and dark: no serious or critical violation. Pages are loaded with real data: sample worlds, a
 * world in the studio, a review waiting in the queue, a notification in the inbox, credits.
 */
describe('accessibility (axe-core)', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  let context: BrowserContext;
  let worldId = '';
  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    [server, browser] = await Promise.all([
      startTestServer({ SAMPLE_WORLDS: '1', OFFICIAL_AI_BASE_URL: provider.url, OFFICIAL_AI_API_KEY: 'platform-key' }, { web: true }),
      launchBrowser(),
    ]);
    context = await browser.newContext();
    const api = context.request;
    const signup = await signUp(server, context, { email: `a11y-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Ally' });
    const accountId = signup.account.id;
    // A persona, so that Settings shows its avatar controls (issue 30 B).
    await api.post(`${server.url}/api/personas`, { data: { name: 'Ally' } });
    const create = async (name: string) =>
      ((await (await api.post(`${server.url}/api/worlds`, { data: { world: { version: '20.0.0', name, description: `${name}, a test world.`, customTags: ['test'] } } })).json()) as { id: string }).id;
    // One work approved (a notification in the inbox), one waiting in the review queue.
    const approved = await create('Approved world');
    await api.post(`${server.url}/api/worlds/${approved}/publish`);
    await server.ctx.db.primary.query('update accounts set is_admin = true where id = $1', [accountId]);
    const queue = (await (await api.get(`${server.url}/api/admin/reviews`)).json()) as { reviews: { id: string }[] };
    await api.post(`${server.url}/api/admin/reviews/${queue.reviews[0]!.id}/approve`, { data: {} });
    await api.put(`${server.url}/api/admin/review-rule`, { data: { holdFirstPublication: true, holdAllPublications: true } });
    worldId = await create('Waiting world');
    await api.post(`${server.url}/api/worlds/${worldId}/publish`);
  }, 120_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.stop();
    await provider?.close();
  });

  const pages = () => [
    { path: '/', ready: 'Newest' },
    { path: '/library', ready: 'Rain on Willow Street' },
    { path: '/worlds/wld_sample_willow_street', ready: 'Update history' },
    { path: '/play/wld_sample_willow_street', ready: 'Send' },
    { path: `/studio/${worldId}`, ready: 'Overview' },
    // The character editor (issue 30 D), new and of a saved world.
    { path: '/studio/new/character', ready: 'Add a lore entry' },
    { path: `/studio/${worldId}/character`, ready: 'Add an alternate greeting' },
    { path: '/app/settings', ready: 'Credits and billing' },
    { path: '/app/inbox', ready: 'Approved: Approved world is published' },
    { path: '/admin/reviews', ready: 'Waiting world' },
    { path: '/studio', ready: 'In review' },
    { path: '/admin/credits', ready: 'Reason (kept in the ledger)' },
    { path: '/no/such/page', ready: 'Not found' },
    { path: '/forgot-password', ready: 'Send the link' },
    { path: '/reset-password', ready: 'Send a new link' },
    { path: '/verify-email', ready: 'Send a new link' },
    { path: '/complete-signup', ready: 'Send a new link' },
  ];

  // Each page is loaded once per width and checked in light and then dark: the colour scheme is a
  // CSS media query (styles.css), so switching it re-styles the loaded page without a reload.
  for (const width of [1280, 390]) {
    it(`no serious or critical violation on the main pages at ${width} px, in light and in dark`, async () => {
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      await page.setViewportSize({ width, height: 900 });
      const found: Record<string, string[]> = {};
      for (const p of pages()) {
        await page.emulateMedia({ colorScheme: 'light' });
        await page.goto(`${server.url}${p.path}`);
        await page.getByText(p.ready).first().waitFor();
        if (width < 760) {
          await page.getByRole('button', { name: 'Menu', exact: true }).click();
          await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Library' }).waitFor();
        }
        if (p.path.startsWith('/admin/reviews')) await page.getByRole('button', { name: 'View world and changes' }).first().click();
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(scheme === 'dark');
          if (p.path === '/' && width === 1280 && scheme === 'dark') await page.screenshot({ path: screenPath('home-dark') });
          const violations = await seriousViolations(page);
          if (violations.length) found[`${p.path} (${scheme})`] = violations;
        }
      }
      expect(found).toEqual({});
      await page.close();
    }, 240_000);
  }
});
