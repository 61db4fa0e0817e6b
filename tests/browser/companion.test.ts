import { adventureLevel, CHAPTER_SCENES, invitationDelayMs, levelGetsInvitation, tinOutcome } from '@yumina/companion';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fakeReplies, type FakeOpenAi } from '../support/fake-openai.ts';
import type { TestServer } from '../support/server.ts';
import { signUp as signUpAccount } from '../support/sign-up.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';

/** A level of the demo board whose tin is offered soon and holds sun (daylight chapters collect sky sun). */
function tinLevel(): number {
  const candidates = [];
  for (let level = 5; level < 50; level++) {
    const d = adventureLevel(level);
    if (d.chapter === 'night' || d.chapter === 'fog') continue;
    if (levelGetsInvitation(d, 1) && tinOutcome(level, 1) === 'sun') candidates.push({ level, delay: invitationDelayMs(level, 1) });
  }
  candidates.sort((a, b) => a.delay - b.delay);
  return candidates[0]!.level;
}

async function inPage(page: Page, path: string, method: string, json: unknown): Promise<number> {
  return page.evaluate(
    async ([p, m, body]) => (await fetch(p as string, { method: m as string, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status,
    [path, method, json] as const,
  );
}


async function signUp(page: Page, server: TestServer, name: string): Promise<string> {
  const email = `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  await page.goto(`${server.url}/`);
  expect((await signUpAccount(server, page, { email, password: 'long enough pw', displayName: name })).status).toBeLessThan(300);
  return email;
}

const simTimeOf = async (page: Page) => Number(await page.getByTestId('sim-time').textContent());
const saved = (page: Page) => expect.poll(() => page.getByTestId('save-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('saved');

describe('companion on the demo adventure board', () => {
  let server: TestServer;
  let browser: Browser;
  let fake: FakeOpenAi;
  useBrowserPlatform({ provider: {} }, (p) => {
    ({ server, browser, provider: fake } = p);
    fake.setHandler((body) => {
      const messages = body.messages as { role: string; content: string }[];
      const last = messages.at(-1)!.content;
      return fakeReplies.completion(JSON.stringify({ reply: `Hello gardener! You said: ${last}`, quote: last.includes('Sunflowers') ? 'Sunflowers' : undefined }));
    });
  });

  it('pauses while the companion is open, talks through a local provider, buys and opens a tin, and the notebook records it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    page.on('pageerror', (e) => console.error('PAGEERROR', e.message));
    await page.goto(`${server.url}/`);
    expect((await signUpAccount(server, page, { email: `companion-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Gardener' })).status).toBeLessThan(300);
    expect(await inPage(page, '/api/settings/ai', 'PUT', { baseUrl: fake.url, defaultModel: 'garden-model', apiKey: 'sk-local-test-1234567890' })).toBe(200);

    const level = tinLevel();
    await page.goto(`${server.url}/adventure/demo?level=${level}&speed=16`);
    const state = page.getByTestId('board-state');
    const simTime = async () => Number(await page.getByTestId('sim-time').textContent());
    await expect.poll(simTime).toBeGreaterThan(0);
    // A chapter introduction needs no model request; a first meeting past the first chapter is an
    // "imported" introduction, not an invented shared history.
    const chapter = adventureLevel(level).chapter;
    const intro = CHAPTER_SCENES[chapter].en.introductions[chapter === 'day' ? 'first' : 'imported'];
    await expect.poll(() => page.getByTestId('companion-bubble').textContent()).toBe(intro);
    expect(fake.completions).toHaveLength(0);

    // Opening the companion pauses the board; closing resumes it.
    await page.getByRole('button', { name: 'Talk to the companion' }).click();
    await expect.poll(() => state.textContent()).toBe('Paused (companion)');
    const pausedAt = await simTime();
    await page.waitForTimeout(600);
    expect(await simTime()).toBe(pausedAt);

    const panel = page.getByRole('dialog', { name: 'Companion' });
    // The suggestion button only fills the composer; nothing is sent.
    await panel.getByRole('button', { name: 'Suggest thanks' }).click();
    expect(await panel.getByLabel('Message').inputValue()).toBe('Thanks for the help just now!');
    expect(fake.completions).toHaveLength(0);
    await panel.getByLabel('Message').fill('Sunflowers are my favourite');
    await panel.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => panel.getByTestId('conversation').textContent()).toContain('Hello gardener! You said: Sunflowers are my favourite');
    expect(fake.completions).toHaveLength(1);
    const sent = fake.completions[0]!;
    expect(sent.headers.authorization).toBe('Bearer sk-local-test-1234567890');
    expect((sent.body as { model: string }).model).toBe('garden-model');

    // The model picker: a separate tab answers over the account-bound broadcast channel.
    const [picker] = await Promise.all([context.waitForEvent('page'), panel.getByRole('button', { name: 'Choose model…' }).click()]);
    const url = new URL(picker.url());
    expect(url.pathname).toBe('/app/models');
    expect(url.searchParams.get('surface')).toBe('companion');
    await picker.waitForLoadState();
    await picker.evaluate(() => {
      const p = new URLSearchParams(window.location.search);
      const channel = p.get('pick')!;
      // Wrong account first: ignored.
      new BroadcastChannel(channel).postMessage({ type: 'yumina:model-picked', channel, accountId: 'acc_someone_else_entirely', model: 'evil/model' });
      new BroadcastChannel(channel).postMessage({ type: 'yumina:model-picked', channel, accountId: p.get('account'), model: 'picked/model-2' });
    });
    await expect.poll(() => panel.getByTestId('companion-model').textContent()).toBe('picked/model-2');
    await picker.close();

    await panel.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => state.textContent()).toBe('Running');
    await expect.poll(simTime).toBeGreaterThan(pausedAt);

    // The tin: offered after a quiet period of active play (60 s at least); slow down before it so the
    // 30 s offer window is comfortably long in real time, then buy it and open it.
    await expect.poll(simTime, { timeout: 30_000 }).toBeGreaterThanOrEqual(45);
    await page.getByLabel('Speed').selectOption('4');
    const invitation = page.getByTestId('tin-invitation');
    await invitation.waitFor({ state: 'visible', timeout: 30_000 });
    // The invitation never pauses combat: time goes on while it shows.
    const invitedAt = await simTime();
    await expect.poll(simTime).toBeGreaterThan(invitedAt);
    expect(await state.textContent()).toBe('Running');
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => state.textContent()).toBe('Paused');
    const sunBefore = Number(await page.getByTestId('sun').textContent());
    expect(sunBefore).toBeGreaterThanOrEqual(100);
    await invitation.getByRole('button', { name: 'Buy the tin (25 sun)' }).click();
    await expect.poll(async () => Number(await page.getByTestId('sun').textContent())).toBe(sunBefore - 25);
    await page.getByRole('button', { name: 'Open the tin' }).click();
    await expect.poll(() => page.getByTestId('tin-opened').textContent()).toBe('The tin held 75 sun.');
    expect(Number(await page.getByTestId('sun').textContent())).toBe(sunBefore + 50);

    // The notebook records it (and the remembered statement from the conversation).
    await page.getByRole('button', { name: 'Talk to the companion' }).click();
    await panel.getByRole('button', { name: 'Notebook' }).click();
    const milestones = panel.getByTestId('notebook-milestones');
    await expect.poll(async () => milestones.locator('li[data-kind]').evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')))).toEqual(
      expect.arrayContaining(['tin-offered', 'tin-bought', 'tin-opened-sun']),
    );
    expect(await panel.getByTestId('notebook').textContent()).toContain('“Sunflowers”');

    // Closing the panel releases only its own pause: the player's pause stays.
    await panel.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => state.textContent()).toBe('Paused');
    // The next message goes out with the picked model.
    await page.getByRole('button', { name: 'Talk to the companion' }).click();
    await panel.getByRole('button', { name: 'Talk' }).click();
    await panel.getByLabel('Message').fill('What was in the tin?');
    await panel.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => fake.completions.length).toBe(2);
    expect((fake.completions[1]!.body as { model: string }).model).toBe('picked/model-2');
    const system = (fake.completions[1]!.body as { messages: { content: string }[] }).messages[0]!.content;
    expect(system).toContain('"phase":"opened"');
    expect(system).toContain('tin-opened-sun');

    // Reloading resumes the tin from save chunk 23: still opened, same contents, no second offer.
    await expect.poll(() => page.getByTestId('save-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('saved');
    await page.reload();
    await expect.poll(() => page.getByTestId('tin-opened').textContent()).toBe('The tin held 75 sun.');
    await expect.poll(simTime).toBeGreaterThan(2);
    expect(await page.getByTestId('tin-invitation').count()).toBe(0);
    // The model chosen in this game tab is kept for the account in the tab's session: still there after the reload…
    await page.getByRole('button', { name: 'Talk to the companion' }).click();
    await expect.poll(() => panel.getByTestId('companion-model').textContent()).toBe('picked/model-2');
    // …while another tab (another session) starts from the account's default model.
    const otherTab = await context.newPage();
    await otherTab.goto(`${server.url}/adventure/demo?level=${level}`);
    await otherTab.getByRole('button', { name: 'Talk to the companion' }).click();
    await expect.poll(() => otherTab.getByRole('dialog', { name: 'Companion' }).getByTestId('companion-model').textContent()).toBe('garden-model');
    await context.close();
  }, 120_000);
  it('Stop cancels a reply in flight, the provider call included, and says the provider may still bill work it started', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signUp(page, server, 'stopper');
    expect(await inPage(page, '/api/settings/ai', 'PUT', { baseUrl: fake.url, defaultModel: 'garden-model', apiKey: 'sk-local-test-1234567890' })).toBe(200);
    await page.goto(`${server.url}/adventure/demo?level=6`);
    await page.getByRole('button', { name: 'Talk to the companion' }).click();
    const panel = page.getByRole('dialog', { name: 'Companion' });
    // No Stop (and no notice) while nothing is being written.
    expect(await panel.getByRole('button', { name: 'Stop' }).count()).toBe(0);
    const before = fake.completions.length;
    fake.enqueue({ kind: 'hang' });
    await panel.getByLabel('Message').fill('Tell me a very long story');
    await panel.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => fake.completions.length).toBe(before + 1);
    const stop = panel.getByRole('button', { name: 'Stop' });
    await stop.waitFor();
    const disclosure = await panel.getByTestId('stop-disclosure').textContent();
    expect(disclosure).toContain('may still bill for work it started before the cancellation');
    expect(await stop.getAttribute('aria-describedby')).toBe('companion-stop-disclosure');
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await panel.screenshot({ path: `/tmp/companion-stop-${width}.png` });
    }
    await stop.click();
    // The provider's request is cut (the server aborted its call), the panel is ready again and the conversation says what happened.
    await expect.poll(() => fake.completions[before]!.aborted, { timeout: 10_000 }).toBe(true);
    await expect.poll(() => panel.getByRole('button', { name: 'Send' }).count()).toBe(1);
    expect(await panel.getByRole('button', { name: 'Stop' }).count()).toBe(0);
    const conversation = panel.getByTestId('conversation');
    expect(await conversation.locator('[data-who="narration"]').last().textContent()).toContain('may still bill for work it started before the cancellation');
    expect(await conversation.locator('[data-who="companion"]').allTextContents()).not.toContainEqual(expect.stringContaining('Tell me a very long story'));
    // The next message goes through as usual: the stopped one held no lock.
    await panel.getByLabel('Message').fill('Hello again');
    await panel.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => conversation.textContent()).toContain('You said: Hello again');
    await context.close();
  }, 90_000);

  it('a sealed tin is gone when its attempt is lost: Try again and a reload never bring it back; a reload mid-level resumes lawn time and tin together', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    page.on('pageerror', (e) => console.error('PAGEERROR', e.message));
    await signUp(page, server, 'tin');
    const level = tinLevel();
    await page.goto(`${server.url}/adventure/demo?level=${level}&speed=16`);
    const state = page.getByTestId('board-state');
    // An empty lawn at the start, with sun to spend; the plants are drawn as sprites, not text.
    await expect.poll(() => simTimeOf(page), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await page.locator('.lawn [data-sprite="sunflower"], .lawn [data-sprite="peashooter"]').count()).toBe(0);
    expect(await page.getByTestId('difficulty-note').textContent()).toContain('4 times the original weighted zombie budget');
    await page.screenshot({ path: '/tmp/companion-board-start.png', fullPage: true });

    const invitation = page.getByTestId('tin-invitation');
    await invitation.waitFor({ state: 'visible', timeout: 40_000 });
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => state.textContent()).toBe('Paused');
    await invitation.getByRole('button', { name: 'Buy the tin (25 sun)' }).click();
    await page.getByTestId('tin-sealed').waitFor();
    const boughtAt = await simTimeOf(page);
    const sunAfterBuying = Number(await page.getByTestId('sun').textContent());
    expect(boughtAt).toBeGreaterThanOrEqual(60);
    await saved(page);
    await page.screenshot({ path: '/tmp/companion-board-tin.png', fullPage: true });

    // Reload mid-level: the lawn resumes at the moment of the save that holds the sealed tin.
    await page.reload();
    await page.getByTestId('tin-sealed').waitFor();
    expect(await simTimeOf(page)).toBeGreaterThanOrEqual(boughtAt);
    expect(await page.getByTestId('tin-invitation').count()).toBe(0);
    await page.getByRole('button', { name: 'Pause' }).click();
    expect(Number(await page.getByTestId('sun').textContent())).toBeGreaterThanOrEqual(sunAfterBuying);
    await page.getByRole('button', { name: 'Resume' }).click();

    // Nobody defends the lawn: the attempt is lost, and the tin with it.
    await expect.poll(() => state.textContent(), { timeout: 60_000 }).toBe('Lost');
    await page.screenshot({ path: '/tmp/companion-board-lost.png', fullPage: true });
    expect(await page.getByTestId('tin-sealed').count()).toBe(0);
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => state.textContent()).toBe('Running');
    expect(await simTimeOf(page)).toBeLessThan(boughtAt);
    expect(await page.getByTestId('tin-sealed').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Open the tin' }).count()).toBe(0);
    // …and a reload after the defeat does not bring it back either.
    await saved(page);
    await page.reload();
    await expect.poll(() => simTimeOf(page), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await simTimeOf(page)).toBeLessThan(boughtAt);
    expect(await page.getByTestId('tin-sealed').count()).toBe(0);
    const save = await page.evaluate(async () => (await (await fetch('/api/games/companion-demo/saves/adventure')).json()) as { companion: { encounter: { phase: string } | null } });
    expect(save.companion.encounter?.phase ?? 'none').not.toBe('sealed');
    await context.close();
  }, 150_000);

  it('level 1-6 starts empty with sun to spend; a plant is paid and drawn as a sprite; left alone the level is lost', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signUp(page, server, 'careless');
    await page.goto(`${server.url}/adventure/demo?level=6`);
    await expect.poll(() => simTimeOf(page), { timeout: 20_000 }).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Pause' }).click();
    expect(await page.locator('.lawn [data-sprite]:not([data-sprite="mower"])').count()).toBe(0);
    expect(Number(await page.getByTestId('sun').textContent())).toBe(50);
    await page.getByRole('toolbar', { name: 'Plants' }).getByRole('button', { name: /Sunflower/ }).click();
    await page.getByRole('button', { name: 'Row 3, column 1', exact: true }).click();
    expect(Number(await page.getByTestId('sun').textContent())).toBe(0);
    expect(await page.getByRole('button', { name: 'Row 3, column 1: Sunflower' }).locator('[data-sprite="sunflower"]').count()).toBe(1);
    // Not enough sun for a Peashooter: refused, nothing planted.
    await page.getByRole('toolbar', { name: 'Plants' }).getByRole('button', { name: /Peashooter/ }).click();
    await page.getByRole('button', { name: 'Row 2, column 2', exact: true }).click();
    expect(await page.locator('.lawn [data-sprite="peashooter"]').count()).toBe(0);
    // A careless player (one Sunflower, nothing else) loses.
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByLabel('Speed').selectOption('16');
    await expect.poll(() => page.locator('.lawn [data-sprite$="zombie"]').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await page.screenshot({ path: '/tmp/companion-board-zombies.png', fullPage: true });
    await expect.poll(() => page.getByTestId('board-state').textContent(), { timeout: 60_000 }).toBe('Lost');
    await context.close();
  }, 120_000);

  it('a notebook write that keeps failing is retried, then reported; the writes queued after it still reach the notebook', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signUp(page, server, 'writer');
    let failing = 4; // every attempt of the first write (one try and three retries with backoff)
    const attempts: string[] = [];
    await page.route('**/api/game/npc/companion/notebook', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      attempts.push((route.request().postDataJSON() as { mutation: { op: string } }).mutation.op);
      if (failing > 0) {
        failing--;
        return route.abort('failed');
      }
      return route.continue();
    });
    // The chapter introduction is the board's first notebook write.
    await page.goto(`${server.url}/adventure/demo?level=6`);
    await expect.poll(() => page.getByTestId('notebook-problem').textContent(), { timeout: 20_000 }).toContain('(introduction)');
    expect(attempts).toEqual(['introduction', 'introduction', 'introduction', 'introduction']);

    await page.getByRole('button', { name: 'Talk to the companion' }).click();
    const panel = page.getByRole('dialog', { name: 'Companion' });
    await panel.getByRole('button', { name: 'Notebook' }).click();
    await panel.getByLabel('Note', { exact: true }).fill('Wall-nuts on row 3');
    await panel.getByRole('button', { name: 'Pin' }).click();
    await expect.poll(() => panel.getByTestId('notebook').textContent()).toContain('Wall-nuts on row 3');
    await expect.poll(() => page.getByTestId('notebook-problem').count()).toBe(0);
    const stored = await page.evaluate(async () => ((await (await fetch('/api/game/npc/companion/notebook')).json()) as { notebook: { notes: { text: string }[] } }).notebook);
    expect(stored.notes.map((n) => n.text)).toEqual(['Wall-nuts on row 3']);
    await context.close();
  }, 90_000);

  it('visits switched off stay off after a reload and on another device; proactive comments are a separate switch', async () => {
    const first = await browser.newContext();
    const page = await first.newPage();
    page.setDefaultTimeout(30_000);
    const email = await signUp(page, server, 'prefs');
    await page.goto(`${server.url}/adventure/demo?level=6`);
    const visits = page.getByLabel('Occasional visits');
    const proactive = page.getByLabel('Proactive comments');
    await expect.poll(() => visits.isEnabled()).toBe(true);
    expect(await visits.isChecked()).toBe(true);
    expect(await proactive.isChecked()).toBe(false);
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/game/npc/companion/preferences') && r.ok()), visits.uncheck()]);
    await page.reload();
    await expect.poll(() => visits.isEnabled()).toBe(true);
    expect(await visits.isChecked()).toBe(false);
    expect(await proactive.isChecked()).toBe(false);
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/game/npc/companion/preferences') && r.ok()), proactive.check()]);
    expect(await visits.isChecked()).toBe(false);

    // Another browser (another device): sign in there; both switches are as this account left them.
    const second = await browser.newContext();
    const other = await second.newPage();
    other.setDefaultTimeout(30_000);
    await other.goto(`${server.url}/`);
    expect(await inPage(other, '/api/auth/login', 'POST', { email, password: 'long enough pw' })).toBeLessThan(300);
    await other.goto(`${server.url}/adventure/demo?level=6`);
    await expect.poll(() => other.getByLabel('Occasional visits').isEnabled()).toBe(true);
    expect(await other.getByLabel('Occasional visits').isChecked()).toBe(false);
    expect(await other.getByLabel('Proactive comments').isChecked()).toBe(true);
    await first.close();
    await second.close();
  }, 90_000);

  it('adventure sign-in opens in a separate tab; the board tab keeps its page and picks up the session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/adventure/demo?level=6`);
    await page.getByRole('heading', { name: 'Adventure needs an account' }).waitFor();
    expect(await page.getByTestId('difficulty-note').textContent()).toContain('Versus mode is a separate mode');
    // Versus is linked where this deployment serves it (local mode publishes the demo game).
    expect(await page.getByRole('link', { name: 'play versus in the demo game' }).getAttribute('href')).toBe('/games/demo/');
    await page.evaluate(() => {
      (window as unknown as { boardTabMarker: string }).boardTabMarker = 'same document';
    });
    const link = page.getByRole('link', { name: 'Sign in in a new tab' });
    expect(await link.getAttribute('target')).toBe('_blank');
    const [login] = await Promise.all([context.waitForEvent('page'), link.click()]);
    await login.waitForLoadState();
    expect(new URL(login.url()).pathname).toBe('/login');
    const signedUp = (await signUpAccount(server, login, { email: `tab-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Tab' })).status;
    expect(signedUp).toBeLessThan(300);
    await login.close();
    await page.bringToFront();
    await page.getByTestId('board-state').waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => (window as unknown as { boardTabMarker?: string }).boardTabMarker)).toBe('same document');
    await context.close();
  }, 60_000);

  it('the versus link leads to the demo game where it is served, and is left out where it is not', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/adventure/demo?level=6`);
    await page.getByRole('link', { name: 'play versus in the demo game' }).click();
    await page.getByRole('button', { name: 'Play versus (guests welcome)' }).waitFor();
    // A deployment without the demo game (its HEAD answers 404): the note names the mode, with no dead link.
    const without = await context.newPage();
    await without.route('**/games/demo/', (route) => (route.request().method() === 'HEAD' ? route.fulfill({ status: 404 }) : route.continue()));
    const checked = without.waitForResponse((r) => r.url().endsWith('/games/demo/') && r.request().method() === 'HEAD');
    await without.goto(`${server.url}/adventure/demo?level=6`);
    await without.getByRole('heading', { name: 'Adventure needs an account' }).waitFor();
    expect((await checked).status()).toBe(404);
    await new Promise((r) => setTimeout(r, 200));
    expect(await without.getByTestId('difficulty-note').textContent()).toMatch(/without the companion\.$/);
    expect(await without.getByRole('link', { name: 'play versus in the demo game' }).count()).toBe(0);
    await context.close();
  });

  it('the game entry page explains the 4× budget and the separate versus mode', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/games/demo/`);
    const note = await page.locator('#difficulty-note').textContent();
    expect(note).toContain('4 times the original weighted zombie budget');
    expect(note).toContain('versus');
    await page.close();
  });
});
