import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import type { TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';

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
    </div>
  );
}`,
    },
    updatedAt: '2026-11-23T00:00:00.000Z',
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
    const worldId = await page.evaluate(
      async ({ world, providerUrl }) => {
        const post = (url: string, method: string, body: unknown) =>
          fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
        await post('/api/auth/signup', 'POST', { email: `player-${Date.now()}@example.com`, password: 'long enough pw' });
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
    provider.enqueue({ kind: 'completion', content: 'You swing; the ghoul rakes you. [hp: -15] It howls.', chunks: 5, chunkDelayMs: 400 });
    await frame.locator('#attack').click();
    // While it streams, the page shows the reply growing: some of it, not yet the end.
    const live = page.locator('[data-testid="messages"] li[data-status="streaming"], [data-testid="streaming"]').first();
    await expect
      .poll(async () => {
        const text = (await live.textContent({ timeout: 200 }).catch(() => '')) ?? '';
        return text.includes('You swing') && !text.includes('It howls.');
      }, { timeout: 10_000, interval: 50 })
      .toBe(true);
    await expect.poll(() => page.locator('[data-variable="hp"] dd').textContent(), { timeout: 15_000 }).toBe('85');
    await expect.poll(() => frame.locator('#hp').textContent(), { timeout: 10_000 }).toBe('HP 85');
    expect(await frame.locator('#seen-change').textContent()).toBe('85');
    expect(await frame.locator('#seen-event').textContent()).toBe('85');
    const assistant = page.locator('[data-testid="messages"] li[data-role="assistant"]').last();
    expect(await assistant.textContent()).toContain('It howls.');
    expect(await assistant.textContent()).not.toContain('[hp:');
    expect(provider.completions.at(-1)!.body!.stream).toBe(true);

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
    expect(await page.locator('[data-testid="messages"] li').count()).toBe(2);
    await page.close();
  }, 120_000);
});
