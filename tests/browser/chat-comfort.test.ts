import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, fakeReplies, startFakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { screenPath } from '../support/screens.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's serious and critical violations on the page as it stands, readable. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    type Violation = { id: string; impact: string | null; nodes: { target: string[] }[] };
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: Violation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 4).join(' | ')}`);
}

/** A JSON call from the page (its cookies), answering the status and the body. */
function call(page: Page, path: string, method = 'GET', json?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(
    async ([p, m, b]) => {
      const res = await fetch(p as string, { method: m as string, headers: b === undefined ? {} : { 'content-type': 'application/json' }, body: b === undefined ? undefined : JSON.stringify(b) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    [path, method, json] as const,
  );
}

/** Whether the element's box lies within the viewport (its buttons can be clicked without scrolling). */
async function inView(page: Page, selector: ReturnType<Page['locator']>): Promise<boolean> {
  const box = await selector.boundingBox();
  const viewport = page.viewportSize()!;
  return !!box && box.y >= 0 && box.y + box.height <= viewport.height && box.x >= 0 && box.x + box.width <= viewport.width;
}

interface Message {
  id: string;
  role: string;
  content: string;
  tokenCount: number | null;
  promptTokens: number | null;
  creditsCharged: number | null;
}

/**
 * Issue 30 C, comfortable chat, in the real player: a full-width editor with "Save and
 * regenerate", deleting a checkpoint asks first, the model chosen in the player from the
 * connection's list (and in Settings), each reply's tokens and cost, "what was sent" for the
 * player's turn (its owner only), and Enter sending in the companion box.
 */
describe('comfortable chat', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    [server, browser] = await Promise.all([
      startTestServer({ OFFICIAL_AI_BASE_URL: provider.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform-model', WELCOME_CREDITS: '100' }, { web: true }),
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
  async function newPage(width = 1280, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 900 }, colorScheme });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    return page;
  }
  const messages = async (page: Page, sessionId: string) => (await call(page, `/api/sessions/${sessionId}`)).body.messages as Message[];
  const sessionOf = (page: Page) => page.getByRole('combobox', { name: 'Session' }).inputValue();

  it('edits full width with Save and regenerate, shows each reply’s tokens, opens what was sent, chooses the model in the player, and asks before deleting a checkpoint', async () => {
    const page = await newPage();
    const [worldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'chat-key', worlds: [sampleWorld('willow-street')] });
    await page.goto(`${server.url}/play/${worldId}`);
    const list = page.getByTestId('messages');
    const bubbles = list.locator('li[data-message-id]');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(1);

    // A turn on the player's own connection: the reply shows its tokens (sent + written), no cost (the platform prices no model here: no estimate).
    provider.enqueue({ kind: 'completion', content: 'Mina pours two cups.', usage: { prompt_tokens: 812, completion_tokens: 9 } });
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('Do you remember the cafe by the station, the rain, my umbrella?');
    await box.press('Enter');
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('Mina pours two cups.');
    await expect.poll(() => bubbles.last().getByTestId('reply-usage').textContent()).toBe('Own key: 821 tokens');
    expect(await bubbles.last().getByTestId('reply-usage').getAttribute('title')).toBe('812 sent · 9 written · story-model');
    const sessionId = await sessionOf(page);
    const stored = await messages(page, sessionId);
    expect(stored.at(-1)).toMatchObject({ tokenCount: 9, promptTokens: 812, creditsCharged: null });

    // Editing the greeting: full width, no regenerate (it answers nothing).
    await bubbles.first().getByRole('button', { name: 'Edit' }).click();
    const greetingEditor = bubbles.first().getByRole('form', { name: 'Message editor' });
    expect(await greetingEditor.getByRole('button', { name: 'Save and regenerate' }).count()).toBe(0);
    await greetingEditor.getByRole('button', { name: 'Cancel' }).click();

    // Editing the player's last message: the editor spans the conversation, its buttons in view,
    // and "Save and regenerate" writes the edit and a new reply from it.
    const mine = list.locator('li[data-role="user"]').last();
    await mine.getByRole('button', { name: 'Edit' }).click();
    const editor = mine.getByRole('form', { name: 'Message editor' });
    const listBox = (await list.boundingBox())!;
    const editorBox = (await editor.boundingBox())!;
    expect(editorBox.width).toBeGreaterThan(listBox.width * 0.85);
    expect(await inView(page, editor.getByRole('button', { name: 'Save and regenerate' }))).toBe(true);
    expect(await inView(page, editor.getByRole('button', { name: 'Cancel' }))).toBe(true);
    await page.screenshot({ path: screenPath('chat-edit-1280') });
    const edited = 'Do you remember the cafe by the station, the rain, my umbrella? And the roses?';
    await editor.getByLabel('Edit message').fill(edited);
    provider.enqueue({ kind: 'completion', content: 'Of course I remember.', usage: { prompt_tokens: 900, completion_tokens: 5 } });
    const before = provider.completions.length;
    await editor.getByRole('button', { name: 'Save and regenerate' }).click();
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('Of course I remember.');
    expect(provider.completions.length).toBe(before + 1);
    const sentUser = (provider.completions.at(-1)!.body!.messages as { role: string; content: string }[]).filter((m) => m.role === 'user').at(-1);
    expect(sentUser?.content).toBe(edited);
    await expect.poll(() => bubbles.last().getByTestId('reply-usage').textContent()).toBe('Own key: 905 tokens');
    const afterEdit = await messages(page, sessionId);
    expect(afterEdit.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
    expect(afterEdit[1]!.content).toBe(edited);
    expect(afterEdit[2]).toMatchObject({ content: 'Of course I remember.', tokenCount: 5, promptTokens: 900 });

    // What was sent for the player's turn: the prompt in the engine's order, the entries that fired and why.
    await mine.getByRole('button', { name: 'What was sent' }).click();
    const sent = page.getByRole('dialog', { name: 'What was sent' });
    await expect.poll(() => sent.getByTestId('fired-entries').locator('li').count()).toBeGreaterThan(3);
    const cafe = sent.getByTestId('fired-entries').locator('li[data-entry="cafe-memory"]');
    expect(await cafe.getAttribute('data-via')).toBe('keyword');
    expect(await cafe.textContent()).toContain('keyword “cafe” in the recent messages');
    expect(await sent.getByTestId('fired-entries').locator('li[data-entry="flower-language"]').textContent()).toContain('keyword “rose”');
    expect(await sent.getByTestId('fired-entries').locator('li[data-entry="mina-character"]').textContent()).toContain('always sent');
    // the player's message as sent, after the lore (step 6) and before what follows the conversation (step 13)
    const sentTexts = await sent.getByTestId('sent-messages').locator('li').allTextContents();
    const at = (text: string) => sentTexts.findIndex((t) => t.includes(text));
    expect(at(edited)).toBeGreaterThan(at('entry:cafe-memory'));
    expect(at(edited)).toBeLessThan(at('entry:tone-guard'));
    expect(at('entry:cafe-memory')).toBeGreaterThan(at('entry:mina-character'));
    expect(await sent.getByTestId('sent-messages').textContent()).toContain('1 earlier message of the conversation');
    // the same as the API answers the session's owner
    const api = await call(page, `/api/sessions/${sessionId}/messages/${afterEdit[1]!.id}/prompt`);
    expect(api.status).toBe(200);
    expect((api.body.prompt as { messages: unknown[] }).messages).toHaveLength(await sent.getByTestId('sent-messages').locator('li[data-source]').count() + 1);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenPath('chat-sent-prompt-1280') });
    await sent.getByRole('button', { name: 'Close' }).click();
    expect(await sent.count()).toBe(0);

    // Another account: 404, as for a session that does not exist.
    const stranger = await newPage();
    await signUp(server, stranger);
    const denied = await call(stranger, `/api/sessions/${sessionId}/messages/${afterEdit[1]!.id}/prompt`);
    expect(denied.status).toBe(404);
    expect((denied.body.error as { code: string }).code).toBe('NOT_FOUND');

    // The model, chosen in the player from the connection's list; the next turn is written by it.
    const picker = page.getByRole('combobox', { name: 'Model' });
    await expect.poll(() => picker.locator('option').allTextContents()).toEqual(['story-model', 'GPT-4o mini (openai/gpt-4o-mini)', 'DeepSeek R1 (free) (deepseek/deepseek-r1:free)']);
    expect(await picker.inputValue()).toBe('story-model');
    await picker.selectOption('openai/gpt-4o-mini');
    await expect.poll(async () => (await call(page, '/api/settings/ai')).body.defaultModel).toBe('openai/gpt-4o-mini');
    provider.enqueue(fakeReplies.completion('She laughs.'));
    await box.fill('Tell me more.');
    await box.press('Enter');
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('She laughs.');
    expect(provider.completions.at(-1)!.body!.model).toBe('openai/gpt-4o-mini');
    await page.reload();
    await expect.poll(() => page.getByRole('combobox', { name: 'Model' }).inputValue(), { timeout: 20_000 }).toBe('openai/gpt-4o-mini');

    // Deleting a checkpoint asks first; cancelling keeps it.
    await page.getByRole('button', { name: 'Save checkpoint' }).click();
    const checkpoints = page.getByRole('list', { name: 'Checkpoints' }).locator('li');
    await expect.poll(() => checkpoints.count()).toBe(1);
    await checkpoints.first().getByRole('button', { name: 'Delete checkpoint Checkpoint 1' }).click();
    const ask = page.getByRole('alertdialog');
    expect(await ask.textContent()).toContain('Delete the checkpoint "Checkpoint 1"?');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect(((await call(page, `/api/sessions/${sessionId}/checkpoints`)).body.checkpoints as unknown[]).length).toBe(1);
    await checkpoints.first().getByRole('button', { name: 'Delete checkpoint Checkpoint 1' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(async () => ((await call(page, `/api/sessions/${sessionId}/checkpoints`)).body.checkpoints as unknown[]).length).toBe(0);
    // Restoring one asks first too; deleting a message offers Undo instead (issue 50).
    await page.getByRole('button', { name: 'Save checkpoint' }).click();
    await expect.poll(() => checkpoints.count()).toBe(1);
    await checkpoints.first().getByRole('button', { name: 'Restore' }).click();
    expect(await page.getByRole('alertdialog').textContent()).toContain('Restore "Checkpoint 1"?');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    await list.locator('li[data-role="user"]').last().getByRole('button', { name: 'Delete' }).click();
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    await page.getByTestId('undo-notice').getByRole('button', { name: 'Undo' }).click();
    expect(await messages(page, sessionId)).toHaveLength(5);
    await expect.poll(() => bubbles.count()).toBe(5);
    expect(await seriousViolations(page)).toEqual([]);

    // At 390 px, in dark mode: the editor fits, its buttons in view, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    const lastMine = list.locator('li[data-role="user"]').last();
    await lastMine.getByRole('button', { name: 'Edit' }).click();
    const narrowEditor = lastMine.getByRole('form', { name: 'Message editor' });
    expect((await narrowEditor.boundingBox())!.width).toBeGreaterThan((await list.boundingBox())!.width * 0.85);
    for (const name of ['Save edit', 'Save and regenerate', 'Cancel']) expect(await inView(page, narrowEditor.getByRole('button', { name }))).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenPath('chat-edit-390') });
    await narrowEditor.getByRole('button', { name: 'Cancel' }).click();
    await lastMine.getByRole('button', { name: 'What was sent' }).click();
    await expect.poll(() => page.getByTestId('fired-entries').locator('li').count()).toBeGreaterThan(3);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenPath('chat-sent-prompt-390') });
    await page.getByRole('dialog', { name: 'What was sent' }).getByRole('button', { name: 'Close' }).click();

    // Settings → AI connection: the model from the connection's list; another one can still be typed.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${server.url}/app/settings#ai-config`);
    const form = page.getByRole('form', { name: 'AI connection' });
    const modelSelect = form.getByRole('combobox', { name: 'Default model' });
    await expect.poll(() => modelSelect.locator('option').count(), { timeout: 20_000 }).toBe(3);
    expect(await modelSelect.inputValue()).toBe('openai/gpt-4o-mini');
    await modelSelect.selectOption('deepseek/deepseek-r1:free');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await call(page, '/api/settings/ai')).body.defaultModel).toBe('deepseek/deepseek-r1:free');
    expect(await seriousViolations(page)).toEqual([]);
    await form.screenshot({ path: screenPath('settings-model-list-1280') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    // the model list is no wider than its form (a long model name does not widen it)
    const selectBox = (await modelSelect.boundingBox())!;
    const formBox = (await form.boundingBox())!;
    expect(selectBox.x + selectBox.width).toBeLessThanOrEqual(formBox.x + formBox.width + 0.5);
    await form.screenshot({ path: screenPath('settings-model-list-390') });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
    await modelSelect.selectOption({ label: 'Another model (type its id)…' });
    await form.getByRole('textbox', { name: 'Default model' }).fill('my/own-finetune');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await call(page, '/api/settings/ai')).body.defaultModel).toBe('my/own-finetune');
    expect(await seriousViolations(page)).toEqual([]);
  }, 240_000);

  it('on platform credits each reply shows its cost, as the server stored and charged it', async () => {
    const page = await newPage();
    await signUp(server, page);
    const world = await call(page, '/api/worlds', 'POST', { world: sampleWorld('willow-street') });
    await page.goto(`${server.url}/play/${world.body.id as string}`);
    const bubbles = page.getByTestId('messages').locator('li[data-message-id]');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(1);
    // No connection of the player's: the platform's model writes, nothing to choose.
    await expect.poll(() => page.getByTestId('model-picker').textContent()).toContain('paid with credits');
    provider.enqueue({ kind: 'completion', content: 'Hello from the platform.', usage: { prompt_tokens: 1500, completion_tokens: 500 } });
    await page.getByLabel('Message', { exact: true }).fill('Hi');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('Hello from the platform.');
    const sessionId = await sessionOf(page);
    // (the text shows while it streams; the charge is stored with the finished reply)
    await expect.poll(async () => (await messages(page, sessionId)).at(-1)!.creditsCharged, { timeout: 20_000 }).toBeGreaterThan(0);
    const reply = (await messages(page, sessionId)).at(-1)!;
    const charged = await server.ctx.db.primary.query<{ amount: string }>(`select amount from credit_ledger where kind = 'charge' order by id desc limit 1`);
    expect(reply.creditsCharged).toBe(-Number(charged.rows[0]!.amount));
    await expect.poll(() => bubbles.last().getByTestId('reply-usage').textContent()).toBe(`1,500 in · 500 out · ${reply.creditsCharged} ${reply.creditsCharged === 1 ? 'credit' : 'credits'}`);
    // Settings without a connection: the model is typed or left empty, and the note says what typing the URL and key does.
    await page.goto(`${server.url}/app/settings#ai-config`);
    const form = page.getByRole('form', { name: 'AI connection' });
    await expect.poll(() => form.getByTestId('model-list-note').textContent(), { timeout: 20_000 }).toContain('the provider’s models are listed here');
    expect(await form.getByRole('textbox', { name: 'Default model' }).count()).toBe(1);
    await call(page, '/api/settings/ai', 'PUT', { baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'typed-model', apiKey: 'k' });
    await page.reload();
    await expect.poll(() => form.getByTestId('model-list-note').textContent(), { timeout: 30_000 }).toContain('The connection failed:');
    expect(await form.getByRole('textbox', { name: 'Default model' }).inputValue()).toBe('typed-model');
  }, 120_000);

  it('Enter sends in the companion box; Shift+Enter starts a new line', async () => {
    const page = await newPage();
    await signUp(server, page, { displayName: 'Gardener' });
    await call(page, '/api/settings/ai', 'PUT', { baseUrl: provider.url, defaultModel: 'garden-model', apiKey: 'k' });
    await page.goto(`${server.url}/adventure/demo?level=1&speed=1`);
    await page.getByRole('button', { name: 'Talk to the companion' }).click();
    const panel = page.getByRole('dialog', { name: 'Companion' });
    const box = panel.getByLabel('Message');
    await box.fill('Sunflowers');
    await box.press('Shift+Enter');
    await box.pressSequentially('are nice');
    expect(await box.inputValue()).toBe('Sunflowers\nare nice');
    expect(provider.completions.filter((c) => c.body?.model === 'garden-model')).toHaveLength(0);
    provider.enqueue(fakeReplies.completion(JSON.stringify({ reply: 'They are, gardener.' })));
    await box.press('Enter');
    await expect.poll(() => panel.getByTestId('conversation').textContent(), { timeout: 20_000 }).toContain('They are, gardener.');
    expect(await box.inputValue()).toBe('');
    const sent = provider.completions.filter((c) => c.body?.model === 'garden-model');
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent[0]!.body!.messages)).toContain('Sunflowers\\nare nice');
  }, 120_000);
});
