import { adventureLevel, CHAPTER_SCENES, invitationDelayMs, levelGetsInvitation, tinOutcome } from '@yumina/companion';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../support/browser.ts';
import { fakeReplies, type FakeOpenAi } from '../support/fake-openai.ts';
import { hasPostgres } from '../support/postgres.ts';
import { hasRedis } from '../support/redis.ts';
import type { TestServer } from '../support/server.ts';
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

describe.runIf(hasPostgres && hasRedis && hasChromium)('companion on the demo adventure board', () => {
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
    expect(await inPage(page, '/api/auth/signup', 'POST', { email: `companion-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Gardener' })).toBeLessThan(300);
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
    await page.reload();
    await expect.poll(() => page.getByTestId('tin-opened').textContent()).toBe('The tin held 75 sun.');
    await expect.poll(simTime).toBeGreaterThan(2);
    expect(await page.getByTestId('tin-invitation').count()).toBe(0);
    await context.close();
  }, 120_000);
});
