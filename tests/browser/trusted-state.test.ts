import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import type { TestServer } from '../support/server.ts';

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
    const [worldId] = await signUpWithWorlds(page, { providerUrl: provider.url, apiKey: 'state-key', worlds: [sampleWorld('ashen-depths')] });
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
});
