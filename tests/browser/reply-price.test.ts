import { copyFileSync, mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld } from '../support/player-world.ts';
import { screenPath } from '../support/screens.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 47 point 4 in the browser: the price under each reply (tokens in, of them cached, out, and
 * the credits charged at the price table's price), the session's total beside the world's name and
 * under the session menu, at 1280 and 390 px; the studio's expected cost per turn of the world. The
 * figures on screen are the ones the ledger holds. axe finds nothing serious.
 */

// credits per million tokens: fresh input 3000, cache read 300, output 15000
const PRICE = { input: 3000, cacheRead: 300, cacheWrite: 3750, output: 15000 };
// turn 1: 2000 in (1500 cached), 100 out → 1.5 M + 0.45 M + 1.5 M millionths → 4 credits
// turn 2: 2200 in (2000 cached), 80 out → 0.6 M + 0.6 M + 1.2 M → 3 credits
const TURNS = [
  { content: 'Rain taps the window of the café.', usage: { prompt_tokens: 2000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 1500 } }, shown: '2,000 in (1,500 cached) · 100 out · 4 credits' },
  { content: 'Mina slides a cup across to you.', usage: { prompt_tokens: 2200, completion_tokens: 80, prompt_tokens_details: { cached_tokens: 2000 } }, shown: '2,200 in (2,000 cached) · 80 out · 3 credits' },
];

/** A copy for the reviewer under /tmp/h-price-screens as well as the suite's screen folder. */
async function shot(page: Page, name: string): Promise<void> {
  const path = screenPath(name);
  await page.screenshot({ path });
  mkdirSync('/tmp/h-price-screens', { recursive: true });
  copyFileSync(path, `/tmp/h-price-screens/${name}.png`);
}

describe('the price of every reply, in the player and the studio', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'platform-key', models: [{ id: 'platform-model' }] });
    [server, browser] = await Promise.all([
      startTestServer(
        { OFFICIAL_AI_BASE_URL: provider.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform-model', WELCOME_CREDITS: '1000', AI_PRICES: JSON.stringify({ 'platform-model': PRICE }) },
        { web: true },
      ),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    const cut = setTimeout(() => server?.app.server.closeAllConnections(), 10_000);
    try {
      await Promise.all([server?.stop(), provider?.close()]);
    } finally {
      clearTimeout(cut);
    }
  });

  async function newPage(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    return page;
  }

  it('shows each reply’s tokens and credits and the session’s total at 1280 and 390 px, as the ledger holds them; the studio shows the world’s expected cost per turn', async () => {
    const page = await newPage(1280);
    const email = `price-${Date.now()}@example.com`;
    await signUp(server, page, { email });
    const world = await page.evaluate(async (w) => {
      const res = await fetch('/api/worlds', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ world: w }) });
      return (await res.json()) as { id: string };
    }, sampleWorld('willow-street'));

    // the studio before anyone played: an estimate from the world's prompt for a first turn
    await page.goto(`${server.url}/studio/${world.id}`);
    const estimate = page.getByTestId('expected-cost');
    await expect.poll(() => estimate.getAttribute('data-basis'), { timeout: 20_000 }).toBe('estimate');
    expect(await estimate.textContent()).toMatch(/^Expected cost per turn: [\d.,]+ credits?.*tokens in · [\d,]+ out, an estimate from its prompt for a first turn/);

    await page.goto(`${server.url}/play/${world.id}`);
    const bubbles = page.getByTestId('messages').locator('li[data-message-id]');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(1);
    // before the first reply: no total yet
    expect(await page.getByTestId('session-spent').count()).toBe(0);
    const box = page.getByLabel('Message', { exact: true });
    for (const [i, turn] of TURNS.entries()) {
      provider.enqueue({ kind: 'completion', content: turn.content, usage: turn.usage });
      await box.fill(`Turn ${i + 1}`);
      await box.press('Enter');
      await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe(turn.content);
      await expect.poll(() => bubbles.last().getByTestId('reply-usage').textContent(), { timeout: 20_000 }).toBe(turn.shown);
    }
    expect(await bubbles.last().getByTestId('reply-usage').getAttribute('title')).toBe("2,200 sent · 2,000 of them read from the provider's cache · 80 written · platform-model");
    await expect.poll(() => page.getByTestId('session-spent').textContent(), { timeout: 20_000 }).toBe('This session: 7 credits · 4,380 tokens');
    expect(await page.getByTestId('session-spent-full').textContent()).toBe('2 replies: 4,200 tokens in (3,500 cached) · 180 out · 7 credits');

    // what the page shows is what the ledger holds
    const { rows } = await server.ctx.db.primary.query<{ usage: string; charged: string; cached: string }>(
      `select (select sum(u.credits) from usage_ledger u where u.account_id = a.id)::text as usage,
              (select -sum(l.amount) from credit_ledger l where l.account_id = a.id and l.kind = 'charge')::text as charged,
              (select sum(u.cached_tokens_in) from usage_ledger u where u.account_id = a.id)::text as cached
         from accounts a where a.email = $1`,
      [email],
    );
    expect(rows[0]).toEqual({ usage: '7', charged: '7', cached: '3500' });

    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'reply-price-1280');

    // the same session on a phone
    const phone = await newPage(390);
    await phone.context().addCookies(await page.context().cookies());
    await phone.goto(`${server.url}/play/${world.id}`);
    await expect.poll(() => phone.getByTestId('session-spent').textContent(), { timeout: 20_000 }).toBe('This session: 7 credits · 4,380 tokens');
    const usage = phone.getByTestId('reply-usage').last();
    await expect.poll(() => usage.textContent(), { timeout: 20_000 }).toBe(TURNS[1]!.shown);
    // the price line stays inside the screen
    const boxOf = (await usage.boundingBox())!;
    expect(boxOf.x).toBeGreaterThanOrEqual(0);
    expect(boxOf.x + boxOf.width).toBeLessThanOrEqual(390);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await usage.scrollIntoViewIfNeeded();
    expect(await seriousViolations(phone)).toEqual([]);
    await shot(phone, 'reply-price-390');

    // the studio after play: the average of the world's replies, with the cache's saving
    await page.goto(`${server.url}/studio/${world.id}`);
    const played = page.getByTestId('expected-cost');
    await expect.poll(() => played.getAttribute('data-basis'), { timeout: 20_000 }).toBe('played');
    // average 2100 in (1750 cached), 90 out: 350 × 3000 + 1750 × 300 + 90 × 15000 = 2.925 M → 2.93 credits; 7.65 without the cache
    expect(await played.textContent()).toBe(
      "Expected cost per turn: 2.93 credits (7.65 credits without the provider's cache)2,100 tokens in (1,750 cached) · 90 out, the average of the last 2 replies played; priced as platform-model on the platform. Players on their own key pay their provider instead.",
    );
    await played.scrollIntoViewIfNeeded();
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'studio-expected-cost-1280');
    await phone.goto(`${server.url}/studio/${world.id}`);
    const phoneCost = phone.getByTestId('expected-cost');
    await expect.poll(() => phoneCost.getAttribute('data-basis'), { timeout: 20_000 }).toBe('played');
    await phoneCost.scrollIntoViewIfNeeded();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(phone, 'studio-expected-cost-390');
  }, 240_000);

  it('Settings: an Anthropic key typed for an OpenAI-compatible connection is named as another provider’s key; Save keeps nothing and the provider never sees it', async () => {
    for (const width of [1280, 390]) {
      const page = await newPage(width);
      await signUp(server, page, { email: `key-${width}-${Date.now()}@example.com` });
      await page.goto(`${server.url}/app/settings#ai-config`);
      const form = page.getByRole('form', { name: 'AI connection' });
      await expect.poll(() => form.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
      const before = provider.requests.length;
      await form.getByLabel('Base URL').fill(provider.url);
      await form.getByLabel('API key').fill('sk-ant-api03-typed-into-the-wrong-form-0123456789');
      await expect.poll(() => page.getByTestId('model-list-note').textContent(), { timeout: 20_000 }).toMatch(/this looks like an Anthropic key \(sk-ant-…\), but the connection is OpenAI-compatible at 127\.0\.0\.1: choose the kind Anthropic/);
      await form.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => form.getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/apiKey: this looks like an Anthropic key .*The key was not sent or saved\./);
      expect(await page.evaluate(() => fetch('/api/settings/ai').then((r) => r.json()))).toEqual({ configured: false });
      expect(provider.requests.slice(before)).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      expect(await seriousViolations(page)).toEqual([]);
      await form.screenshot({ path: `/tmp/h-price-screens/settings-wrong-key-${width}.png` });
    }
  }, 120_000);
});
