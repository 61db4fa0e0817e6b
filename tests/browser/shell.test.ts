import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { freePort } from '../support/ports.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { screenPath } from '../support/screens.ts';
import { signUp } from '../support/sign-up.ts';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 150 });

/** The small things of the shell: 404s, the favicon, the 390 px menu and the keyboard, /demo on both loopback names. */
describe('the app shell', () => {
  let server: TestServer;
  let browser: Browser;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    [server, browser] = await Promise.all([
      startTestServer({ PORT: String(port), PUBLIC_ORIGIN: `http://localhost:${port}`, DEMO_PARTNER_PORT: String(await freePort()), SAMPLE_WORLDS: '1' }, { web: true }),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('unknown pages answer 404 with the not-found page; bad world ids show it too; the favicon is served', async () => {
    const page = await browser.newPage();
    const res = await page.goto(`${server.url}/no/such/page`);
    expect(res!.status()).toBe(404);
    await page.getByTestId('not-found').waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Library' }).count()).toBe(1);
    const known = await page.goto(`${server.url}/library`);
    expect(known!.status()).toBe(200);
    await page.goto(`${server.url}/worlds/wld_does_not_exist`);
    await page.getByTestId('not-found').waitFor();
    // `/studio/` is my worlds (sign in first), never a blank new world.
    await page.goto(`${server.url}/studio/`);
    await page.waitForURL(/\/login\?returnTo=%2Fstudio$/);
    // Without the platform's provider, the home page says how to connect one's own.
    await page.goto(`${server.url}/`);
    await poll(() => page.getByTestId('ai-hint').textContent()).toContain('Settings, under AI connection');
    const icon = await fetch(`${server.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toContain('image/svg+xml');
    expect(await icon.text()).toContain('<svg');
    expect((await fetch(`${server.url}/api/nothing`, { headers: { accept: 'text/html' } })).status).toBe(404);
    await page.close();
  });

  it('at 390 px the links fold into a menu that opens and closes with the keyboard; the account menu works with arrows and Escape', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const signup = await signUp(server, context, { email: `menu-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Menu Tester' });
    expect(signup.status).toBe(201);
    await page.goto(`${server.url}/`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const library = nav.getByRole('link', { name: 'Library' });
    expect(await library.isVisible()).toBe(false);
    const toggle = page.getByRole('button', { name: 'Menu', exact: true });
    await toggle.focus();
    await page.keyboard.press('Enter');
    await poll(() => library.isVisible()).toBe(true);
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    await page.screenshot({ path: screenPath('menu-390') });
    // Tab reaches the links in order, Enter follows one; the menu closes on navigation.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Library');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/library$/);
    await poll(() => library.isVisible()).toBe(false);

    // The account menu: ArrowDown opens it on its first item, arrows move, Escape closes it back to the button.
    await toggle.click();
    const account = page.getByTestId('account-button');
    await account.focus();
    await page.keyboard.press('ArrowDown');
    const menu = page.getByRole('menu', { name: 'Account' });
    await menu.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Settings');
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Credits and billing');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Sign out');
    await page.keyboard.press('Escape');
    await poll(() => menu.count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('account-button');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/app\/settings#billing$/);
    await context.close();
  });

  it('the library searches and sorts through the address; a tag on a card filters by it', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${server.url}/library`);
    const cards = page.getByRole('list', { name: 'Worlds' }).getByTestId('world-card');
    await poll(() => cards.count()).toBe(3);
    await page.getByLabel('Search', { exact: true }).fill('ashen');
    await page.waitForURL(/\/library\?q=ashen$/);
    await poll(() => cards.count()).toBe(1);
    expect(await cards.first().textContent()).toContain('The Ashen Depths');
    await page.getByLabel('Sort', { exact: true }).selectOption('popular');
    await page.waitForURL(/sort=popular/);
    await cards.first().getByRole('link', { name: '#monsters' }).click();
    await page.waitForURL(/\/library\?tag=monsters$/);
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Library · #monsters');
    await poll(() => page.getByLabel('Search', { exact: true }).inputValue()).toBe('');
    await poll(() => cards.count()).toBe(1);
    // The old search does not come back into the address.
    await page.getByLabel('Sort', { exact: true }).selectOption('updated');
    await page.waitForURL(/\/library\?tag=monsters&sort=updated$/);
    await page.close();
  });

  it('issue 30 B: every page names itself and the world in its title; covers without a picture are drawn, each its own; a guest sees the character by name', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const titled = async (path: string, title: string) => {
      await page.goto(`${server.url}${path}`);
      await poll(() => page.title()).toBe(title);
    };
    await titled('/', 'Home · Yumina');
    await titled('/library?tag=monsters', 'Library · #monsters · Yumina');
    await titled('/worlds/wld_sample_willow_street', 'Rain on Willow Street · Yumina');
    await titled('/login', 'Sign in · Yumina');
    await titled('/signup', 'Create your account · Yumina');
    await titled('/forgot-password', 'Forgot your password? · Yumina');
    await titled('/no/such/page', 'Not found · Yumina');
    await titled('/worlds/wld_does_not_exist', 'Not found · Yumina');

    // A guest plays a sample: the title names the world, the bubbles name the character (not the world).
    await titled('/play/wld_sample_willow_street', 'Play · Rain on Willow Street · Yumina');
    const greeting = page.locator('[data-testid="messages"] li[data-message-id]').first();
    await poll(() => greeting.locator('.chat-name').textContent()).toBe('Mina Park');
    expect(await greeting.locator('.chat-avatar').textContent()).toBe('M');

    // The library: the samples have no cover picture, so each gets one drawn from its id — no letter, no image request.
    const covers: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'image') covers.push(request.url());
    });
    await page.goto(`${server.url}/library`);
    await poll(() => page.title()).toBe('Library · Yumina');
    const drawn = page.getByRole('list', { name: 'Worlds' }).locator('.generated-cover');
    await poll(() => drawn.count()).toBe(3);
    const looks = await drawn.evaluateAll((els) => els.map((el) => ({ text: el.textContent, motif: el.getAttribute('data-motif'), hues: el.getAttribute('data-hues'), label: el.getAttribute('aria-label'), shapes: el.querySelectorAll('svg *').length })));
    expect(looks.map((look) => look.text)).toEqual(['', '', '']);
    expect(new Set(looks.map((look) => `${look.motif} ${look.hues}`)).size).toBe(3);
    for (const look of looks) expect(look.shapes).toBeGreaterThan(3);
    expect(looks.map((look) => look.label).sort()).toEqual(['Rain on Willow Street (no cover)', 'The Ashen Depths (no cover)', '长安夜话 (no cover)']);
    expect(covers.filter((url) => !url.includes('favicon'))).toEqual([]);
    // A long description ends at a word with an ellipsis, never in the middle of one.
    const descriptions = await page.getByRole('list', { name: 'Worlds' }).locator('[data-testid="world-card"] .body > p').allTextContents();
    const willow = descriptions.find((d) => d.startsWith('A slow-burn story'))!;
    expect(willow).toMatch(/ [A-Za-z]+…$/);
    expect(Array.from(willow).length).toBeLessThanOrEqual(140);
    await page.screenshot({ path: screenPath('library-covers-1280') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: screenPath('library-covers-390') });
    await page.setViewportSize({ width: 1280, height: 900 });
    // The same world looks the same on its own page; following a link renames the tab.
    const first = looks.find((look) => look.label === 'The Ashen Depths (no cover)')!;
    await page.getByRole('link', { name: 'The Ashen Depths' }).first().click();
    await poll(() => page.title()).toBe('The Ashen Depths · Yumina');
    expect(await page.locator('.world-head .generated-cover').getAttribute('data-hues')).toBe(first.hues);

    // Signed in: the account's pages.
    await signUp(server, context, { email: `titles-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Titles' });
    await titled('/app/settings', 'Settings · Yumina');
    await titled('/app/models', 'Models · Yumina');
    await titled('/app/inbox', 'Inbox · Yumina');
    await titled('/studio', 'My worlds · Yumina');
    await titled('/studio/new', 'Studio · Untitled world · Yumina');
    await titled('/studio/new/character', 'Character editor · New character · Yumina');
    await titled('/adventure/demo', 'Adventure demo · Yumina');
    await context.close();
  });

  for (const host of ['localhost', '127.0.0.1']) {
    it(`/demo loads the demo game on ${host}`, async () => {
      const page = await browser.newPage();
      page.setDefaultTimeout(20_000);
      await page.goto(`http://${host}:${port}/demo`);
      const frame = async (): Promise<Frame | undefined> => page.frames().find((f) => f.url().includes('host=platform'));
      // The game answers the platform's messages: a guest here (nobody is signed in on this origin).
      await poll(async () => (await frame())?.locator('#player').getAttribute('data-state', { timeout: 1_000 }).catch(() => null)).toBe('guest');
      expect(await page.locator('#overlay').isHidden()).toBe(true);
      await page.close();
    });
  }
});

