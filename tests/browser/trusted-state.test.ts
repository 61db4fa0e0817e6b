import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import type { TestServer } from '../support/server.ts';
import { finishSignUpInPage, signUp } from '../support/sign-up.ts';

/**
 * Issue 30 A: a state players can trust, in the real player, checked against what the server
 * stored (read back through the API and the database), not only the screen.
 */

interface StoredMessage {
  id: string;
  role: string;
  content: string;
  status: string;
  errorMessage: string | null;
  failure?: { code: string; message: string } | null;
  stateSnapshot: { variables: Record<string, unknown> } | null;
  swipes: { content: string; snapshot: { variables: Record<string, unknown> } | null }[];
  activeSwipeIndex: number;
}
interface StoredSession {
  session: { id: string; state: { variables: Record<string, unknown> } };
  messages: StoredMessage[];
}

/** The open world's newest session as the API answers it to its player. */
async function storedSession(page: Page, worldId: string): Promise<StoredSession> {
  return page.evaluate(async (id) => {
    const list = (await (await fetch(`/api/worlds/${id}/sessions`)).json()) as { sessions: { id: string }[] };
    return (await (await fetch(`/api/sessions/${list.sessions[0]!.id}`)).json()) as StoredSession;
  }, worldId);
}

const items = (v: Record<string, unknown>) => (v.inventory as { items: string[] }).items;

describe('issue 30 A: a state players can trust', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;

  useBrowserPlatform({ provider: { apiKey: 'state-key' } }, (p) => ({ server, browser, provider } = p));

  it('A1: regenerate and continue start from the state the turn started from, the potion drunk before it included; each swipe keeps its own', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    const worldId = (await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'state-key', worlds: [sampleWorld('ashen-depths')] }))[0]!;
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);

    // A goblin: HP 82.
    provider.enqueue({ kind: 'completion', content: 'A goblin stabs you. [hp: -18]' });
    await frame.getByLabel('Message').fill('I go down the stairs');
    await frame.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.getByText('HP 82/100').count(), { timeout: 20_000 }).toBe(1);

    // The interface's action: the potion is drunk (HP 82 → 100, the potion leaves the bag).
    await frame.getByRole('button', { name: 'Drink potion' }).click();
    await expect.poll(() => frame.getByText('HP 100/100').count()).toBe(1);
    expect(await frame.getByRole('button', { name: /Bag/ }).textContent()).toContain('Bag (2)');

    // The next turn starts from there: a dart, HP 90.
    provider.enqueue({ kind: 'completion', content: 'A dart trap clicks. [hp: -10]' });
    await frame.getByLabel('Message').fill('I walk on');
    await frame.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.getByText('HP 90/100').count(), { timeout: 20_000 }).toBe(1);

    // Regenerate (the player's button beside the interface): the new reply starts from HP 100
    // without the potion, the state the original turn started from (not HP 82 with the potion back).
    provider.enqueue({ kind: 'completion', content: 'The dart only grazes you. [hp: -5]' });
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => frame.getByText('HP 95/100').count(), { timeout: 20_000 }).toBe(1);
    let stored = await storedSession(page, worldId);
    expect(stored.session.state.variables.hp).toBe(95);
    expect(items(stored.session.state.variables)).not.toContain('healing-potion');
    let reply = stored.messages.at(-1)!;
    expect(reply.swipes.map((s) => s.snapshot?.variables.hp)).toEqual([90, 95]);
    expect(reply.swipes.map((s) => items(s.snapshot!.variables).includes('healing-potion'))).toEqual([false, false]);
    // The player's message keeps the state its turn started from.
    expect(stored.messages.at(-2)!.stateSnapshot?.variables.hp).toBe(100);
    // The regeneration's prompt carried the same state as the original turn's.
    const prompts = provider.completions.slice(-2).map((c) => JSON.stringify(c.body!.messages));
    expect(prompts[1]).toBe(prompts[0]);

    // Continue: the whole reply again from the turn's start state (100 - 5 - 1 = 94).
    provider.enqueue({ kind: 'completion', content: ' You limp on. [hp: -1]' });
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => frame.getByText('HP 94/100').count(), { timeout: 20_000 }).toBe(1);
    stored = await storedSession(page, worldId);
    expect(stored.session.state.variables.hp).toBe(94);
    reply = stored.messages.at(-1)!;
    expect(reply.swipes.map((s) => s.snapshot?.variables.hp)).toEqual([90, 94]);

    // Each swipe keeps its own result, in the session's state too.
    await page.getByRole('button', { name: 'Previous reply' }).click();
    await expect.poll(() => frame.getByText('HP 90/100').count(), { timeout: 20_000 }).toBe(1);
    expect((await storedSession(page, worldId)).session.state.variables.hp).toBe(90);
    await page.getByRole('button', { name: 'Next reply' }).click();
    await expect.poll(() => frame.getByText('HP 94/100').count(), { timeout: 20_000 }).toBe(1);
    expect((await storedSession(page, worldId)).session.state.variables.hp).toBe(94);

    // In the database: the user message holds the turn's start state.
    const { rows } = await server.ctx.db.primary.query<{ role: string; state_snapshot: string | null }>(
      `select m.role, m.state_snapshot from chat_messages m join chat_sessions s on s.id = m.session_id where s.world_id = $1 order by m.position`,
      [worldId],
    );
    const userStates = rows.filter((r) => r.role === 'user').map((r) => (JSON.parse(r.state_snapshot!) as { variables: Record<string, unknown> }).variables.hp);
    expect(userStates).toEqual([100, 100]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('A3: without a persona, {{user}} is the account\'s display name, before the world\'s default', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    // An e-mail sign-up through the page, with the display name "Alice" (no username, no persona).
    const email = `alice-${Date.now()}@example.com`;
    await page.goto(`${server.url}/signup`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Display name').fill('Alice');
    await page.getByLabel('Password').fill('long enough pw');
    await page.getByRole('button', { name: /sign up|create/i }).click();
    await finishSignUpInPage(server, page, email, 'long enough pw');
    const world = sampleWorld('willow-street') as Record<string, unknown> & { name: string; entries: { role: string; content: string }[]; settings: Record<string, unknown> };
    world.entries = world.entries.map((e) => (e.role === 'greeting' ? { ...e, content: 'Mina waves. "Evening, {{user}}!"' } : e));
    world.settings = { ...world.settings, playerName: 'User' };
    const worldId = await page.evaluate(
      async ({ providerUrl, world }) => {
        await fetch('/api/settings/ai', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'state-key' }) });
        const res = await fetch('/api/worlds', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ world }) });
        return ((await res.json()) as { id: string }).id;
      },
      { providerUrl: provider.url, world },
    );
    await page.goto(`${server.url}/play/${worldId}`);
    const bubbles = page.locator('[data-testid="messages"] li[data-message-id]');
    await expect.poll(() => bubbles.first().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('Mina waves. "Evening, Alice!"');
    expect(await bubbles.first().locator('.chat-name').textContent()).not.toBe('Alice');
    // Stored so: the greeting the server wrote, and the name the next prompt gives the player.
    expect((await storedSession(page, worldId)).messages[0]!.content).toBe('Mina waves. "Evening, Alice!"');
    provider.enqueue({ kind: 'completion', content: 'Mina hands you a towel.' });
    await page.getByLabel('Message', { exact: true }).fill('Hi');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(3);
    const prompt = JSON.stringify(provider.completions.at(-1)!.body!.messages);
    expect(prompt).toContain('Evening, Alice!');
    expect(prompt).not.toMatch(/\bUser\b/);
    // The player's own bubble names them by the display name too.
    expect(await bubbles.nth(1).locator('.chat-name').textContent()).toBe('Alice');
    await page.close();
  }, 120_000);

  it('A2: a failed turn is a notice beside the player\'s message with Retry (and Settings when the connection is the cause), never the world\'s message, the history or the interface\'s messages', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    // No AI connection at all: a player who signed up and went straight to a world.
    await signUp(server, page);
    const worldId = await page.evaluate(async (world) => {
      const res = await fetch('/api/worlds', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ world }) });
      return ((await res.json()) as { id: string }).id;
    }, sampleWorld('willow-street'));
    await page.goto(`${server.url}/play/${worldId}`);
    const bubbles = page.locator('[data-testid="messages"] li[data-message-id]');
    await expect.poll(() => bubbles.count(), { timeout: 20_000 }).toBe(1);
    await page.getByLabel('Message', { exact: true }).fill('Hello?');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const notice = page.getByTestId('turn-failure');
    await expect.poll(() => notice.count(), { timeout: 20_000 }).toBe(1);
    // Beside the player's message, not a bubble of the world; a link to the AI connection settings.
    expect(await bubbles.count()).toBe(2);
    expect(await bubbles.last().getAttribute('data-role')).toBe('user');
    expect(await bubbles.last().getByTestId('turn-failure').count()).toBe(1);
    expect(await page.locator('[data-testid="messages"] li[data-role="assistant"][data-status="failed"]').count()).toBe(0);
    expect(await notice.getByRole('button', { name: 'Retry' }).count()).toBe(1);
    expect(await notice.getByRole('link', { name: 'Settings → AI connection' }).getAttribute('href')).toBe('/app/settings#ai-config');
    // No second copy of the error on the page.
    expect(await page.locator('.chat > p[role="alert"]').count()).toBe(0);
    // Stored so: the failure is on the player's message, no reply of the world was kept.
    let stored = await storedSession(page, worldId);
    expect(stored.messages.map((m) => [m.role, m.status])).toEqual([
      ['assistant', 'complete'],
      ['user', 'complete'],
    ]);
    expect(stored.messages[1]!.failure?.code).toBe('AI_NO_PROVIDER');
    expect(stored.messages[1]!.failure?.message).toMatch(/\S/);
    const count = await server.ctx.db.primary.query<{ message_count: number; n: number }>(
      `select s.message_count, (select count(*)::int from chat_messages m where m.session_id = s.id) as n from chat_sessions s where s.world_id = $1`,
      [worldId],
    );
    expect(count.rows[0]).toEqual({ message_count: 2, n: 2 });
    // The link goes to Settings → AI connection.
    await notice.getByRole('link', { name: 'Settings → AI connection' }).click();
    await page.waitForURL(/\/app\/settings/);
    expect(new URL(page.url()).hash).toBe('#ai-config');

    // Connected now: Retry writes the reply to the same message; the notice goes, and the history
    // the model receives has the player's message once and nothing of the failure.
    await page.evaluate(async (providerUrl) => {
      await fetch('/api/settings/ai', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'state-key' }) });
    }, provider.url);
    await page.goto(`${server.url}/play/${worldId}`);
    await expect.poll(() => page.getByTestId('turn-failure').count(), { timeout: 20_000 }).toBe(1);
    provider.enqueue({ kind: 'completion', content: 'Mina looks up. "Yes?"' });
    await page.getByTestId('turn-failure').getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('Mina looks up. "Yes?"');
    await expect.poll(() => page.getByTestId('turn-failure').count()).toBe(0);
    stored = await storedSession(page, worldId);
    expect(stored.messages.map((m) => [m.role, m.status, m.failure ?? null])).toEqual([
      ['assistant', 'complete', null],
      ['user', 'complete', null],
      ['assistant', 'complete', null],
    ]);
    const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
    expect(sent.filter((m) => m.content === 'Hello?')).toHaveLength(1);

    // A provider error: the same notice (no Settings link: the connection is not the cause); the
    // next turn's history carries nothing of it.
    provider.enqueue({ kind: 'error', status: 500, body: { error: { message: 'upstream exploded' } } });
    await page.getByLabel('Message', { exact: true }).fill('Are you there?');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await expect.poll(() => page.getByTestId('turn-failure').count(), { timeout: 20_000 }).toBe(1);
    expect(await page.getByTestId('turn-failure').getByRole('link').count()).toBe(0);
    expect(await bubbles.last().getAttribute('data-role')).toBe('user');
    provider.enqueue({ kind: 'completion', content: 'She nods.' });
    await page.getByLabel('Message', { exact: true }).fill('Hello again');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await expect.poll(() => bubbles.last().locator('[data-testid="message-text"]').textContent(), { timeout: 20_000 }).toBe('She nods.');
    const history = JSON.stringify(provider.completions.at(-1)!.body!.messages);
    expect(history).not.toContain('upstream exploded');
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('A2 in a world\'s own interface: a dropped stream leaves no bubble of the world; the interface gets turnError and the yumina:turnerror event, and retries', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const worldId = (await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'state-key', worlds: [sampleWorld('ashen-depths')] }))[0]!;
    await page.goto(`${server.url}/play/${worldId}`);
    const frameLocator = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frameLocator.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    await frame.evaluate(() => {
      const w = window as unknown as { turnErrors: unknown[] };
      w.turnErrors = [];
      window.addEventListener('yumina:turnerror', (e) => w.turnErrors.push((e as CustomEvent).detail));
    });
    provider.enqueue({ kind: 'drop', content: 'The stairs crumble and', chunks: 2 });
    await frameLocator.getByLabel('Message').fill('I go down the stairs');
    await frameLocator.getByRole('button', { name: 'Send' }).click();
    const notice = frameLocator.locator('[data-yumina="turn-error"]');
    await expect.poll(() => notice.count(), { timeout: 20_000 }).toBe(1);
    const stored = await storedSession(page, worldId);
    const mine = stored.messages.at(-1)!;
    // The world's greeting, then the player's message: no reply of the world.
    expect(stored.messages.map((m) => m.role)).toEqual(['assistant', 'user']);
    expect(mine.failure?.code).toMatch(/^AI_/);
    const seen = (await frame.evaluate(() => ({
      events: (window as unknown as { turnErrors: unknown[] }).turnErrors,
      state: (window as unknown as { yumina: { turnError: unknown; error: unknown; messages: { role: string }[] } }).yumina,
    }))) as { events: { messageId: string; code: string; connection: boolean }[]; state: { turnError: { messageId: string }; error: unknown; messages: { role: string }[] } };
    expect(seen.events).toHaveLength(1);
    expect(seen.events[0]).toMatchObject({ messageId: mine.id, code: mine.failure!.code, connection: false });
    expect(seen.state.turnError).toMatchObject({ messageId: mine.id });
    // Seed 002 §4 (docs/SANDBOX.md): `error` holds the last failure too, not only the platform's turnError.
    expect(seen.state.error).toBe(mine.failure!.message);
    expect(seen.state.messages.map((m) => m.role)).toEqual(['assistant', 'user']);
    // The interface's messages hold no reply (no empty dark bubble): the greeting and the player's message only.
    expect(await frameLocator.locator('[data-yumina="messages"] [data-message-index]').count()).toBe(2);
    expect(await frameLocator.locator('[data-yumina="messages"]').textContent()).not.toContain('The stairs crumble');
    // Retry from the interface's notice: the reply arrives, the state applies, the notice goes.
    provider.enqueue({ kind: 'completion', content: 'You reach the bottom, bruised. [hp: -5]' });
    await notice.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => frameLocator.getByText('HP 95/100').count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => notice.count()).toBe(0);
    expect(await frame.evaluate(() => (window as unknown as { yumina: { error: unknown } }).yumina.error)).toBeNull();
    const sent = JSON.stringify(provider.completions.at(-1)!.body!.messages);
    expect(sent).not.toContain('The stairs crumble');
    const after = await storedSession(page, worldId);
    expect(after.messages.map((m) => [m.role, m.status, m.failure ?? null])).toEqual([
      ['assistant', 'complete', null],
      ['user', 'complete', null],
      ['assistant', 'complete', null],
    ]);
    await page.close();
  }, 120_000);
});
