import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

const harbor = readFileSync(new URL('../fixtures/cards/harbor-keeper.png', import.meta.url));
const chat = readFileSync(new URL('../fixtures/chats/harbor-keeper.jsonl', import.meta.url));
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 100 });

/** Issue 49 point 10 in the player: a SillyTavern chat imported as a new session (with what was not carried said), and the session exported. */
describe('chats in and out, in the player', () => {
  let server: TestServer;
  let browser: Browser;

  useBrowserPlatform({}, (p) => ({ server, browser } = p));

  it('imports a SillyTavern chat into a new session, says what was not carried, and exports the session (1280 and 390 px)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `chat-transfer-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Ada' });
    const imported = await context.request.post(`${server.url}/api/worlds/import?name=harbor-keeper.png`, { headers: { 'content-type': 'image/png' }, data: harbor });
    expect(imported.status()).toBe(201);
    const worldId = ((await imported.json()) as { id: string }).id;

    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.url}/play/${worldId}`);
      const items = page.locator('[data-testid="messages"] li[data-role]');
      await poll(() => items.count()).toBeGreaterThan(0);
      const transfer = page.getByTestId('chat-transfer');
      await transfer.locator('summary').click();
      await transfer.getByLabel('Import a SillyTavern chat (.jsonl) as a new session').setInputFiles({ name: 'evening at the light.jsonl', mimeType: 'application/jsonl', buffer: chat });
      const report = page.getByTestId('chat-import-report');
      await poll(() => report.textContent()).toContain('Imported 6 messages with 5 alternative replies (swipes).');
      expect(await report.textContent()).toContain('Replies by 1 other character ("Old Salt")');
      expect(await report.textContent()).toContain('Your name in the chat was "Wanderer"');
      // The new session is open: its messages, its title in the switcher.
      await poll(() => items.count()).toBe(6);
      expect(await items.nth(2).textContent()).toContain('Last light before the Teeth.');
      expect(await page.getByLabel('Session', { exact: true }).locator('option:checked').textContent()).toContain('evening at the light');
      await transfer.scrollIntoViewIfNeeded();
      await page.screenshot({ path: screenPath(`player-chat-transfer-${width}`), fullPage: width === 390 });

      // Export: the .jsonl link is the session as a SillyTavern chat.
      const href = await transfer.getByRole('link', { name: 'Export for SillyTavern (.jsonl)' }).getAttribute('href');
      const file = await context.request.get(`${server.url}${href}`);
      expect(file.status()).toBe(200);
      const lines = (await file.text()).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toHaveLength(7);
      expect(lines[3]).toMatchObject({ is_user: false, swipe_id: 1, mes: '"Gull Point. Last light before the Teeth." *He hands you tea.*' });
      const markdown = await context.request.get(`${server.url}${await transfer.getByRole('link', { name: 'Export as text (Markdown)' }).getAttribute('href')}`);
      expect(await markdown.text()).toContain('# evening at the light');
    }
    await context.close();
  }, 180_000);
});
