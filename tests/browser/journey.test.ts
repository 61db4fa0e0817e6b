import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../containers/api/src/web.ts';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { gradientPng } from '../support/png.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { finishSignUpInPage } from '../support/sign-up.ts';
import { screenPath } from '../support/screens.ts';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 150 });
/** Real image bytes (the server checks the type by content, not by name). */
const PNG = gradientPng(320, 180, [244, 162, 54], [120, 40, 140]);

/**
 * The whole journey of issue 22 on a real server (PostgreSQL, Redis, the built web app) with the
 * fake OpenAI-compatible provider as the platform's own provider: a guest finds a sample world,
 * signs up, plays on platform credits, connects their own provider, builds a world with a cover and
 * tags, playtests and submits it; an administrator made by `npm run admin -- grant` approves it
 * after seeing its diff; the author is notified; another player finds and plays it.
 */
describe('the web app journey', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    [server, browser] = await Promise.all([
      startTestServer(
        { SAMPLE_WORLDS: '1', OFFICIAL_AI_BASE_URL: provider.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform-model', WELCOME_CREDITS: '100' },
        { web: true },
      ),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await provider?.close();
  });

  const contexts: BrowserContext[] = [];
  afterAll(async () => {
    for (const c of contexts) await c.close();
  });
  async function newPage(width = 1280): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('dialog', (d) => void d.accept());
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: screenPath(name), fullPage: false });
  async function signUp(page: Page, email: string, name: string) {
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Display name').fill(name);
    await page.getByLabel('Password').fill('a strong password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    // Verify-first: the account is made by the link mailed to the address (read from the outbox).
    await finishSignUpInPage(server, page, email, 'a strong password');
  }
  /** Sends one message in the player and waits for the provider's reply to show. */
  async function playTurn(page: Page, text: string, reply: string) {
    provider.enqueue({ kind: 'completion', content: reply, usage: { prompt_tokens: 400, completion_tokens: 60 } });
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await poll(() => page.getByTestId('messages').textContent()).toContain(reply);
  }
  const header = (page: Page) => page.getByRole('navigation', { name: 'Main' });

  it('guest → player on credits → author → admin approval → another player', async () => {
    // A guest lands on the home page and finds a sample world.
    const guest = await newPage();
    await guest.goto(`${server.url}/`);
    await poll(() => guest.getByRole('list', { name: 'Newest worlds' }).textContent()).toContain('Rain on Willow Street');
    expect(await guest.getByTestId('ai-hint').textContent()).toContain('credits');
    await shot(guest, 'home-guest');
    await guest.getByRole('list', { name: 'Newest worlds' }).getByRole('link', { name: 'Rain on Willow Street' }).click();
    await guest.waitForURL(/\/worlds\/wld_sample_willow_street$/);
    await poll(() => guest.getByTestId('world-author').textContent()).toBe('Yumina samples');
    await shot(guest, 'world-page');

    // Signs up from the world page and lands in the player; the header shows the welcome credits.
    await guest.getByTestId('play').click();
    await guest.waitForURL(/\/signup/);
    const email = `player-${Date.now()}@example.com`;
    await signUp(guest, email, 'Mira');
    await guest.waitForURL(/\/play\/wld_sample_willow_street$/);
    await poll(() => guest.getByTestId('credit-balance').textContent()).toBe('100');
    await playTurn(guest, 'I step under the awning.', 'Rain drums on the canvas above you.');
    expect(provider.completions.at(-1)!.headers.authorization).toBe('Bearer platform-key');
    // The balance shown in the header is reduced by the turn, while playing.
    await poll(async () => Number(await guest.getByTestId('credit-balance').textContent())).toBeLessThan(100);
    await shot(guest, 'player');
    await guest.goto(`${server.url}/app/settings#billing`);
    await poll(() => guest.getByTestId('ledger').textContent()).toContain('Charge');
    expect(await guest.getByTestId('billing-source').textContent()).toContain("platform's AI");

    // Connects their own provider: turns now play on it.
    const form = guest.getByRole('form', { name: 'AI connection' });
    await form.getByLabel('Base URL').fill(provider.url);
    await form.getByLabel('Default model').fill('own-model');
    await form.getByLabel('API key').fill('sk-own-key-1234');
    await form.getByRole('button', { name: 'Save' }).click();
    await poll(() => guest.getByRole('status').first().textContent()).toBe('Saved.');
    await guest.reload();
    await poll(() => guest.getByTestId('billing-source').textContent()).toContain('your own AI connection');
    await guest.locator('#billing').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shot(guest, 'settings-billing');

    // Creates a world in the studio with tags and a cover.
    await header(guest).getByRole('link', { name: 'My worlds' }).click();
    await guest.getByRole('link', { name: 'New world' }).click();
    await guest.waitForURL(/\/studio\/new$/);
    const worldName = `Lanterns of Vell ${Date.now() % 10000}`;
    await guest.getByLabel('Name', { exact: true }).fill(worldName);
    await guest.getByLabel('Description', { exact: true }).first().fill('A harbour town where every lantern keeps a secret.');
    await guest.getByRole('navigation', { name: 'Studio sections' }).getByRole('button', { name: 'Cover and tags' }).click();
    await guest.getByRole('button', { name: 'Add tag' }).click();
    await guest.getByLabel('Tag 1', { exact: true }).fill('lanterns');
    await guest.getByRole('button', { name: 'Save', exact: true }).click();
    await guest.waitForURL(/\/studio\/wld_[^/#]+/);
    const worldId = decodeURIComponent(/\/studio\/([^/#?]+)/.exec(guest.url())![1]!);
    await poll(() => guest.getByTestId('world-status').textContent()).toBe('Saved, never published');
    // Text named .png is refused by its content; the real PNG becomes the cover.
    await guest.getByRole('navigation', { name: 'Studio sections' }).getByRole('button', { name: 'Cover and tags' }).click();
    const coverInput = guest.getByLabel('Upload a cover image');
    await coverInput.setInputFiles({ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all') });
    await poll(() => guest.getByTestId('cover-message').textContent()).not.toBe('');
    expect(await guest.getByTestId('cover-message').textContent()).not.toBe('Cover set.');
    await coverInput.setInputFiles({ name: 'cover.png', mimeType: 'image/png', buffer: PNG });
    await poll(() => guest.getByTestId('cover-message').textContent()).toBe('Cover set.');
    const pickerCover = guest.getByTestId('cover-picker').getByRole('img', { name: `Cover of ${worldName}` });
    await poll(() => pickerCover.count()).toBe(1);
    const pickerBox = (await pickerCover.boundingBox())!;
    expect([pickerBox.width, Math.abs(pickerBox.height - (pickerBox.width * 9) / 16) <= 1]).toEqual([240, true]);
    await shot(guest, 'studio');

    // Playtests the working copy (on the player's own connection now).
    await guest.getByRole('navigation', { name: 'Studio sections' }).getByRole('button', { name: 'Playtest' }).click();
    await guest.getByTestId('playtest').getByLabel('Message', { exact: true }).waitFor();
    await playTurn(guest, 'I light the first lantern.', 'The lantern flares and whispers a name.');
    expect(provider.completions.at(-1)!.headers.authorization).toBe('Bearer sk-own-key-1234');

    // Submits it: held for review (an account's first publication).
    await guest.getByRole('button', { name: 'Publish', exact: true }).click();
    await poll(() => guest.getByTestId('world-status').textContent()).toBe('Held for review');
    await guest.goto(`${server.url}/studio`);
    await poll(() => guest.getByTestId('group-review').textContent()).toContain(worldName);
    await shot(guest, 'my-worlds');

    // An administrator, made one by the documented command, sees the world and its diff, approves it.
    const admin = await newPage();
    const adminEmail = `admin-${Date.now()}@example.com`;
    await admin.goto(`${server.url}/signup`);
    await signUp(admin, adminEmail, 'Ada Admin');
    await admin.waitForURL(/\/app\/settings/);
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'admin', '--', 'grant', adminEmail], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: server.database.url, DATA_DIR: server.dataDir, LOG_LEVEL: 'fatal' },
    });
    expect(stdout).toContain('is now an administrator');
    await admin.goto(`${server.url}/admin/reviews`);
    const row = admin.locator(`tr[data-world-id="${worldId}"]`);
    await row.getByRole('button', { name: 'View world and changes' }).click();
    await poll(() => admin.getByTestId('diff-summary').textContent()).toContain('First publication');
    expect(await admin.getByTestId('review-diff').textContent()).toContain(`"name": "${worldName}"`);
    await shot(admin, 'admin-review');
    await row.getByRole('button', { name: 'Approve' }).click();
    await poll(() => admin.getByRole('status').first().textContent()).toContain('Approved');

    // The author is notified in the inbox.
    await guest.goto(`${server.url}/`);
    await poll(() => guest.getByTestId('unread-count').textContent()).toBe('1');
    await header(guest).getByRole('link', { name: /^Inbox/ }).click();
    await poll(() => guest.getByTestId('inbox').textContent()).toContain(`Approved: ${worldName} is published`);
    await shot(guest, 'inbox');

    // Another player finds it on the home page and in the library under its tag, plays it.
    const other = await newPage();
    await other.goto(`${server.url}/`);
    await poll(() => other.getByRole('list', { name: 'Newest worlds' }).textContent()).toContain(worldName);
    await other.goto(`${server.url}/library`);
    await other.getByLabel('Tag', { exact: true }).selectOption('lanterns');
    await poll(() => other.getByRole('list', { name: 'Worlds' }).getByTestId('world-card').count()).toBe(1);
    expect(await other.getByRole('list', { name: 'Worlds' }).textContent()).toContain(worldName);
    expect(other.url()).toContain('tag=lanterns');
    // The uploaded cover is drawn in the card's 16:9 box from a resized copy (its 1x and 2x widths), not stretched to its height attribute.
    const cardCover = other.getByRole('list', { name: 'Worlds' }).getByRole('img', { name: `Cover of ${worldName}` });
    expect(await cardCover.getAttribute('srcset')).toMatch(/\?w=360 1x, .*\?w=720 2x$/);
    const cardBox = (await cardCover.boundingBox())!;
    expect(Math.abs(cardBox.height - (cardBox.width * 9) / 16)).toBeLessThanOrEqual(1);
    await shot(other, 'library');
    await other.getByRole('link', { name: worldName }).click();
    await other.getByTestId('play').click();
    await signUp(other, `second-${Date.now()}@example.com`, 'Noor');
    await other.waitForURL(new RegExp(`/play/${worldId}$`));
    await playTurn(other, 'I buy a lantern.', 'The seller winks and hands you a dim one.');
    await other.goto(`${server.url}/`);
    await poll(() => other.getByTestId('continue-playing').textContent()).toContain(worldName);
    await shot(other, 'home-continue');
  }, 300_000);
});
