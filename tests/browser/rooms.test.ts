import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { screenPath } from '../support/screens.ts';
import { Browser } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';
import { startTopology, type Topology } from '../support/topology.ts';

/**
 * Rooms in the browser (issue 45, docs/ROOMS.md) on the local production topology: two
 * container-mode replicas behind the router, the host on one, the player and the spectator on the
 * other (the router's `topology-replica` cookie seats each Chromium context). The host allows rooms
 * in the studio and opens one from the world's page; the player joins by the invite link while
 * signed out (signs in on the way and lands in the room); the spectator joins and reads along. A
 * round in each AI trigger mode (manual, timer, round, instant) and both speech modes (free,
 * turn-based); a per-player value only its player sees; then the replica writing a reply is killed:
 * its members reconnect to the other, the messages stay, the reply fails visibly and the host's
 * retry answers it.
 */
const root = resolve(import.meta.dirname, '../..');
const sample = JSON.parse(readFileSync(resolve(root, 'packages/world/samples/ashen-depths.json'), 'utf8')) as Record<string, unknown>;

describe('rooms in the browser, across two replicas', () => {
  let database: TestDatabase;
  let provider: FakeOpenAi;
  let topology: Topology;
  let chromium: Chromium;
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-rooms-browser-'));
  const outbox = join(dataDir, 'outbox');

  beforeAll(async () => {
    [database, provider, chromium] = await Promise.all([createTestDatabase({ migrated: true }), startFakeOpenAi({ apiKey: 'host-key' }), launchBrowser()]);
    topology = await startTopology({ databaseUrl: database.url, dataDir, outbox });
  }, 180_000);

  afterAll(async () => {
    await chromium?.close();
    await topology?.stop();
    await provider?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('host, player and spectator play a round in each mode; a per-player value stays its player’s; a killed replica loses nothing', async () => {
    const { url, replicas } = topology.ready;
    const [one, two] = replicas as [(typeof replicas)[number], (typeof replicas)[number]];
    const server = { url, outbox };
    /** A Chromium context seated on a replica by the router's cookie. */
    const seated = async (replica: string): Promise<{ context: BrowserContext; page: Page }> => {
      const context = await chromium.newContext({ viewport: { width: 1280, height: 900 } });
      await context.addCookies([{ name: 'topology-replica', value: replica, url }]);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      return { context, page };
    };
    const host = await seated(one.id);
    const player = await seated(two.id);
    const spectator = await seated(two.id);

    // The host: an account, an AI connection (the host pays), a world of their own.
    await signUp(server, host.context, { displayName: 'Hana' });
    expect((await host.context.request.put(`${url}/api/settings/ai`, { data: { baseUrl: provider.url, defaultModel: 'room-model', apiKey: 'host-key' } })).ok()).toBe(true);
    const world = (await (await host.context.request.post(`${url}/api/worlds`, { data: { world: sample } })).json()) as { id: string };

    // Rooms are off until the author allows them in the studio; then the world's page offers Play together.
    await host.page.goto(`${url}/worlds/${world.id}`);
    await host.page.getByTestId('world-name').waitFor();
    expect(await host.page.getByTestId('play-together').count()).toBe(0);
    await host.page.goto(`${url}/studio/${world.id}`);
    const allow = host.page.getByRole('switch', { name: /Allow rooms/ });
    expect(await allow.isChecked()).toBe(false);
    await allow.click();
    await host.page.getByText('Players may now open rooms on this world.').waitFor();
    expect(await allow.isChecked()).toBe(true);
    await shoot(host.page, 'room-allow', '[aria-label="Overview"]');
    await host.page.goto(`${url}/worlds/${world.id}`);
    await host.page.getByTestId('play-together').click();
    const dialog = host.page.getByRole('dialog', { name: /together/ });
    await dialog.getByLabel(/^Manual/).check();
    await dialog.getByLabel(/^Free/).check();
    // who pays is said before the room opens: the host's own connection, with its model
    await expect.poll(() => dialog.getByTestId('room-payer-terms').textContent()).toMatch(/host’s own AI connection \(model room-model\)/);
    expect(await seriousViolations(host.page)).toEqual([]);
    await shoot(host.page, 'room-open');
    await dialog.getByRole('button', { name: 'Open the room' }).click();
    await host.page.waitForURL(/\/rooms\/[^/]+$/);
    const roomId = new URL(host.page.url()).pathname.split('/').pop()!;
    await host.page.getByTestId('room-connection').and(host.page.locator('[data-state="live"]')).waitFor();

    // Invite links: one for a player, one for a spectator (shown once, in the page).
    const makeLink = async (role: 'player' | 'spectator') => {
      await host.page.getByLabel('Invite as').selectOption(role);
      await host.page.getByRole('button', { name: 'Make a link' }).click();
      const link = await host.page.locator(`[data-testid="invite-link"][data-role="${role}"]`).inputValue();
      await host.page.getByRole('button', { name: 'Copy' }).waitFor();
      return `${url}${new URL(link).pathname}${new URL(link).hash}`;
    };
    const playerLink = await makeLink('player');
    await expect.poll(() => host.page.getByTestId('invite-list').locator('li').count()).toBe(1);
    const spectatorLink = await makeLink('spectator');
    expect(spectatorLink).not.toBe(playerLink);

    // The player has an account but is signed out here: the link's page says what it invites to, the
    // sign-in comes back to it, and the join happens without another click.
    const ann = await signUp(server, new Browser(url), { displayName: 'Ann' });
    await player.page.goto(playerLink);
    await player.page.getByTestId('join-page').waitFor();
    expect(await player.page.getByTestId('join-world').textContent()).toBe(sample.name);
    expect(await player.page.getByTestId('join-host').textContent()).toBe('Hana');
    expect(await player.page.getByTestId('join-role').textContent()).toBe('a player');
    expect(await seriousViolations(player.page)).toEqual([]);
    await shoot(player.page, 'room-join');
    await player.page.getByRole('link', { name: 'Sign in to join' }).click();
    await player.page.getByLabel('E-mail').fill(ann.email);
    await player.page.getByLabel('Password').fill(ann.password);
    await player.page.getByRole('button', { name: 'Sign in' }).click();
    await player.page.waitForURL(`${url}/rooms/${roomId}`);
    await player.page.getByTestId('room-page').and(player.page.locator('[data-role="player"]')).waitFor();

    // The spectator, signed in, joins with a click.
    await signUp(server, spectator.context, { displayName: 'Wes' });
    await spectator.page.goto(spectatorLink);
    await spectator.page.getByRole('button', { name: 'Join the room' }).click();
    await spectator.page.waitForURL(`${url}/rooms/${roomId}`);
    await spectator.page.getByTestId('room-page').and(spectator.page.locator('[data-role="spectator"]')).waitFor();
    const pages = [host.page, player.page, spectator.page];

    // Everyone sees everyone online; the spectator cannot write (the page, and the API behind it).
    for (const page of pages) {
      for (const name of ['Hana', 'Ann', 'Wes']) await page.locator(`[data-testid="room-members"] li[data-member="${name}"][data-online="true"]`).waitFor();
    }
    expect(await spectator.page.getByLabel('Your message').isDisabled()).toBe(true);
    expect(await spectator.page.getByTestId('composer-note').textContent()).toMatch(/spectator/);
    expect(await spectator.page.evaluate(async (id) => (await fetch(`/api/rooms/${id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'let me in' }) })).status, roomId)).toBe(403);

    const say = async (page: Page, text: string) => {
      await page.getByLabel('Your message').fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
    };
    const replies = (page: Page) => page.locator('[data-testid="room-messages"] li[data-role="assistant"][data-status="complete"]');
    /** Every member sees the reply `text` as the conversation's newest message. */
    const everyoneSees = async (text: string) => {
      for (const page of pages) await replies(page).last().filter({ hasText: text }).waitFor();
    };
    const roundState = (page: Page) => page.getByTestId('round-state').getAttribute('data-state');

    // 1. Manual, free speech: the player's message waits, visible to all, until the host presses Reply now.
    await say(player.page, 'I light my torch');
    for (const page of pages) await page.locator('[data-testid="room-queue"] li[data-author="Ann"]', { hasText: 'I light my torch' }).waitFor();
    for (const page of pages) await expect.poll(() => roundState(page)).toBe('collecting');
    provider.enqueue({ kind: 'completion', content: 'The torch flares over the stairs.', chunks: 3 });
    await host.page.getByRole('button', { name: 'Reply now' }).click();
    await everyoneSees('The torch flares over the stairs.');
    for (const page of pages) await page.locator('[data-testid="room-messages"] li[data-role="user"][data-author="Ann"]', { hasText: 'I light my torch' }).waitFor();
    expect(JSON.stringify(provider.completions.at(-1)!.body)).toContain('Ann');

    // 2. Timer: the reply comes by itself, 2 seconds after the round's first message.
    await host.page.getByLabel('When the AI answers').selectOption('timer');
    await host.page.getByLabel('Timer seconds').fill('2');
    await host.page.getByRole('button', { name: 'Set' }).click();
    for (const page of pages) await expect.poll(() => page.getByTestId('room-modes').textContent()).toMatch(/timer \(2 s\)/);
    provider.enqueue({ kind: 'completion', content: 'Echoes answer from below.', chunks: 2 });
    await say(player.page, 'I listen');
    await everyoneSees('Echoes answer from below.');

    // 3. Round: once every player online has written (the spectator is no player).
    await host.page.getByLabel('When the AI answers').selectOption('round');
    for (const page of pages) await expect.poll(() => page.getByTestId('room-modes').textContent()).toMatch(/round/);
    await say(host.page, 'I keep watch at the door');
    for (const page of pages) await page.locator('[data-testid="room-queue"] li[data-author="Hana"]').waitFor();
    expect(await roundState(player.page)).toBe('collecting'); // Ann has not written: no reply yet
    provider.enqueue({ kind: 'completion', content: 'Both of you hear the ghoul stir.', chunks: 2 });
    await say(player.page, 'I follow Hana');
    await everyoneSees('Both of you hear the ghoul stir.');
    const roundSent = JSON.stringify(provider.completions.at(-1)!.body);
    expect(roundSent).toContain('I keep watch at the door');
    expect(roundSent).toContain('I follow Hana');

    // 4. Instant and turn-based: the host holds the turn first, hands it to Ann, who writes and passes it on.
    await host.page.getByLabel('When the AI answers').selectOption('instant');
    await host.page.getByLabel('Who may write').selectOption('turns');
    for (const page of pages) await expect.poll(() => page.getByTestId('turn-holder').textContent()).toMatch(/Hana/);
    expect(await player.page.getByLabel('Your message').isDisabled()).toBe(true);
    expect(await player.page.getByTestId('composer-note').textContent()).toMatch(/Hana’s turn/);
    await host.page.getByLabel('Give the turn to').selectOption({ label: 'Ann' });
    await expect.poll(() => player.page.getByLabel('Your message').isDisabled()).toBe(false);
    expect(await host.page.getByLabel('Your message').isDisabled()).toBe(true);
    provider.enqueue({ kind: 'completion', content: 'The ghoul turns to Ann.', chunks: 2 });
    await say(player.page, 'I step forward');
    await everyoneSees('The ghoul turns to Ann.');
    await player.page.getByRole('button', { name: 'Pass the turn' }).click();
    for (const page of pages) await expect.poll(() => page.getByTestId('turn-holder').textContent()).toMatch(/Hana/);

    // The world's interface runs in the room: it knows who it plays for, the players and the room; a
    // per-player value it sets (setVariable with targetUserId) is seen by its player alone, in the
    // interface and the variables panel; it cannot set another member's.
    const yumina = async (page: Page) => {
      const frame = await (await page.locator('iframe[title="World interface"]').elementHandle())!.contentFrame();
      await frame!.getByText(/^Gold /).waitFor();
      return frame!;
    };
    const annFrame = await yumina(player.page);
    const wesFrame = await yumina(spectator.page);
    const seen = await annFrame.evaluate(() => {
      const y = (window as unknown as { yumina: Record<string, unknown> }).yumina as {
        currentUser: { id: string };
        players: { name: string; role: string; accountId: string }[];
        room: { speechMode: string; triggerMode: string; turnParticipantId: string };
        capabilities: { canSendMessage: boolean };
      };
      return { me: y.currentUser.id, players: y.players.map((p) => [p.name, p.role]), room: y.room, canSend: y.capabilities.canSendMessage };
    });
    expect(seen.me).toBe(ann.account.id);
    expect(seen.players).toEqual([
      ['Hana', 'host'],
      ['Ann', 'player'],
      ['Wes', 'spectator'],
    ]);
    expect(seen.room).toMatchObject({ speechMode: 'turns', triggerMode: 'instant' });
    expect(seen.canSend).toBe(false); // Hana holds the turn
    expect(await wesFrame.evaluate(() => (window as unknown as { yumina: { capabilities: { canSendMessage: boolean } } }).yumina.capabilities.canSendMessage)).toBe(false);
    const setGold = (frame: typeof annFrame, accountId: string, value: number) =>
      frame.evaluate(
        ([id, v]) =>
          (window as unknown as { yumina: { setVariable(i: string, v: unknown, o: unknown): Promise<unknown> } }).yumina.setVariable('gold', v, { targetUserId: id }).then(
            () => 'ok',
            (err: { code?: string }) => err.code ?? 'refused',
          ),
        [accountId, value] as const,
      );
    const hostAccount = await host.page.evaluate(async () => ((await (await fetch('/api/auth/session')).json()) as { account: { id: string } }).account.id);
    expect(await setGold(annFrame, hostAccount, 5)).toBe('HOST_ONLY'); // not another member's
    expect(await setGold(annFrame, ann.account.id, 77)).toBe('ok');
    await annFrame.getByText('Gold 77').waitFor();
    const gold = (page: Page) => page.locator('[data-testid="room-variables"] [data-variable="gold"] dd');
    await expect.poll(() => gold(player.page).textContent()).toBe('77 (yours only)');
    for (const page of [host.page, spectator.page]) {
      await page.reload();
      await page.getByTestId('room-page').waitFor();
      expect(await gold(page).textContent()).toBe('10');
      expect(await page.locator('[data-testid="room-variables"] [data-variable="gold"]').getAttribute('data-own')).toBe('false');
      expect(await (await yumina(page)).getByText(/^Gold /).textContent()).toBe('Gold 10');
    }
    expect(await seriousViolations(player.page)).toEqual([]);
    await shoot(player.page, 'room-player');

    // 5. A replica killed mid-reply: Ann (and Wes) sit on the replica writing it.
    await host.page.getByLabel('Who may write').selectOption('free');
    for (const page of pages) await expect.poll(() => page.getByTestId('room-modes').textContent()).toMatch(/free/);
    provider.enqueue({ kind: 'completion', content: 'The ash rises slowly, very slowly, swirling around the torchlight in the hall below.', chunks: 40, chunkDelayMs: 150 });
    await say(player.page, 'I look at the ashes');
    for (const page of pages) await page.locator('[data-testid="room-messages"] li[data-role="assistant"][data-status="streaming"]').filter({ hasText: /ash/ }).waitFor();
    process.kill(two.pid, 'SIGKILL');
    // their pages reconnect through the router to the other replica; the reply ends as failed for everyone, the messages stay
    for (const page of pages) {
      await page.locator('[data-testid="turn-failure"][data-code="REPLY_INTERRUPTED"]').waitFor({ timeout: 40_000 });
      await page.locator('[data-testid="room-messages"] li[data-role="user"][data-author="Ann"]', { hasText: 'I look at the ashes' }).waitFor();
    }
    for (const page of [player.page, spectator.page]) await page.getByTestId('room-connection').and(page.locator('[data-state="live"]')).waitFor();
    expect(await player.page.locator('[data-testid="turn-failure"] button', { hasText: 'Retry' }).count()).toBe(0); // the host's to retry
    provider.enqueue({ kind: 'completion', content: 'The ashes settle.', chunks: 2 });
    await host.page.locator('[data-testid="turn-failure"] button', { hasText: 'Retry' }).click();
    await everyoneSees('The ashes settle.');
    for (const page of pages) expect(await page.locator('[data-testid="turn-failure"]').count()).toBe(0);
    // the host's tools on the reply: a new alternative, then back to the first (everyone follows)
    provider.enqueue({ kind: 'completion', content: 'The ashes settle into a circle.', chunks: 2 });
    await host.page.getByRole('button', { name: 'Regenerate' }).click();
    await everyoneSees('The ashes settle into a circle.');
    await host.page.getByText('2/2').waitFor();
    await host.page.getByRole('button', { name: 'Previous alternative' }).click();
    for (const page of pages) await expect.poll(() => replies(page).last().locator('.chat-text').textContent()).toBe('The ashes settle.');
    expect(await player.page.getByRole('button', { name: 'Regenerate' }).count()).toBe(0); // the host's alone
    expect(await seriousViolations(host.page)).toEqual([]);
    await shoot(host.page, 'room', '.player-body');
    // everything said before is still there
    for (const text of ['I light my torch', 'The torch flares over the stairs.', 'I follow Hana', 'The ghoul turns to Ann.']) {
      expect(await spectator.page.locator('[data-testid="room-messages"]', { hasText: text }).count()).toBe(1);
    }

    // The host removes the spectator, who is told at once; then ends the room: nobody writes any more.
    await host.page.getByRole('listitem').filter({ has: host.page.locator('strong', { hasText: /^Wes$/ }) }).getByRole('button', { name: 'Remove' }).click();
    await host.page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    await spectator.page.getByTestId('room-removed').waitFor();
    await host.page.locator('[data-testid="room-members"] li[data-member="Wes"]').waitFor({ state: 'detached' });
    await host.page.getByRole('button', { name: 'End the room' }).click();
    await host.page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    for (const page of [host.page, player.page]) {
      await page.getByTestId('room-ended').waitFor();
      expect(await page.getByLabel('Your message').isDisabled()).toBe(true);
    }
    // the world's page lists the host's rooms (this one ended)
    await host.page.goto(`${url}/worlds/${world.id}`);
    await host.page.getByTestId('world-rooms').getByText('Your room').waitFor();
    expect(await host.page.getByTestId('world-rooms').textContent()).toContain('ended');
    await shoot(host.page, 'room-world');
  }, 240_000);
});

/** The page at 1280 px (from its top, or from `from`) and at 390 px, whole (docs/screens/ with UPDATE_SCREENS=1). */
async function shoot(page: Page, name: string, from?: string): Promise<void> {
  const size = page.viewportSize()!;
  await page.evaluate(() => window.scrollTo(0, 0));
  if (from) await page.locator(from).evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: screenPath(`${name}-1280`), fullPage: false });
  // the whole page in one tall viewport (a full-page capture leaves the interface's frame, a process of its own, blank)
  await page.setViewportSize({ width: 390, height: 844 });
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: 390, height: Math.min(height, 4000) });
  await page.evaluate(() => window.scrollTo(0, 0));
  const frame = page.locator('iframe[title="World interface"]');
  if (await frame.count()) await frame.contentFrame().locator('body').getByText(/^Gold /).waitFor();
  await page.screenshot({ path: screenPath(`${name}-390`) });
  await page.setViewportSize(size);
}
