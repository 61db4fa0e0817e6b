import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import type { TestServer } from '../support/server.ts';

/** Rain on Willow Street (no interface) with a greeting that names the player. */
function chatWorld() {
  const world = sampleWorld('willow-street') as unknown as Record<string, unknown> & { name: string; entries: { role: string; content: string }[] };
  world.name = 'Willow Chat';
  world.entries = world.entries.map((e) => (e.role === 'greeting' ? { ...e, content: 'Mina waves. "Evening, {{user}}!"' } : e));
  return world;
}

describe('the default chat in the real player', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;

  useBrowserPlatform({ provider: { apiKey: 'chat-key' } }, (p) => ({ server, browser, provider } = p));

  /** A new page, signed up (with `persona`, when given) with the chat world, on its player. */
  async function openChat(persona?: { name: string }): Promise<Page> {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [worldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'chat-key', worlds: [chatWorld()], persona });
    await page.goto(`${server.url}/play/${worldId}`);
    return page;
  }

  it('greets the persona by name; Markdown, Enter and Shift+Enter, typing indicator; edit, delete, continue, branch and session switch survive a reload', async () => {
    const page = await openChat({ name: 'Captain Vale' });
    const messages = page.locator('[data-testid="messages"]');
    const bubbles = messages.locator('li[data-message-id]');

    // {{user}} in the greeting is the active persona's name.
    await expect.poll(() => bubbles.first().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('Mina waves. "Evening, Captain Vale!"');
    expect(await bubbles.first().locator('.chat-avatar').count()).toBe(1);

    // Shift+Enter breaks the line; Enter sends. The message shows at once, and the typing
    // indicator stays until the first token of a slow provider (3 s).
    provider.enqueue({ kind: 'completion', content: 'She *smiles* and hands you **tea**.\n\n- a towel\n- a biscuit', chunks: 1, chunkDelayMs: 3000 });
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('Hello');
    await box.press('Shift+Enter');
    await box.pressSequentially('Mina');
    expect(await box.inputValue()).toBe('Hello\nMina');
    await box.press('Enter');
    await expect.poll(() => messages.locator('li[data-role="user"]').last().textContent(), { timeout: 5_000 }).toContain('Mina');
    await expect.poll(() => page.locator('[data-testid="typing"]').count(), { timeout: 2_000 }).toBe(1);
    expect(await box.inputValue()).toBe('');
    // Still thinking a moment later (no token yet).
    await page.waitForTimeout(1000);
    expect(await page.locator('[data-testid="typing"]').count()).toBe(1);
    const reply = bubbles.last();
    await expect.poll(() => reply.locator('em').textContent(), { timeout: 20_000 }).toBe('smiles');
    await expect.poll(() => page.locator('[data-testid="typing"]').count()).toBe(0);
    expect(await reply.locator('strong').textContent()).toBe('tea');
    expect(await reply.locator('li').allTextContents()).toEqual(['a towel', 'a biscuit']);
    const sent = (provider.completions.at(-1)!.body!.messages as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content);
    expect(sent).toContain('Hello\nMina');

    // Markdown is sanitized: markup in a reply stays text.
    provider.enqueue({ kind: 'completion', content: 'A note: <img src=x onerror="window.hacked=1"> *done*' });
    await box.fill('What does the note say?');
    await box.press('Enter');
    await expect.poll(() => bubbles.last().locator('em').textContent(), { timeout: 20_000 }).toBe('done');
    expect(await bubbles.last().locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { hacked?: number }).hacked)).toBeUndefined();

    // Delete (with a few seconds to undo it): the last exchange goes; the edit below waits for the delete.
    await messages.locator('li[data-role="user"]').last().getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => bubbles.count()).toBe(3);

    // Edit the reply, then continue it.
    await bubbles.last().getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Edit message').fill('She smiles.');
    await page.getByRole('button', { name: 'Save edit' }).click();
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent()).toBe('She smiles.');
    provider.enqueue({ kind: 'completion', content: ' Then she laughs.' });
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('She smiles. Then she laughs.');

    // All of it survives a reload.
    await page.reload();
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('She smiles. Then she laughs.');
    expect(await bubbles.count()).toBe(3);
    const original = await page.getByRole('combobox', { name: 'Session' }).inputValue();

    // Branch from the greeting: a new session with just the greeting, listed in the switcher.
    await bubbles.first().getByRole('button', { name: 'Branch from here' }).click();
    await expect.poll(() => page.getByRole('combobox', { name: 'Session' }).inputValue()).not.toBe(original);
    await expect.poll(() => bubbles.count()).toBe(1);
    expect(await page.getByRole('combobox', { name: 'Session' }).locator('option').count()).toBe(2);
    const branch = await page.getByRole('combobox', { name: 'Session' }).inputValue();

    // Switch back to the original session, and after a reload both are still there.
    await page.getByRole('combobox', { name: 'Session' }).selectOption(original);
    await expect.poll(() => bubbles.count()).toBe(3);
    await page.reload();
    await expect.poll(() => page.getByRole('combobox', { name: 'Session' }).locator('option').count(), { timeout: 20_000 }).toBe(2);
    expect(await page.getByRole('combobox', { name: 'Session' }).inputValue()).toBe(original);
    await expect.poll(() => bubbles.count()).toBe(3);
    await page.getByRole('combobox', { name: 'Session' }).selectOption(branch);
    await expect.poll(() => bubbles.count()).toBe(1);
    await page.close();
  }, 120_000);

  it('a failed reply shows its error beside the player\'s message, with a retry', async () => {
    const page = await openChat();
    const bubbles = page.locator('[data-testid="messages"] li[data-message-id]');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(1);
    // Without a persona the account's display name greets.
    expect(await bubbles.first().textContent()).not.toContain('{{user}}');
    provider.enqueue({ kind: 'error', status: 500, body: { error: { message: 'upstream exploded' } } });
    await page.getByLabel('Message', { exact: true }).fill('Hi');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const failed = page.getByTestId('turn-failure');
    await expect.poll(() => failed.count(), { timeout: 20_000 }).toBe(1);
    expect(await bubbles.last().getAttribute('data-role')).toBe('user');
    expect(await failed.textContent()).toMatch(/\S/);
    provider.enqueue({ kind: 'completion', content: 'Second time lucky.' });
    await failed.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('Second time lucky.');
    await expect.poll(() => page.getByTestId('turn-failure').count()).toBe(0);
    await page.close();
  }, 120_000);

  it("the player's message and the streamed reply stay on screen until the stored ones replace them, however late the session is read back", async () => {
    const page = await openChat();
    const messages = page.locator('[data-testid="messages"]');
    await messages.locator('li[data-message-id]').first().waitFor();
    // Reads of the session (not its checkpoints) are held back while `holding`: a slow network.
    let holding = false;
    const held: (() => void)[] = [];
    await page.route(/\/api\/sessions\/[^/?]+(\?[^/]*)?$/, async (route) => {
      if (route.request().method() === 'GET' && holding) await new Promise<void>((r) => held.push(r));
      await route.continue();
    });
    provider.enqueue({ kind: 'completion', content: 'The kettle sings.', chunks: 2, chunkDelayMs: 300 });
    holding = true;
    await page.getByLabel('Message', { exact: true }).fill('Tea, please');
    await page.getByRole('button', { name: 'Send' }).click();
    const shown = () => page.evaluate(() => document.querySelector('[data-testid="messages"]')!.textContent ?? '');
    // While the reply streams and after it ended, with every read of the session still held:
    // the player's message never disappears, and the streamed reply stays once complete.
    const seen: string[] = [];
    for (let i = 0; i < 25; i++) {
      seen.push(await shown());
      await page.waitForTimeout(100);
    }
    expect(seen.filter((text) => !text.includes('Tea, please'))).toEqual([]);
    expect(seen.at(-1)).toContain('The kettle sings.');
    expect(held.length).toBeGreaterThan(0);
    holding = false;
    for (const release of held) release();
    await expect.poll(() => messages.locator('li[data-message-id][data-role="user"]').last().textContent(), { timeout: 20_000 }).toContain('Tea, please');
    await expect.poll(() => page.getByTestId('streaming').count()).toBe(0);
    // Once stored: each shown once (the message sent is not shown twice).
    expect((await shown()).split('Tea, please')).toHaveLength(2);
    expect((await shown()).split('The kettle sings.')).toHaveLength(2);
    await page.close();
  }, 90_000);
});
