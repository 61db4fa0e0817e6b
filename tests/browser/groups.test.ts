import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';

/**
 * Issue 46: group scenes in the browser, with three imported real cards (tests/fixtures/cards: a
 * PNG card, a V1 JSON card and a V2 card with talkativeness and a group-only greeting). A mention
 * picks the named character in natural mode; the card's talkativeness is the character's; each
 * reply's prompt holds only its speaker's card fields (read from the loopback provider's
 * requests); mute, choose and auto with Stop; screenshots at 1280 and 390 px.
 */
const CARDS = {
  harbor: { file: 'harbor-keeper.png', type: 'image/png', name: 'Harbor Keeper', marker: 'keeps the lighthouse at Gull Point' },
  ferryman: { file: 'ferryman-v1.json', type: 'application/octet-stream', name: 'Ferryman', marker: 'rows travellers across the black river' },
  wren: { file: 'lamplighter-wren.json', type: 'application/octet-stream', name: 'Lamplighter Wren', marker: 'quiet, observant, kind to strays' },
} as const;

describe('group scenes in the browser (issue 46)', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  useBrowserPlatform({ provider: { apiKey: 'scene-key' } }, (p) => ({ server, browser, provider } = p));

  /** The provider requests since `from`: which card each prompt carried. */
  const cardsIn = (from: number) =>
    provider.completions.slice(from).map((r) => {
      const text = JSON.stringify(r.body?.messages);
      return Object.values(CARDS)
        .filter((c) => text.includes(c.marker))
        .map((c) => c.name);
    });
  const speakers = (page: Page) => page.locator('[data-testid="messages"] li[data-role="assistant"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-speaker')));
  const castRow = (page: Page, name: string) => page.locator('.cast-list li', { hasText: name });

  it('a scene of three imported cards: mentions, talkativeness, one card per prompt, mute, choose, auto with Stop', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'scene-key', worlds: [] });
    for (const card of Object.values(CARDS)) {
      const bytes = readFileSync(new URL(`../fixtures/cards/${card.file}`, import.meta.url));
      const status = await page.evaluate(
        async ({ file, type, body }) => (await fetch(`/api/worlds/import?name=${file}`, { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) })).status,
        { file: card.file, type: card.type, body: [...bytes] },
      );
      expect(status).toBe(201);
    }

    // start: pick the three from "Group scenes", natural mode
    await page.goto(`${server.url}/library`);
    await page.getByRole('link', { name: 'Group scenes' }).click();
    for (const card of Object.values(CARDS)) await page.getByRole('checkbox', { name: new RegExp(card.name) }).check();
    expect(await page.getByTestId('picked').textContent()).toBe('Harbor Keeper · Ferryman · Lamplighter Wren');
    await page.screenshot({ path: screenPath('group-new-1280'), fullPage: true });
    await page.getByRole('button', { name: 'Start the scene' }).click();
    await page.waitForURL(/\/groups\/cnv_/);
    // the scene opens with the group greetings (Wren's group-only one), each under its name
    await expect.poll(() => speakers(page)).toEqual(['Harbor Keeper', 'Ferryman', 'Lamplighter Wren']);
    expect(await page.locator('li[data-speaker="Lamplighter Wren"]').textContent()).toContain('Mind the puddles');
    // talkativeness from the cards: 0.4, none (0.5), 0.7
    expect(await castRow(page, 'Harbor Keeper').locator('.talkative').textContent()).toContain('40 %');
    expect(await castRow(page, 'Ferryman').locator('.talkative').textContent()).toContain('50 %');
    expect(await castRow(page, 'Lamplighter Wren').locator('.talkative').textContent()).toContain('70 %');

    // a mention picks the named character first, and its prompt carries its card alone
    let from = provider.completions.length;
    provider.setHandler(() => ({ kind: 'completion', content: 'The river is calm tonight.' }));
    await page.getByLabel('Your message').fill('Ferryman, is the river safe?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(async () => (await speakers(page))[3]).toBe('Ferryman');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).count()).toBe(1);
    const natural = cardsIn(from);
    expect(natural[0]).toEqual(['Ferryman']);
    // whoever else spoke up, each prompt held its own speaker's card and no other
    const spoke = (await speakers(page)).slice(3);
    expect(natural.map((c) => c[0])).toEqual(spoke);
    expect(natural.every((c) => c.length === 1)).toBe(true);
    await page.screenshot({ path: screenPath('group-scene-1280'), fullPage: true });

    // mute two: a message naming a muted character is answered by the one left
    await castRow(page, 'Harbor Keeper').getByRole('checkbox', { name: 'Muted' }).check();
    await castRow(page, 'Lamplighter Wren').getByRole('checkbox', { name: 'Muted' }).check();
    await expect.poll(() => page.locator('.cast-list li.muted').count()).toBe(2);
    const before = (await speakers(page)).length;
    from = provider.completions.length;
    await page.getByLabel('Your message').fill('Wren, what do you think?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(async () => (await speakers(page)).length).toBe(before + 1);
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).count()).toBe(1);
    expect((await speakers(page)).at(-1)).toBe('Ferryman');
    expect(cardsIn(from)).toEqual([['Ferryman']]);

    // choose: nobody answers until the player picks; then the pick, even muted
    await page.getByLabel('Who answers').selectOption('choose');
    await expect.poll(() => page.getByLabel('Who replies').locator('option').first().textContent()).toBe('Pick a character…');
    from = provider.completions.length;
    await page.getByLabel('Your message').fill('Anyone?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('li[data-role="user"]').last().textContent()).toContain('Anyone?');
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).count()).toBe(1);
    expect(provider.completions.length).toBe(from);
    await page.getByLabel('Who replies').selectOption({ label: 'Harbor Keeper' });
    await page.getByRole('button', { name: 'Reply now' }).click();
    await expect.poll(async () => (await speakers(page)).at(-1)).toBe('Harbor Keeper');
    await expect.poll(() => page.getByRole('button', { name: 'Reply now' }).count()).toBe(1);
    expect(cardsIn(from)).toEqual([['Harbor Keeper']]);
    await page.getByLabel('Who replies').selectOption('');

    // auto with Stop: in turn, everyone unmuted, up to 5 more replies, stopped while the second is written
    await castRow(page, 'Harbor Keeper').getByRole('checkbox', { name: 'Muted' }).uncheck();
    await castRow(page, 'Lamplighter Wren').getByRole('checkbox', { name: 'Muted' }).uncheck();
    await page.getByLabel('Who answers').selectOption('in-turn');
    await page.getByLabel(/Carry on among themselves/).fill('5');
    await expect.poll(() => page.locator('.cast-list li.muted').count()).toBe(0);
    const count = (await speakers(page)).length;
    provider.setHandler(() => ({ kind: 'completion', content: 'and so the story goes on and on '.repeat(20), chunks: 40, chunkDelayMs: 150 }));
    await page.getByLabel('Your message').fill('Talk among yourselves.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(async () => (await speakers(page)).length, { timeout: 20_000 }).toBe(count + 2);
    await page.getByRole('button', { name: /^Stop/ }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Send' }).count(), { timeout: 15_000 }).toBe(1);
    // stopped at the second reply: no third started, and what was stopped is shown as unfinished
    const after = await speakers(page);
    expect(after.length).toBe(count + 2);
    expect(await page.locator('li[data-role="assistant"]').last().getAttribute('data-status')).toBe('failed');

    // phones: the scene fits 390 px
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: screenPath('group-scene-390'), fullPage: false });
    await page.close();
  }, 240_000);

  it("a scene placed in a world with its own interface: the interface reads who is speaking and the cast, and writes to the scene", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const INTERFACE = String.raw`
export default function Scene() {
  const y = window.yumina;
  const [, tick] = React.useState(0);
  React.useEffect(() => { const t = setInterval(() => tick((n) => n + 1), 100); return () => clearInterval(t); }, []);
  return (
    <div className="p-2">
      <span id="speaker">{y.speaker ? 'Speaking: ' + y.speaker.name : 'Nobody is speaking'}</span>
      <span id="cast">{y.characters.map((c) => c.name).join(', ')}</span>
      <span id="count">{y.messages.length}</span>
      <button id="send" type="button" onClick={() => y.sendMessage('Hello from the tavern board')}>Send</button>
    </div>
  );
}`;
    const tavern = {
      ...sampleWorld('willow-street'),
      name: 'The Tavern',
      rootComponent: { id: '8d7e6f5a-4b3c-4d2e-9f1a-0b9c8d7e6f5a', name: 'Tavern', entryFile: 'index.tsx', files: { 'index.tsx': INTERFACE }, updatedAt: '2026-11-29T00:00:00.000Z' },
    };
    const [tavernId] = (await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'scene-key', worlds: [tavern] })) as [string];
    const ids: string[] = [];
    for (const card of [CARDS.ferryman, CARDS.wren]) {
      const bytes = readFileSync(new URL(`../fixtures/cards/${card.file}`, import.meta.url));
      ids.push(
        await page.evaluate(
          async ({ file, type, body }) => ((await (await fetch(`/api/worlds/import?name=${file}`, { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) })).json()) as { id: string }).id,
          { file: card.file, type: card.type, body: [...bytes] },
        ),
      );
    }
    const scene = await page.evaluate(
      async (body) => ((await (await fetch('/api/groups', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { session: { id: string } }).session.id,
      { characters: ids, sceneWorldId: tavernId, replyMode: 'in-turn' },
    );
    await page.goto(`${server.url}/groups/${scene}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.locator('#cast').textContent(), { timeout: 20_000 }).toBe('Ferryman, Lamplighter Wren');
    expect(await frame.locator('#speaker').textContent()).toBe('Nobody is speaking');
    expect(await frame.locator('#count').textContent()).toBe('2');
    // the interface writes to the scene; while the first in turn writes, it reads who is speaking
    provider.setHandler(() => ({ kind: 'completion', content: 'Coin first, then the crossing. '.repeat(6), chunks: 30, chunkDelayMs: 100 }));
    await frame.locator('#send').click();
    await expect.poll(() => frame.locator('#speaker').textContent(), { timeout: 15_000 }).toBe('Speaking: Ferryman');
    await expect.poll(() => frame.locator('#speaker').textContent(), { timeout: 20_000 }).toBe('Nobody is speaking');
    // the player's line and the reply are the scene's messages now, the reply under its speaker's name
    expect(await frame.locator('#count').textContent()).toBe('4');
    expect((await speakers(page)).at(-1)).toBe('Ferryman');
    expect(await page.locator('li[data-role="user"]').last().textContent()).toContain('Hello from the tavern board');
    await page.screenshot({ path: screenPath('group-scene-interface-1280'), fullPage: true });
    await page.close();
  }, 180_000);

  it('an author makes a group world in the studio; a player starts its scene from the world page', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [tavernId] = (await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'scene-key', worlds: [{ ...sampleWorld('willow-street'), name: 'Crossroads Inn', rootComponent: null }] })) as [string];
    for (const card of [CARDS.ferryman, CARDS.wren]) {
      const bytes = readFileSync(new URL(`../fixtures/cards/${card.file}`, import.meta.url));
      await page.evaluate(async ({ file, type, body }) => fetch(`/api/worlds/import?name=${file}`, { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) }).then((r) => r.status), {
        file: card.file,
        type: card.type,
        body: [...bytes],
      });
    }
    await page.goto(`${server.url}/studio/${tavernId}`);
    const section = page.getByTestId('group-world');
    await section.getByRole('checkbox', { name: 'Ferryman' }).check();
    await section.getByRole('checkbox', { name: 'Lamplighter Wren' }).check();
    await section.getByRole('button', { name: 'Save the characters' }).click();
    await expect.poll(() => section.getByRole('status').textContent()).toContain('A group world of 2 characters');
    await page.screenshot({ path: screenPath('group-world-studio-1280'), fullPage: false });
    await page.setViewportSize({ width: 390, height: 844 });
    await section.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: screenPath('group-world-studio-390'), fullPage: false });
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.goto(`${server.url}/worlds/${tavernId}`);
    await page.getByTestId('play-group').click();
    await page.waitForURL(/\/groups\/cnv_/);
    await expect.poll(() => page.locator('.cast-list li .cast-name').allTextContents()).toEqual([expect.stringContaining('Ferryman'), expect.stringContaining('Lamplighter Wren')]);
    expect(await page.locator('h1').textContent()).toBe('Ferryman & Lamplighter Wren');
    await page.close();
  }, 180_000);
});
