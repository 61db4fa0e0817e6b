import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import type { TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { signUp } from '../support/sign-up.ts';

/** A world whose custom interface shows hp and records what onChange and the statechange event saw. */
function testWorld() {
  const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
  world.name = 'Player Test Depths';
  world.rootComponent = {
    id: '5a0e8f2c-7d4b-4c1e-9a3f-2b6d8e1c0f47',
    name: 'Player test UI',
    entryFile: 'index.tsx',
    files: {
      'index.tsx': `export default function Screen() {
  const yumina = useYumina();
  const [seen, setSeen] = React.useState({ change: '', event: '' });
  const [answer, setAnswer] = React.useState('');
  const [deltas, setDeltas] = React.useState(0);
  const renderBubble = (b) => {
    if (b.role === 'assistant') (window.bubbles = window.bubbles || []).push({ content: b.content, html: b.contentHtml, raw: b.rawContent, streaming: b.isStreaming });
    return <div className="bubble" data-role={b.role} data-streaming={String(b.isStreaming)} dangerouslySetInnerHTML={{ __html: b.contentHtml }} />;
  };
  React.useEffect(() => {
    const off = yumina.onChange((state) => setSeen((s) => ({ ...s, change: String(state.variables.hp) })));
    const onEvent = (e) => setSeen((s) => ({ ...s, event: String(e.detail.variables.hp) }));
    window.addEventListener('yumina:statechange', onEvent);
    return () => { off(); window.removeEventListener('yumina:statechange', onEvent); };
  }, []);
  return (
    <div className="p-2">
      <span id="hp">HP {String(yumina.variables.hp)}</span>
      <span id="seen-change">{seen.change}</span>
      <span id="seen-event">{seen.event}</span>
      <button id="attack" type="button" onClick={() => yumina.sendMessage('I attack the ghoul')}>Attack</button>
      <button id="ask" type="button" onClick={() => yumina.ai.complete({ messages: [{ role: 'user', content: 'A riddle?' }], includeLorebook: 'matched', onDelta: () => setDeltas((n) => n + 1) }).then(setAnswer)}>Ask</button>
      <span id="answer">{answer}</span>
      <span id="deltas">{deltas}</span>
      <Chat renderBubble={renderBubble}><MessageList /></Chat>
    </div>
  );
}`,
    },
    updatedAt: '2026-11-23T00:00:00.000Z',
  };
  return world;
}

/** A world whose interface shows pendingChoices as buttons and records every yumina:statechange it saw. */
function choicesWorld() {
  const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
  world.name = 'Crossroads';
  world.rootComponent = {
    id: '9b1f3c5d-2e4a-4b6c-8d0e-1f2a3b4c5d6e',
    name: 'Choices UI',
    entryFile: 'index.tsx',
    files: {
      'index.tsx': `export default function Screen() {
  const yumina = useYumina();
  const [seen, setSeen] = React.useState([]);
  React.useEffect(() => {
    const on = (e) => { if (e.detail.changed.includes('pendingChoices')) setSeen((list) => [...list, e.detail.state.pendingChoices.join(' / ')]); };
    window.addEventListener('yumina:statechange', on);
    return () => window.removeEventListener('yumina:statechange', on);
  }, []);
  return (
    <div className="p-2">
      <div id="choices">{yumina.pendingChoices.map((c) => <button key={c} type="button" className="choice" onClick={() => yumina.sendMessage(c)}>{c}</button>)}</div>
      <button id="clear" type="button" onClick={() => yumina.clearPendingChoices()}>Not now</button>
      <pre id="seen">{seen.join('\\n')}</pre>
      <Chat renderBubble={(b) => <p className="bubble" data-role={b.role}>{b.content}</p>}><MessageList /></Chat>
    </div>
  );
}`,
    },
    updatedAt: '2026-11-27T00:00:00.000Z',
  };
  return world;
}

describe('the world player in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;

  useBrowserPlatform({ provider: { apiKey: 'player-key' } }, (p) => ({ server, browser, provider } = p));

  it('renders the custom interface, streams a reply whose directive the frame sees; swipe and checkpoint restore work', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `player-${Date.now()}@example.com`, password: 'long enough pw' });
    const worldId = await page.evaluate(
      async ({ world, providerUrl }) => {
        const post = (url: string, method: string, body: unknown) =>
          fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
        await post('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'player-key' });
        const created = (await post('/api/worlds', 'POST', { world })) as { id?: string };
        if (!created.id) throw new Error(`world not created: ${JSON.stringify(created)}`);
        return created.id;
      },
      { world: testWorld(), providerUrl: provider.url },
    );

    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.locator('#hp').textContent(), { timeout: 20_000 }).toBe('HP 100');
    expect(await page.locator('[data-variable="hp"] dd').textContent()).toBe('100');

    // World code calls sendMessage; the reply streams in chunks; its directive changes hp.
    provider.enqueue({ kind: 'completion', content: 'You swing; the ghoul rakes you. [hp: -15] [Note: the air smells of ash] It howls.', chunks: 12, chunkDelayMs: 200 });
    await frame.locator('#attack').click();
    // While it streams, the page shows the reply growing: some of it, not yet the end.
    const live = page.locator('[data-testid="messages"] li[data-status="streaming"], [data-testid="streaming"]').first();
    const seenLive: string[] = [];
    await expect
      .poll(async () => {
        const text = (await live.textContent({ timeout: 200 }).catch(() => '')) ?? '';
        seenLive.push(text);
        return text.includes('[Note: the air') && !text.includes('It howls.');
      }, { timeout: 10_000, interval: 50 })
      .toBe(true);
    // The default chat never shows the directive either, not even a piece of it while it streams.
    expect(seenLive.filter((t) => /\[h(p|$)/.test(t))).toEqual([]);
    await expect.poll(() => page.locator('[data-variable="hp"] dd').textContent(), { timeout: 15_000 }).toBe('85');
    await expect.poll(() => frame.locator('#hp').textContent(), { timeout: 10_000 }).toBe('HP 85');
    expect(await frame.locator('#seen-change').textContent()).toBe('85');
    expect(await frame.locator('#seen-event').textContent()).toBe('85');
    const assistant = page.locator('[data-testid="messages"] li[data-role="assistant"]').last();
    expect(await assistant.textContent()).toContain('It howls.');
    expect(await assistant.textContent()).not.toContain('[hp:');
    expect(provider.completions.at(-1)!.body!.stream).toBe(true);

    // The custom interface's bubbles: story text in brackets reaches content and contentHtml; the
    // world's directive never does, not even while it streams in piece by piece (hidden in the frame).
    const worldFrame = page.frames().find((f) => f.url() === 'about:srcdoc')!;
    const bubbles = (await worldFrame.evaluate(() => (window as unknown as { bubbles: unknown[] }).bubbles)) as { content: string; html: string; raw: string; streaming: boolean }[];
    const reply = bubbles.filter((b) => !b.streaming && b.raw.includes('It howls.')).at(-1)!;
    expect(reply.content).toBe('You swing; the ghoul rakes you. [Note: the air smells of ash] It howls.');
    expect(reply.html).toContain('[Note: the air smells of ash]');
    expect(reply.raw).toContain('[hp: -15]');
    const streamed = bubbles.filter((b) => b.streaming && b.raw.includes('You swing'));
    expect(streamed.length).toBeGreaterThanOrEqual(3);
    expect(streamed.some((b) => b.raw.includes('[hp: -15]') && b.content.includes('[Note: the air'))).toBe(true);
    expect(streamed.some((b) => /\[h(p(:[^\]]*)?)?$/.test(b.raw))).toBe(true); // a piece ended inside the directive
    for (const b of bubbles) {
      expect(b.content).not.toMatch(/\[hp|\[h$|\[$/);
      expect(b.html).not.toContain('[hp');
    }

    // Regenerate: a second swipe with its own state; swiping back restores the first.
    provider.enqueue({ kind: 'completion', content: 'A crushing blow. [hp: -40]' });
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => page.locator('[data-testid="swipe-index"]').textContent()).toBe('2/2');
    await expect.poll(() => frame.locator('#hp').textContent()).toBe('HP 60');
    await page.getByRole('button', { name: 'Previous reply' }).click();
    await expect.poll(() => page.locator('[data-testid="swipe-index"]').textContent()).toBe('1/2');
    await expect.poll(() => frame.locator('#hp').textContent()).toBe('HP 85');

    // World code's ai.complete: streamed through the parent, on the player's key, with the world's prompt.
    provider.enqueue({ kind: 'completion', content: 'What walks on ash?', chunks: 3, chunkDelayMs: 100 }); // apart in time: each its own network read, its own delta
    await frame.locator('#ask').click();
    await expect.poll(() => frame.locator('#answer').textContent()).toBe('What walks on ash?');
    expect(Number(await frame.locator('#deltas').textContent())).toBeGreaterThanOrEqual(2);
    const askRequest = provider.completions.at(-1)!;
    expect(askRequest.headers.authorization).toBe('Bearer player-key');
    expect((askRequest.body!.messages as { role: string }[])[0]!.role).toBe('system');

    // Checkpoint, another turn, restore.
    await page.getByRole('button', { name: 'Save checkpoint' }).click();
    await expect.poll(() => page.getByRole('list', { name: 'Checkpoints' }).locator('li').count()).toBe(1);
    provider.enqueue({ kind: 'completion', content: 'A dart. [hp: -5]' });
    await page.getByLabel('Message', { exact: true }).fill('I look around');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.locator('#hp').textContent()).toBe('HP 80');
    await page.getByRole('list', { name: 'Checkpoints' }).getByRole('button', { name: 'Restore' }).click();
    // Restoring clears later messages: the player confirms first.
    await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => frame.locator('#hp').textContent()).toBe('HP 85');
    // The greeting and the turn the checkpoint was saved after.
    expect(await page.locator('[data-testid="messages"] li').count()).toBe(3);
    await page.close();
  }, 120_000);

  it('choices: a reply offers them to the interface and the default chat; choosing sends one; regenerate, swipe, delete and clear take them away', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `choices-${Date.now()}@example.com`, password: 'long enough pw' });
    const worldId = await page.evaluate(
      async ({ world, providerUrl }) => {
        const post = (url: string, method: string, body: unknown) =>
          fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
        await post('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'player-key' });
        return ((await post('/api/worlds', 'POST', { world })) as { id: string }).id;
      },
      { world: choicesWorld(), providerUrl: provider.url },
    );
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.locator('#clear').count(), { timeout: 20_000 }).toBe(1);
    const onPage = () => page.getByRole('group', { name: 'Choices' }).getByRole('button').allTextContents();
    const inFrame = () => frame.locator('#choices button').allTextContents();
    const both = async () => ({ page: await onPage(), frame: await inFrame() });
    // What the server answers for the session (its only one).
    const sessionState = () =>
      page.evaluate(async (world) => {
        const list = (await (await fetch(`/api/worlds/${world}/sessions`)).json()) as { sessions: { id: string }[] };
        const res = await fetch(`/api/sessions/${list.sessions[0]!.id}`);
        return ((await res.json()) as { session: { state: { pendingChoices?: string[] } } }).session.state.pendingChoices;
      }, worldId);
    // The player's messages in the newest prompt (its post-history preset is a user message too).
    const userSent = () => (provider.completions.at(-1)!.body!.messages as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content);

    // A reply offers choices: the interface gets them (pendingChoices and the state-change event), the default chat shows buttons.
    provider.enqueue({ kind: 'completion', content: 'The hallway splits. [hp: -5]\n[choices: Go left | Go right]' });
    await page.getByLabel('Message', { exact: true }).fill('I look around');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Go left', 'Go right'], frame: ['Go left', 'Go right'] });
    expect(await frame.locator('#seen').textContent()).toContain('Go left / Go right');
    const reply = page.locator('[data-testid="messages"] li[data-role="assistant"]').last();
    expect(await reply.textContent()).toContain('The hallway splits.');
    expect(await reply.textContent()).not.toContain('[choices');
    expect(await frame.locator('.bubble[data-role="assistant"]').last().textContent()).toBe('The hallway splits.');
    expect(await sessionState()).toEqual(['Go left', 'Go right']);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: `/tmp/player-choices-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    // A regenerated reply brings its own choices; swiping back brings the first reply's back; they survive a reload.
    provider.enqueue({ kind: 'completion', content: 'A single door. [choices: Open it]' });
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Open it'], frame: ['Open it'] });
    await page.getByRole('button', { name: 'Previous reply' }).click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Go left', 'Go right'], frame: ['Go left', 'Go right'] });
    await page.getByRole('button', { name: 'Next reply' }).click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Open it'], frame: ['Open it'] });
    await page.reload();
    await expect.poll(both, { timeout: 20_000 }).toEqual({ page: ['Open it'], frame: ['Open it'] });

    // Choosing in the default chat sends the choice as the player's message; the choices go at once.
    provider.enqueue({ kind: 'completion', content: 'It opens onto a stair. [choices: Climb | Descend]', chunks: 4, chunkDelayMs: 300 });
    await page.getByRole('group', { name: 'Choices' }).getByRole('button', { name: 'Open it' }).click();
    await expect.poll(both, { timeout: 5_000 }).toEqual({ page: [], frame: [] });
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Climb', 'Descend'], frame: ['Climb', 'Descend'] });
    expect(userSent()).toContain('Open it');
    expect(await page.locator('[data-testid="messages"] li[data-role="user"]').last().textContent()).toContain('Open it');

    // Choosing in the interface does the same; a reply without choices leaves none.
    provider.enqueue({ kind: 'completion', content: 'You climb into the cold.' });
    await frame.locator('#choices button', { hasText: 'Climb' }).click();
    await expect.poll(() => page.locator('[data-testid="messages"] li[data-role="assistant"]').last().textContent(), { timeout: 15_000 }).toContain('You climb into the cold.');
    expect(userSent()).toContain('Climb');
    expect(await both()).toEqual({ page: [], frame: [] });
    expect(await sessionState()).toEqual([]);

    // clearPendingChoices: gone here and in the stored state, so a reload does not bring them back.
    provider.enqueue({ kind: 'completion', content: 'A voice calls. [choices: Answer | Hide]' });
    await page.getByLabel('Message', { exact: true }).fill('I wait');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Answer', 'Hide'], frame: ['Answer', 'Hide'] });
    await frame.locator('#clear').click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: [], frame: [] });
    await expect.poll(sessionState, { timeout: 15_000 }).toEqual([]);
    await page.reload();
    await expect.poll(() => frame.locator('#clear').count(), { timeout: 20_000 }).toBe(1);
    await page.locator('[data-testid="messages"] li[data-role="assistant"]').last().waitFor();
    expect(await both()).toEqual({ page: [], frame: [] });

    // A deleted reply takes its choices with it; deleting the player's answer brings back the choices it answered.
    provider.enqueue({ kind: 'completion', content: 'Footsteps. [choices: Run | Fight]' });
    await page.getByLabel('Message', { exact: true }).fill('I listen');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Run', 'Fight'], frame: ['Run', 'Fight'] });
    provider.enqueue({ kind: 'completion', content: 'You run.' });
    await page.getByRole('group', { name: 'Choices' }).getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.locator('[data-testid="messages"] li[data-role="assistant"]').last().textContent(), { timeout: 15_000 }).toContain('You run.');
    // (a delete offers Undo for a few seconds, then reaches the server: issue 50)
    await page.locator('[data-testid="messages"] li[data-role="user"]').last().getByRole('button', { name: 'Delete' }).click();
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: ['Run', 'Fight'], frame: ['Run', 'Fight'] });
    expect(await sessionState()).toEqual(['Run', 'Fight']);
    await page.locator('[data-testid="messages"] li[data-role="assistant"]').last().getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.locator('[data-testid="messages"] li[data-role="assistant"]').last().textContent(), { timeout: 15_000 }).not.toContain('Footsteps');
    await expect.poll(both, { timeout: 15_000 }).toEqual({ page: [], frame: [] });
    await expect.poll(sessionState, { timeout: 15_000 }).toEqual([]);
    await page.close();
  }, 150_000);
  it('seed 002 §2.2: a world that sets no sampling settings is validated with temperature 1, topP 1 and penalties 0, and a turn sends them (topK and minP absent)', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `sampling-${Date.now()}@example.com`, password: 'long enough pw' });
    const world = { version: '20.0.0', name: 'Plain Settings', settings: { maxTokens: 700 } };
    const { worldId, validated, stored } = await page.evaluate(
      async ({ world, providerUrl }) => {
        const call = (url: string, method: string, body: unknown) =>
          fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
        await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'player-key' });
        const validated = (await call('/api/worlds/validate', 'POST', world)) as { world: { settings: Record<string, unknown> } };
        const worldId = ((await call('/api/worlds', 'POST', { world })) as { id: string }).id;
        const stored = (await (await fetch(`/api/worlds/${worldId}`)).json()) as { world: { settings: Record<string, unknown> } };
        return { worldId, validated: validated.world.settings, stored: stored.world.settings };
      },
      { world, providerUrl: provider.url },
    );
    const defaults = { temperature: 1, topP: 1, frequencyPenalty: 0, presencePenalty: 0, maxTokens: 700 };
    expect(validated).toMatchObject(defaults);
    expect(stored).toMatchObject(defaults);
    for (const key of ['topK', 'minP']) expect(Object.keys(stored)).not.toContain(key);

    await page.goto(`${server.url}/play/${worldId}`);
    provider.enqueue({ kind: 'completion', content: 'The plain room is quiet.' });
    const before = provider.completions.length;
    await page.getByLabel('Message', { exact: true }).fill('Hello');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('[data-testid="messages"] li[data-role="assistant"]').last().textContent()).toContain('The plain room is quiet.');
    const body = provider.completions.slice(before).at(-1)!.body!;
    expect(body).toMatchObject({ temperature: 1, top_p: 1, frequency_penalty: 0, presence_penalty: 0, max_tokens: 700 });
    expect(Object.keys(body)).not.toContain('top_k');
    expect(Object.keys(body)).not.toContain('min_p');
    await page.close();
  }, 120_000);
});
