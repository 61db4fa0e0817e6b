import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import type { TestServer } from '../support/server.ts';

/** The track ids the player's audio director is playing now. */
const playing = (page: Page) => page.locator('[data-testid="now-playing"]').getAttribute('data-tracks');

describe('the shipped sample worlds in the real player', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;

  useBrowserPlatform({ provider: { apiKey: 'sample-key' } }, (p) => ({ server, browser, provider } = p));

  it('The Ashen Depths through its own interface: Send sends, Drink potion fires the action and survives a reload, the music starts', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    const [worldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'sample-key', worlds: [sampleWorld('ashen-depths')] });

    await page.goto(`${server.url}/play/${worldId}`);
    const iframe = page.locator('iframe[title="World interface"]');
    expect(await iframe.getAttribute('sandbox')).toBe('allow-scripts allow-forms');
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);
    // Session start: the opening rule's ambience plays.
    await expect.poll(() => playing(page)).toContain('dungeon-ambience');

    // The interface's own Send button (a form submit inside the sandbox) sends the message.
    provider.enqueue({ kind: 'completion', content: 'A ghoul claws at you from the dark. [hp: -40]' });
    await frame.getByLabel('Message').fill('I go down the stairs');
    await frame.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.getByText('HP 60/100').count(), { timeout: 20_000 }).toBe(1);
    expect(await frame.locator('[data-yumina="messages"]').textContent()).toContain('A ghoul claws at you');
    expect((provider.completions.at(-1)!.body!.messages as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content)).toContain(
      'I go down the stairs',
    );
    // The default playlist waits for the first message (waitForFirstMessage): it plays now.
    await expect.poll(() => playing(page)).toContain('explore-theme');

    // "Drink potion": executeAction → the world's action rule: +25 HP, the potion leaves the bag, a notification.
    await frame.getByRole('button', { name: 'Drink potion' }).click();
    await expect.poll(() => frame.getByText('HP 85/100').count()).toBe(1);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'You drink the potion' }).count()).toBe(1);
    expect(await frame.getByRole('button', { name: /Bag/ }).textContent()).toContain('Bag (2)');

    // The new state is stored: after a reload it is still there.
    await page.reload();
    await expect.poll(() => frame.getByText('HP 85/100').count(), { timeout: 20_000 }).toBe(1);
    expect(await page.locator('[data-variable="hp"] dd').textContent()).toBe('85');
    // ...and the next turn starts from it.
    provider.enqueue({ kind: 'completion', content: 'You rest a moment.' });
    await frame.getByLabel('Message').fill('I rest');
    await frame.getByLabel('Message').press('Enter');
    await expect.poll(() => frame.locator('[data-yumina="messages"]').textContent(), { timeout: 20_000 }).toContain('You rest a moment.');
    expect(await frame.getByText('HP 85/100').count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('Rain on Willow Street and 长安夜话 (no interface) in the default chat: greeting, playlist at session start, Enter sends', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [willow, changan] = await signUpWithWorlds(server, page, {
      providerUrl: provider.url,
      apiKey: 'sample-key',
      worlds: [sampleWorld('willow-street'), sampleWorld('changan-nights')],
    });

    await page.goto(`${server.url}/play/${willow}`);
    const messages = page.locator('[data-testid="messages"]');
    await expect.poll(() => messages.textContent(), { timeout: 20_000 }).toContain('You\'re dripping on my ferns.');
    // autoPlay without waitForFirstMessage: the playlist starts with the session.
    await expect.poll(() => playing(page)).toContain('willow-theme');
    provider.enqueue({ kind: 'completion', content: 'Mina hands you a towel.' });
    await page.getByLabel('Message', { exact: true }).fill('Sorry about the ferns');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await expect.poll(() => messages.textContent(), { timeout: 20_000 }).toContain('Mina hands you a towel.');

    await page.goto(`${server.url}/play/${changan}`);
    await expect.poll(() => page.locator('h2').textContent(), { timeout: 20_000 }).toBe('长安夜话');
    await expect.poll(() => playing(page)).toMatch(/changan-night|market-day/);
    provider.enqueue({ kind: 'completion', content: '夜色正浓。' });
    await page.getByLabel('Message', { exact: true }).fill('我走进西市');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await expect.poll(() => messages.textContent(), { timeout: 20_000 }).toContain('夜色正浓。');
    await page.close();
  }, 120_000);
  it('every sample opens with its greeting; after a turn the greeting is still shown and the model is sent it', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const names = ['ashen-depths', 'willow-street', 'changan-nights'] as const;
    const ids = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'sample-key', worlds: names.map((n) => sampleWorld(n)) });
    const openings: Record<(typeof names)[number], string> = {
      'ashen-depths': 'The abbey bell tolls once behind you.',
      'willow-street': 'The bell above the door rings as you step in out of the rain.',
      'changan-nights': '暮鼓刚敲过三百声，大理寺的灯还亮着。',
    };
    for (const [i, name] of names.entries()) {
      await page.goto(`${server.url}/play/${ids[i]}`);
      const own = name === 'ashen-depths';
      const frame = page.frameLocator('iframe[title="World interface"]');
      // The chat the player sees: the world's own interface, or the default chat.
      const chat = own ? frame.locator('[data-yumina="messages"]') : page.locator('[data-testid="messages"]');
      await expect.poll(() => chat.textContent(), { timeout: 20_000 }).toContain(openings[name]);
      if (own) expect(await frame.getByTestId('ashen-greeting').textContent()).toContain(openings[name]);
      const reply = `Reply ${i} of the story.`;
      provider.enqueue({ kind: 'completion', content: reply });
      const input = own ? frame.getByLabel('Message') : page.getByLabel('Message', { exact: true });
      await input.fill('I look around');
      await input.press('Enter');
      await expect.poll(() => chat.textContent(), { timeout: 20_000 }).toContain(reply);
      // The greeting is still the first message shown, and it went to the model as the world's message.
      expect(await chat.textContent()).toContain(openings[name]);
      const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
      const greeting = sent.findIndex((m) => m.role === 'assistant' && m.content.includes(openings[name]));
      expect(greeting, name).toBeGreaterThanOrEqual(0);
      expect(sent.findIndex((m) => m.role === 'user' && m.content === 'I look around'), name).toBeGreaterThan(greeting);
    }
    await page.close();
  }, 120_000);
  it('The Ashen Depths\' potion: drinking takes the potion wherever it sits in the bag; without one the interface offers no drink', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [worldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'sample-key', worlds: [sampleWorld('ashen-depths')] });
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);
    // The bag as the story may leave it: the torch burned out, the potion first, a key found.
    const sessionId = await page.evaluate(async (id) => ((await (await fetch(`/api/worlds/${id}/sessions`)).json()) as { sessions: { id: string }[] }).sessions[0]!.id, worldId);
    const put = async (variable: string, value: unknown) =>
      page.evaluate(
        async ([id, v, body]) => (await fetch(`/api/sessions/${id}/variables/${v}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status,
        [sessionId, variable, { value }] as const,
      );
    expect(await put('inventory', { items: ['healing-potion', 'rusty-sword', 'iron-key'], equipped: { weapon: 'rusty-sword', armor: null } })).toBe(200);
    expect(await put('hp', 50)).toBe(200);
    await page.reload();
    await expect.poll(() => frame.getByText('HP 50/100').count(), { timeout: 20_000 }).toBe(1);
    await frame.getByRole('button', { name: 'Drink potion' }).click();
    await expect.poll(() => frame.getByText('HP 75/100').count()).toBe(1);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'You drink the potion' }).count()).toBe(1);
    const inventory = async () =>
      page.evaluate(async (id) => ((await (await fetch(`/api/sessions/${id}`)).json()) as { session: { state: { variables: { inventory: { items: string[] } } } } }).session.state.variables.inventory.items, sessionId);
    // The potion went, the other things stayed.
    expect(await inventory()).toEqual(['rusty-sword', 'iron-key']);
    // No potion left: nothing claims a drink.
    await expect.poll(() => frame.getByRole('button', { name: 'No potion' }).isDisabled()).toBe(true);
    expect(await frame.getByRole('button', { name: 'Drink potion' }).count()).toBe(0);
    expect(await frame.getByText('HP 75/100').count()).toBe(1);
    await page.close();
  }, 120_000);
  it('a world with its own message box: one box on the page, with Regenerate and Continue beside it', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [worldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'sample-key', worlds: [sampleWorld('ashen-depths')] });
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.getByText('HP 100/100').count(), { timeout: 20_000 }).toBe(1);
    // The interface's box is the only one: the page's conversation keeps its controls, not a second box.
    expect(await frame.getByRole('textbox', { name: 'Message' }).count()).toBe(1);
    await page.getByRole('form', { name: 'Conversation controls' }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Message', exact: true }).count()).toBe(0);
    provider.enqueue({ kind: 'completion', content: 'A bat flutters past.' });
    await frame.getByLabel('Message').fill('I listen');
    await frame.getByLabel('Message').press('Enter');
    await expect.poll(() => frame.locator('[data-yumina="messages"]').textContent(), { timeout: 20_000 }).toContain('A bat flutters past.');
    // Regenerate beside the box: a new reply in its place.
    provider.enqueue({ kind: 'completion', content: 'A rat scurries away.' });
    const before = provider.completions.length;
    await frame.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => frame.locator('[data-yumina="messages"]').textContent(), { timeout: 20_000 }).toContain('A rat scurries away.');
    expect(provider.completions.length).toBe(before + 1);
    // Continue beside the box: the reply goes on.
    provider.enqueue({ kind: 'completion', content: ' Then silence.' });
    await expect.poll(() => frame.getByRole('button', { name: 'Continue' }).isEnabled()).toBe(true);
    await frame.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => frame.locator('[data-yumina="messages"]').textContent(), { timeout: 20_000 }).toContain('Then silence.');
    expect(await page.getByRole('textbox', { name: 'Message', exact: true }).count()).toBe(0);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: `/tmp/one-box-${width}.png`, fullPage: true });
    }
    await page.close();
  }, 120_000);
});
