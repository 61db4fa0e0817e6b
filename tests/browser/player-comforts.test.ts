import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { screenPath } from '../support/screens.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The Web Speech API's boundary, recorded: speechSynthesis and SpeechSynthesisUtterance replaced
 * before the page's code runs, so the test reads what the page asked the browser to say (headless
 * Chromium has no voices of its own).
 */
const SPEECH_RECORDER = () => {
  const calls: { op: string; text?: string; voice?: string | null; lang?: string; rate?: number }[] = [];
  (window as unknown as { __speech: typeof calls }).__speech = calls;
  class Utterance {
    text: string;
    voice: { name: string } | null = null;
    lang = '';
    rate = 1;
    pitch = 1;
    onend: (() => void) | null = null;
    constructor(text: string) {
      this.text = text;
    }
  }
  const voices = [
    { name: 'Ada', lang: 'en-GB', voiceURI: 'ada', default: false, localService: true },
    { name: 'Brian', lang: 'en-US', voiceURI: 'brian', default: true, localService: true },
  ];
  const synth = {
    speaking: false,
    pending: false,
    paused: false,
    getVoices: () => voices,
    speak: (u: Utterance) => calls.push({ op: 'speak', text: u.text, voice: u.voice?.name ?? null, lang: u.lang, rate: u.rate }),
    cancel: () => calls.push({ op: 'cancel' }),
    pause() {},
    resume() {},
    addEventListener() {},
    removeEventListener() {},
  };
  Object.defineProperty(window, 'speechSynthesis', { value: synth, configurable: true });
  Object.defineProperty(window, 'SpeechSynthesisUtterance', { value: Utterance, configurable: true });
};

type SpeechCall = { op: string; text?: string; voice?: string | null; lang?: string; rate?: number };
const speechCalls = (page: Page) => page.evaluate(() => (window as unknown as { __speech: SpeechCall[] }).__speech);

/** Rain on Willow Street with issue 50's optional fields: a chat background, the character's voice, a small context window. */
function comfortWorld() {
  const world = sampleWorld('willow-street') as unknown as Record<string, unknown> & { settings: Record<string, unknown> };
  return { ...world, chatBackground: '#3b2f5c', voice: { browserVoice: 'Brian', providerVoice: 'shimmer', rate: 1.1 }, settings: { ...world.settings, maxContext: 8000, maxTokens: 1000 } };
}

/** A JSON call from the page (its cookies). */
function call(page: Page, path: string, method = 'GET', json?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(
    async ([p, m, b]) => {
      const res = await fetch(p as string, { method: m as string, headers: b === undefined ? {} : { 'content-type': 'application/json' }, body: b === undefined ? undefined : JSON.stringify(b) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    [path, method, json] as const,
  );
}

/**
 * Issue 50, player comforts, in the real player: voice (the browser's and the connection's),
 * impersonate, search with a jump to the message, themes and text size and a world's background,
 * the context gauge, Undo after a delete, and a reply translated beside the original. Each at
 * 1280 and 390 px, axe clean, in light and dark.
 */
describe('player comforts', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    [server, browser] = await Promise.all([startTestServer({}, { web: true }), launchBrowser()]);
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

  /** A new player on their own connection (the fake), in the comfort world's player. */
  async function player(width = 1280, colorScheme: 'light' | 'dark' = 'light') {
    const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 900 }, colorScheme });
    contexts.push(context);
    await context.addInitScript(SPEECH_RECORDER);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [worldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'comfort-key', worlds: [comfortWorld()] });
    await page.goto(`${server.url}/play/${worldId}`);
    const bubbles = page.getByTestId('messages').locator('li[data-message-id]');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(1);
    const sessionId = await page.getByRole('combobox', { name: 'Session' }).inputValue();
    return { page, worldId: worldId!, sessionId, bubbles };
  }
  async function send(page: Page, text: string, reply: string, usage = { prompt_tokens: 2000, completion_tokens: 12 }) {
    const bubbles = page.getByTestId('messages').locator('li[data-message-id]');
    const before = await bubbles.count();
    provider.enqueue({ kind: 'completion', content: reply, usage });
    const box = page.getByLabel('Message', { exact: true });
    await box.fill(text);
    await box.press('Enter');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(before + 2);
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(false);
  }
  const openComfort = async (page: Page) => {
    await page.getByRole('button', { name: 'Display and voice' }).click();
    return page.getByRole('dialog', { name: 'Display and voice' });
  };

  it('1 voice: the author’s browser voice, the player’s choice, auto-play with actions skipped, stopped when the player sends; the connection’s speech through /audio/speech', async () => {
    const { page, sessionId, bubbles } = await player();
    // Read aloud on the greeting: the author's voice (Brian) and rate.
    await bubbles.first().getByRole('button', { name: 'Read aloud' }).click();
    await expect.poll(async () => (await speechCalls(page)).filter((c) => c.op === 'speak').length).toBe(1);
    const first = (await speechCalls(page)).find((c) => c.op === 'speak')!;
    expect(first).toMatchObject({ voice: 'Brian', lang: 'en-US', rate: 1.1 });
    expect(first.text!.length).toBeGreaterThan(20);
    expect(first.text).not.toContain('*');
    expect(await bubbles.first().getByRole('button', { name: 'Stop reading' }).getAttribute('aria-pressed')).toBe('true');
    await bubbles.first().getByRole('button', { name: 'Stop reading' }).click();
    expect((await speechCalls(page)).at(-1)).toEqual({ op: 'cancel' });

    // The player chooses Ada for Mina Park, auto-play on, actions skipped (by keyboard in the dialog).
    const dialog = await openComfort(page);
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByLabel('Mina Park\'s voice').selectOption('Ada');
    await dialog.getByLabel('Read each new reply aloud').check();
    await dialog.getByLabel('Actions between *asterisks*').selectOption('skip');
    await page.screenshot({ path: screenPath('comfort-panel-1280') });
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);

    await send(page, 'Hello again, Mina.', '*She smiles and sets down the cup.* Welcome back, Sam.');
    await expect.poll(async () => (await speechCalls(page)).filter((c) => c.op === 'speak').length).toBe(2);
    expect((await speechCalls(page)).filter((c) => c.op === 'speak').at(-1)).toMatchObject({ text: 'Welcome back, Sam.', voice: 'Ada', lang: 'en-GB' });
    // Sending stops the reading.
    const cancelsBefore = (await speechCalls(page)).filter((c) => c.op === 'cancel').length;
    await send(page, 'Shall we go?', 'Yes.');
    expect((await speechCalls(page)).filter((c) => c.op === 'cancel').length).toBeGreaterThan(cancelsBefore);

    // The connection's voices: the author's provider voice, then the player's own.
    const again = await openComfort(page);
    await again.getByLabel('Voices from').selectOption('provider');
    await again.getByLabel('Read each new reply aloud').uncheck();
    await again.getByRole('button', { name: 'Close' }).click();
    const reply = page.getByTestId('messages').locator('li[data-role="assistant"]').nth(1);
    const replyId = await reply.getAttribute('data-message-id');
    await reply.getByRole('button', { name: 'Read aloud' }).click();
    await expect.poll(() => provider.speeches.length).toBe(1);
    expect(provider.speeches[0]!.body).toEqual({ model: 'tts-1', input: 'Welcome back, Sam.', voice: 'shimmer', response_format: 'mp3' });
    expect(provider.speeches[0]!.headers.authorization).toBe('Bearer comfort-key');
    const third = await openComfort(page);
    await third.getByLabel("Mina Park's voice (the provider's name for it)").fill('nova');
    await third.getByLabel('Actions between *asterisks*').selectOption('read');
    await third.getByRole('button', { name: 'Close' }).click();
    await reply.getByRole('button', { name: /Read aloud|Stop reading/ }).click();
    if (provider.speeches.length === 1) await reply.getByRole('button', { name: 'Read aloud' }).click();
    await expect.poll(() => provider.speeches.length).toBe(2);
    expect(provider.speeches[1]!.body).toMatchObject({ input: 'She smiles and sets down the cup. Welcome back, Sam.', voice: 'nova' });
    expect(provider.speeches[1]!.path).toBe('/v1/audio/speech');
    expect(replyId).toBeTruthy();
    expect(sessionId).toBeTruthy();
  });

  it('2 impersonate: the model writes the player’s next line into the box, nothing stored; 3 search jumps to a message in this session and in another', async () => {
    const { page, worldId, sessionId, bubbles } = await player(390);
    provider.enqueue({ kind: 'completion', content: 'I shake the rain off my umbrella and sit by the window.' });
    const button = page.getByRole('button', { name: 'Write my line' });
    expect(await button.getAttribute('aria-describedby')).toBe('impersonate-hint');
    await button.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByLabel('Message', { exact: true }).inputValue()).toBe('I shake the rain off my umbrella and sit by the window.');
    expect(await bubbles.count()).toBe(1);
    expect(((await call(page, `/api/sessions/${sessionId}`)).body.messages as unknown[]).length).toBe(1);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Message');
    await page.screenshot({ path: screenPath('comfort-impersonate-390') });

    // Search: many messages, the first scrolled out of view; the search jumps back to it.
    await send(page, 'The lighthouse keeper waved at dusk.', 'Mina laughs about the lighthouse.');
    for (let i = 0; i < 4; i++) await send(page, `Filler line number ${i} about tea and rain.`, `Reply ${i}: more tea.`);
    const target = page.getByTestId('messages').locator('li[data-role="user"]').first();
    const targetId = await target.getAttribute('data-message-id');
    await page.getByRole('button', { name: 'Search' }).click();
    const dialog = page.getByRole('dialog', { name: 'Search messages' });
    await dialog.getByLabel('Words to find').fill('lighthouse');
    await dialog.getByLabel('Words to find').press('Enter');
    await expect.poll(() => dialog.getByTestId('search-results').locator('li').count()).toBe(2);
    expect(await dialog.getByTestId('search-count').textContent()).toBe('2 found for “lighthouse”.');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenPath('comfort-search-390') });
    await dialog.getByRole('button', { name: /The lighthouse keeper waved/ }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-message-id'))).toBe(targetId);
    const box = (await target.boundingBox())!;
    const list = (await page.getByTestId('messages').boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(list.y - 1);
    expect(box.y).toBeLessThan(list.y + list.height);

    // Across sessions: a new session; the search over all finds the first session's line and switches to it.
    await page.getByRole('button', { name: 'New session' }).click();
    await expect.poll(() => page.getByRole('combobox', { name: 'Session' }).inputValue()).not.toBe(sessionId);
    await page.getByRole('button', { name: 'Search' }).click();
    await dialog.getByLabel('All my sessions').check();
    await dialog.getByLabel('Words to find').fill('keeper waved');
    await dialog.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => dialog.getByTestId('search-results').locator('li').count()).toBe(1);
    expect(await dialog.getByTestId('search-results').textContent()).toContain('Rain on Willow Street');
    await dialog.getByTestId('search-results').getByRole('button').click();
    await expect.poll(() => page.getByRole('combobox', { name: 'Session' }).inputValue()).toBe(sessionId);
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-message-id'))).toBe(targetId);
    expect(worldId).toBeTruthy();
  });

  it('4 themes: dark and light chosen in the app and kept, the chat’s text size, the world’s background; 5 the context gauge beside What was sent', async () => {
    const { page, bubbles } = await player(1280, 'light');
    await send(page, 'Do you remember the cafe?', 'Of course I do.', { prompt_tokens: 2000, completion_tokens: 5 });
    const mine = page.getByTestId('messages').locator('li[data-role="user"]').last();
    const gauge = mine.getByTestId('context-gauge');
    expect(await gauge.textContent()).toBe('2,000 of 8,000 tokens (25%)');
    const meter = gauge.getByRole('meter', { name: 'Context used by the last prompt' });
    expect(await meter.getAttribute('aria-valuetext')).toBe('2,000 of 8,000 tokens (25%)');
    // Beside "What was sent" (the same row of tools).
    const sentBox = (await mine.getByRole('button', { name: 'What was sent' }).boundingBox())!;
    const gaugeBox = (await gauge.boundingBox())!;
    expect(Math.abs(sentBox.y + sentBox.height / 2 - (gaugeBox.y + gaugeBox.height / 2))).toBeLessThan(12);
    expect(await page.getByTestId('messages').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(59, 47, 92)');

    const bg = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const light = await bg();
    const dialog = await openComfort(page);
    await dialog.getByLabel('Theme').selectOption('dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await bg()).not.toBe(light);
    const size = () => bubbles.first().getByTestId('message-text').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
    const medium = await size();
    await dialog.getByLabel('Chat text size').selectOption('x-large');
    expect(await size()).toBeGreaterThan(medium * 1.25);
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Close' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenPath('comfort-dark-1280') });

    // Kept: a reload (and another page) opens dark with the large text, against a light system.
    await page.reload();
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(3);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await size()).toBeGreaterThan(medium * 1.25);
    await page.goto(`${server.url}/app/settings`);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    // Settings → Appearance shows the same choice.
    await expect.poll(() => page.getByLabel('Theme').inputValue(), { timeout: 20_000 }).toBe('dark');
    await page.goBack();
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(3);
    // Light chosen on a dark system.
    const darkSystem = await player(390, 'dark');
    const darkBg = await darkSystem.page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    await darkSystem.page.screenshot({ path: screenPath('comfort-chat-dark-390') });
    const d2 = await openComfort(darkSystem.page);
    await d2.getByLabel('Theme').selectOption('light');
    await d2.getByRole('button', { name: 'Close' }).click();
    expect(await darkSystem.page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)).not.toBe(darkBg);
    expect(await seriousViolations(darkSystem.page)).toEqual([]);
    await darkSystem.page.screenshot({ path: screenPath('comfort-chat-light-390') });
  });

  it('6 a delete offers Undo for a few seconds: Undo keeps everything, otherwise the server deletes; a send meanwhile deletes first', async () => {
    const { page, sessionId, bubbles } = await player(390, 'dark');
    await send(page, 'First question?', 'First answer.');
    await send(page, 'Second question?', 'Second answer.');
    const stored = async () => ((await call(page, `/api/sessions/${sessionId}`)).body.messages as { content: string }[]).map((m) => m.content);
    expect(await stored()).toHaveLength(5);

    const second = page.getByTestId('messages').locator('li[data-role="user"]').last();
    await second.getByRole('button', { name: 'Delete' }).click();
    // No confirmation first: the messages leave at once, the notice offers Undo (focused).
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    await expect.poll(() => bubbles.count()).toBe(3);
    const notice = page.getByTestId('undo-notice');
    expect(await notice.textContent()).toContain('2 messages deleted.');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Undo');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenPath('comfort-undo-390') });
    expect(await stored()).toHaveLength(5);
    await page.keyboard.press('Enter');
    await expect.poll(() => bubbles.count()).toBe(5);
    expect(await notice.count()).toBe(0);
    await page.waitForTimeout(8000);
    expect(await stored()).toHaveLength(5);

    // Not undone: the server deletes once the time is up.
    await page.getByTestId('messages').locator('li[data-role="user"]').last().getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => bubbles.count()).toBe(3);
    expect(await stored()).toHaveLength(5);
    await expect.poll(stored, { timeout: 15_000 }).toEqual(expect.arrayContaining(['First question?', 'First answer.']));
    await expect.poll(async () => (await stored()).length, { timeout: 15_000 }).toBe(3);
    await expect.poll(() => notice.count()).toBe(0);

    // A send while Undo is offered: the delete goes first, then the new turn.
    await page.getByTestId('messages').locator('li[data-role="user"]').last().getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => bubbles.count()).toBe(1);
    provider.enqueue({ kind: 'completion', content: 'A fresh answer.' });
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('A fresh start.');
    await box.press('Enter');
    await expect.poll(stored, { timeout: 20_000 }).toEqual([expect.any(String), 'A fresh start.', 'A fresh answer.']);
    await expect.poll(() => bubbles.count()).toBe(3);
  });

  it('7 a reply translated into the player’s language on demand, shown beside the original', async () => {
    const { page, bubbles } = await player(1280, 'dark');
    await send(page, 'How is the weather?', 'The rain will not stop tonight.');
    const dialog = await openComfort(page);
    await dialog.getByLabel('Translate replies into').fill('de');
    await dialog.getByRole('button', { name: 'Close' }).click();
    const reply = bubbles.last();
    provider.enqueue({ kind: 'completion', content: 'Der Regen hört heute Nacht nicht auf.' });
    const before = provider.completions.length;
    await reply.getByRole('button', { name: 'Translate' }).click();
    const translation = reply.getByTestId('translation');
    await expect.poll(() => translation.count()).toBe(1);
    expect(await translation.textContent()).toBe('GermanDer Regen hört heute Nacht nicht auf.');
    expect(await translation.getAttribute('lang')).toBe('de');
    expect(provider.completions.length).toBe(before + 1);
    const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
    expect(sent[0]!.content).toContain('into German');
    expect(sent[1]).toEqual({ role: 'user', content: 'The rain will not stop tonight.' });
    // Beside the original at 1280 px: the two side by side.
    const original = (await reply.getByTestId('message-text').boundingBox())!;
    const beside = (await translation.boundingBox())!;
    expect(beside.x).toBeGreaterThan(original.x + original.width - 2);
    expect(Math.abs(beside.y - original.y)).toBeLessThan(30);
    expect(await reply.getByTestId('message-text').textContent()).toBe('The rain will not stop tonight.');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenPath('comfort-translate-1280') });
    await reply.getByRole('button', { name: 'Hide translation' }).click();
    expect(await translation.count()).toBe(0);
  });
});
