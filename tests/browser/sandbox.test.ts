import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';

/** A world whose interface subscribes with onChange and the yumina:statechange event and drives the API. */
const probeWorld = {
  id: '7d0b6f7e-1c2a-4b3c-8d4e-5f6a7b8c9d0e',
  name: 'Probe',
  rootComponent: {
    id: '1a2b3c4d-0000-4000-8000-000000000001',
    name: 'Probe screen',
    entryFile: 'index.tsx',
    updatedAt: '2026-11-23T00:00:00.000Z',
    files: {
      'index.tsx': `
import { useYumina } from '@yumina/sdk';
import { Panel } from './panel';

export default function Probe() {
  const y = useYumina();
  const [log, setLog] = React.useState<string[]>([]);
  const off = React.useRef<null | (() => void)>(null);
  React.useEffect(() => {
    off.current = window.yumina.onChange((state, detail) =>
      setLog((l) => [...l, 'onChange:' + detail.changedVariables.join(',') + ':' + state.variables.hp + ':' + state.variables.gold]));
    const onEvent = (e: CustomEvent) =>
      setLog((l) => [...l, 'event:' + e.detail.changedVariables.join(',') + ':' + e.detail.variables.hp + ':' + e.detail.variables.gold]);
    window.addEventListener('yumina:statechange', onEvent as EventListener);
    return () => { off.current?.(); window.removeEventListener('yumina:statechange', onEvent as EventListener); };
  }, []);
  return (
    <main className="p-4 text-sm">
      <Panel hp={y.variables.hp} gold={y.variables.gold} world={y.worldName} />
      <button type="button" onClick={() => { off.current?.(); off.current = null; }}>Unsubscribe</button>
      <ul data-testid="log">{log.map((line, i) => <li key={i}>{line}</li>)}</ul>
    </main>
  );
}
`,
      'panel.tsx': `
export function Panel({ hp, gold, world }: { hp: unknown; gold: unknown; world: string }) {
  const y = useYumina();
  const [deltas, setDeltas] = React.useState<string[]>([]);
  const [answer, setAnswer] = React.useState('');
  const [stored, setStored] = React.useState('');
  return (
    <section>
      <h1 data-testid="world">{world}</h1>
      <p data-testid="hp">{String(hp)}</p>
      <p data-testid="gold">{String(gold)}</p>
      <p data-testid="streaming">{y.isStreaming ? 'streaming' : 'idle'}</p>
      <p data-testid="messages">{y.messages.length}</p>
      <button type="button" onClick={() => y.sendMessage('look around')}>Send</button>
      <button type="button" onClick={() => y.ai.complete({ messages: [{ role: 'user', content: 'hi' }], includeLorebook: 'matched', onDelta: (d) => setDeltas((x) => [...x, d]) }).then(setAnswer)}>Ask</button>
      <button type="button" onClick={async () => { await y.storage.set('note', 'kept'); setStored(String(await y.storage.get('note'))); }}>Store</button>
      <p data-testid="deltas">{deltas.join('|')}</p>
      <p data-testid="answer">{answer}</p>
      <p data-testid="stored">{stored}</p>
    </section>
  );
}
`,
    },
  },
};

describe('custom-interface sandbox in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  useBrowserPlatform({}, (p) => ({ server, browser } = p));

  async function open(): Promise<Page> {
    const page = await browser.newPage();
    page.setDefaultTimeout(40_000);
    const events: string[] = [];
    page.on('pageerror', (e) => events.push(`pageerror: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) events.push(`http ${r.status()} ${r.url()}`);
    });
    await page.goto(`${server.url}/dev/sandbox`);
    await page
      .getByTestId('sandbox-frame')
      .waitFor()
      .catch(async (error: Error) => {
        throw new Error(`${error.message}\n${(await page.content()).slice(0, 2000)}\n${events.join('\n')}`);
      });
    return page;
  }

  it('renders the sample world interface in an opaque-origin frame and shows its variables', async () => {
    const page = await open();
    const iframe = page.getByTestId('sandbox-frame');
    expect(await iframe.getAttribute('sandbox')).toBe('allow-scripts allow-forms');
    const frame = page.frameLocator('[data-testid=sandbox-frame]');
    await expect.poll(() => frame.locator('header').textContent()).toContain('HP 100/100');
    const header = await frame.locator('header').textContent();
    expect(header).toContain('Gold 10');
    expect(header).toContain('Level 1');
    expect(header).toContain('Torch lit');
    // the built-in Chat renders the greeting through renderBubble with contentHtml (Markdown)
    expect(await frame.locator('strong', { hasText: 'abbey stairs' }).count()).toBe(1);
    // utility classes from the world's source are compiled into the frame's stylesheet
    const background = await frame.locator('div.bg-stone-950').first().evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(background).not.toBe('rgba(0, 0, 0, 0)');
    // the frame's origin is opaque
    expect(await frame.locator('body').evaluate(() => window.origin)).toBe('null');

    // a parent-side state change reaches the frame; a frame button reaches the parent's handler
    await page.getByRole('button', { name: 'Lose 10 HP' }).click();
    await expect.poll(() => frame.locator('header').textContent()).toContain('HP 90/100');
    expect(await frame.locator('div.bg-red-950').count()).toBe(0);
    await frame.getByRole('button', { name: 'Drink potion' }).click();
    await expect.poll(() => page.evaluate(() => window.yuminaDev!.calls.map((c) => `${c.method}:${JSON.stringify(c.args)}`))).toContain(
      'executeAction:["drink-potion"]',
    );
    await expect.poll(() => frame.locator('header').textContent()).toContain('HP 100/100');
    await page.close();
  }, 120_000);

  it('delivers pushed state to onChange and the yumina:statechange event, and answers API calls', async () => {
    const page = await open();
    // Let the sample world's frame finish loading before switching worlds.
    await expect.poll(() => page.frameLocator('[data-testid=sandbox-frame]').locator('header').textContent(), { timeout: 60_000 }).toContain('HP');
    await page.evaluate((world) => window.yuminaDev!.setWorld(world), probeWorld);
    const frame = page.frameLocator('[data-testid=sandbox-frame]');
    await expect.poll(() => frame.getByTestId('world').textContent(), { timeout: 60_000 }).toBe('Probe');
    expect(await frame.getByTestId('hp').textContent()).toBe('100');

    await page.evaluate(() => window.yuminaDev!.setVariables({ hp: 42 }));
    await expect.poll(() => frame.getByTestId('log').locator('li').allTextContents()).toEqual(['onChange:hp:42:10', 'event:hp:42:10']);
    expect(await frame.getByTestId('hp').textContent()).toBe('42');

    // offChange via the returned unsubscribe: the window event still arrives, the callback does not
    await frame.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.evaluate(() => window.yuminaDev!.setVariables({ hp: 41 }));
    await expect.poll(() => frame.getByTestId('log').locator('li').allTextContents()).toEqual([
      'onChange:hp:42:10',
      'event:hp:42:10',
      'event:hp:41:10',
    ]);

    // sendMessage: the parent streams a reply whose directive changes gold; the frame sees it
    await frame.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.getByTestId('gold').textContent()).toBe('15');
    expect(await frame.getByTestId('messages').textContent()).toBe('3');
    const log = await frame.getByTestId('log').locator('li').allTextContents();
    expect(log).toContain('event:gold:41:15');

    // ai.complete streams deltas into onDelta and resolves with the text
    await frame.getByRole('button', { name: 'Ask' }).click();
    await expect.poll(() => frame.getByTestId('answer').textContent()).toBe('Hello from the fake model');
    expect(await frame.getByTestId('deltas').textContent()).toBe('Hello| from| the| fake| model');
    const ai = await page.evaluate(() => window.yuminaDev!.calls.find((c) => c.method === 'ai.complete')?.args[0]);
    expect(ai).toEqual({ messages: [{ role: 'user', content: 'hi' }], includeLorebook: 'matched', stream: true });

    // world-scoped storage round trip through the handlers
    await frame.getByRole('button', { name: 'Store' }).click();
    await expect.poll(() => frame.getByTestId('stored').textContent()).toBe('kept');
    await page.close();
  }, 120_000);
});
