import type { Browser, Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { type FakeOpenAi, fakeReplies } from '../support/fake-openai.ts';
import { seriousViolations } from '../support/axe.ts';
import { screenPath } from '../support/screens.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 150 });

const PARAGRAPH =
  'A survival game in a radio tower over 14 nights: the keeper has health and energy, something knocks at the door every night, and when energy runs out they are warned. A green CRT-style screen shows health and energy above the chat.';

const SCREEN = `export default function Screen() {
  const y = useYumina();
  return (
    <div className="crt" style={{ background: '#031', color: '#7f7', fontFamily: 'monospace', padding: 12 }}>
      <p data-testid="hud">HEALTH {String(y.variables.health)} / ENERGY {String(y.variables.energy)}</p>
      <MessageList />
      <MessageInput />
    </div>
  );
}
`;

/** What the fake model does with the paragraph: variables, entries, a greeting, a rule, an interface file (and one mistake it must fix). */
const BUILD = [
  { name: 'set_variable', arguments: { variable: { id: 'health', name: 'Health', type: 'number', defaultValue: 10, min: 0, max: 10 } } },
  { name: 'set_variable', arguments: { variable: { id: 'energy', name: 'Energy', type: 'number', defaultValue: 5, min: 0, max: 5, behaviorRules: 'Each night costs energy: [energy: -1].' } } },
  { name: 'set_entry', arguments: { entry: { id: 'tower', name: 'The tower', content: 'A radio tower on a dead coast. The keeper must last 14 nights.' } } },
  { name: 'set_entry', arguments: { entry: { id: 'knocking', name: 'The knocking', content: 'Every night, three knocks at the door. Nobody is ever there.', keywords: ['door', 'knock'] } } },
  { name: 'set_greeting', arguments: { id: 'first-night', content: 'Night 1. The radio hisses. Somewhere below, something knocks three times.' } },
  // a rule on a variable the model forgot: refused, sent back, never on the card
  { name: 'set_rule', arguments: { rule: { id: 'panic', name: 'Panic', trigger: { type: 'variable-crossed', variableId: 'sanity', direction: 'drops-below', threshold: 1 }, actions: [] } } },
  {
    name: 'set_rule',
    arguments: {
      rule: {
        id: 'exhausted',
        name: 'Exhausted',
        trigger: { type: 'variable-crossed', variableId: 'energy', direction: 'drops-below', threshold: 1 },
        actions: [{ type: 'notify-player', style: 'warning', message: 'You can barely stand.' }],
      },
    },
  },
  { name: 'set_interface_file', arguments: { path: 'index.tsx', content: SCREEN } },
];

describe('the studio assistant in a real browser (issue 48)', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  useBrowserPlatform({ provider: { apiKey: 'assistant-key' } }, (p) => ({ server, browser, provider } = p));
  beforeEach(() => provider.reset());

  const worldOf = async (page: Page, id: string) =>
    (await page.evaluate(async (id) => (await fetch(`/api/worlds/${id}`)).json(), id)) as {
      revision: number;
      status: string;
      liveRevision: number | null;
      world: { name: string; variables: { id: string; max?: number }[]; entries: { id: string }[]; rules: { id: string }[]; rootComponent: { files: Record<string, string> } | null };
    };

  it('builds a world from one paragraph, approves, rejects with feedback, rolls back, and plays a turn of the result', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `assistant-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Keeper' });
    const worldId = await page.evaluate(async (providerUrl) => {
      const call = (url: string, method: string, body: unknown) => fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
      await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'builder-model', apiKey: 'assistant-key' });
      return ((await call('/api/worlds', 'POST', { world: { version: '20.0.0', name: 'Untitled world' } })) as { id: string }).id;
    }, provider.url);

    await page.goto(`${server.url}/studio/${worldId}#assistant`);
    const panel = page.getByTestId('assistant');
    await panel.getByRole('heading', { name: 'Assistant' }).waitFor();

    // 1. One paragraph → one card (the refused rule went back to the model, not to the author).
    provider.enqueue(
      fakeReplies.toolCalls(BUILD, '', { prompt_tokens: 3000, completion_tokens: 900 }),
      fakeReplies.toolCalls([{ name: 'set_cover_text', arguments: { name: 'Fourteen Nights', description: 'Keep the radio tower alive for 14 nights.' } }], '', { prompt_tokens: 4200, completion_tokens: 80 }),
      fakeReplies.completion('Fourteen Nights: health and energy, the knocking, a warning when energy runs out, and a green CRT screen.', { prompt_tokens: 4400, completion_tokens: 40 }),
    );
    await panel.getByLabel('What should the assistant build or change?').fill(PARAGRAPH);
    await panel.getByRole('button', { name: 'Ask the assistant' }).click();
    const card = panel.getByRole('region', { name: /^Change card/ }).last();
    await poll(() => card.locator('h3').textContent()).toBe('Change card · 8 changes');
    expect(await card.locator('.assistant-change summary').allTextContents()).toEqual([
      'Add variable health “Health”',
      'Add variable energy “Energy”',
      'Add entry tower “The tower”',
      'Add entry knocking “The knocking”',
      'Add greeting first-night “Greeting”',
      'Add rule exhausted “Exhausted”',
      'Add interface file index.tsx (entry)',
      'Change the cover text (name and description)',
    ]);
    // the cost of each step, on the author's own connection
    const steps = panel.getByTestId('assistant-step');
    expect(await steps.allTextContents()).toEqual([
      expect.stringMatching(/^Step 1: 3,900 tokens · your connection, no credits · 7 operations checked1 refused operation sent back to the assistant/),
      expect.stringMatching(/^Step 2: 4,280 tokens · your connection, no credits · 1 operation checked$/),
      'Step 3: 4,440 tokens · your connection, no credits',
    ]);
    expect(await panel.getByTestId('assistant-total').textContent()).toBe('In all: 12,620 tokens · no credits');
    await steps.first().getByText('1 refused operation sent back to the assistant').click();
    expect(await steps.first().locator('li').textContent()).toMatch(/^set_rule The world would not validate.*sanity/);
    // the readable diff of the interface file
    await card.getByText('Add interface file index.tsx (entry)').click();
    expect(await card.getByLabel('Diff: Add interface file index.tsx (entry)').textContent()).toContain('+ export default function Screen() {');
    expect((await worldOf(page, worldId)).world.variables).toEqual([]); // nothing applied yet
    // the card's interface runs in the sandbox preview before Approve is offered
    await poll(() => card.frameLocator('iframe[title="Card interface preview"]').getByTestId('hud').textContent()).toBe('HEALTH 10 / ENERGY 5');
    await poll(() => card.getByRole('button', { name: 'Approve' }).isEnabled()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 1100 });
    await panel.locator('.assistant-request').first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: screenPath('studio-assistant-1280') });
    await page.setViewportSize({ width: 390, height: 844 });
    await card.locator('h3').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await poll(() => card.frameLocator('iframe[title="Card interface preview"]').getByTestId('hud').isVisible()).toBe(true);
    await page.waitForTimeout(300); // the frame's paint after the resize
    await page.screenshot({ path: screenPath('studio-assistant-390') });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 900 });

    // 2. Approve: one revision, the studio shows it, nothing published.
    const before = await worldOf(page, worldId);
    await card.getByRole('button', { name: 'Approve' }).click();
    await poll(() => card.locator('.badge').textContent()).toBe(`Approved · revision ${before.revision + 1}`);
    const built = await worldOf(page, worldId);
    expect(built.revision).toBe(before.revision + 1);
    expect(built.world.name).toBe('Fourteen Nights');
    expect(built.world.variables.map((v) => v.id)).toEqual(['health', 'energy']);
    expect(built.world.rules.map((r) => r.id)).toEqual(['exhausted']);
    expect(Object.keys(built.world.rootComponent!.files)).toEqual(['index.tsx']);
    expect([built.status, built.liveRevision]).toEqual(['saved', null]);
    await poll(() => page.locator('h1').textContent()).toBe('Studio · Fourteen Nights');

    // 3. A second request; reject it with a reason, which goes back for another round.
    provider.enqueue(fakeReplies.toolCalls([{ name: 'set_variable', arguments: { variable: { id: 'health', name: 'Health', type: 'number', defaultValue: 3, min: 0, max: 3 } } }]), fakeReplies.completion('Health is now out of 3.'));
    await panel.getByLabel('What should the assistant build or change?').fill('Make it harder.');
    await panel.getByRole('button', { name: 'Ask the assistant' }).click();
    const second = panel.locator('li[data-status="proposed"]');
    await poll(() => second.locator('.assistant-change summary').allTextContents()).toEqual(['Change variable health “Health”']);
    provider.enqueue(
      fakeReplies.toolCalls([{ name: 'set_variable', arguments: { variable: { id: 'energy', name: 'Energy', type: 'number', defaultValue: 3, min: 0, max: 5, behaviorRules: 'Each night costs energy: [energy: -1].' } } }]),
      fakeReplies.completion('Energy starts at 3 instead; health stays at 10.'),
    );
    await second.getByLabel('Reason to reject (sent back to the assistant)').fill('Keep health at 10; make energy start lower instead.');
    await second.getByRole('button', { name: 'Reject and ask again' }).click();
    await poll(() => panel.locator('li[data-status="rejected"] .badge').textContent()).toBe('Rejected');
    const revised = panel.locator('li[data-status="proposed"]');
    await poll(() => revised.locator('.assistant-change summary').allTextContents()).toEqual(['Change variable energy “Energy”']);
    expect(await revised.locator('.assistant-request').textContent()).toBe('Rejected: Keep health at 10; make energy start lower instead.');
    const asked = provider.completions.at(-2)!.body!.messages as { role: string; content: string }[];
    expect(asked.at(-1)!.content).toContain('<author-feedback>\nKeep health at 10; make energy start lower instead.\n</author-feedback>');
    await revised.getByRole('button', { name: 'Approve' }).click();
    await poll(() => panel.locator('li[data-status="approved"]').count()).toBe(2);
    await poll(async () => (await worldOf(page, worldId)).world.variables.find((v) => v.id === 'energy')).toMatchObject({ defaultValue: 3 });

    // 4. Roll back to the first card's snapshot: energy starts at 5 again.
    await panel.locator('li[data-status="approved"]').first().getByRole('button', { name: 'Roll back to this card' }).click();
    await poll(async () => (await worldOf(page, worldId)).world.variables.find((v) => v.id === 'energy')).toMatchObject({ defaultValue: 5 });
    await poll(() => panel.locator('.assistant-note').last().textContent()).toMatch(/^Rolled back to revision \d+ \(after that card\)\.$/);

    // 5. Play a turn of the result: the assistant's interface, its variables and its rule.
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await poll(() => frame.getByTestId('hud').textContent()).toBe('HEALTH 10 / ENERGY 5');
    provider.enqueue(fakeReplies.completion('Three knocks. You stay awake all night by the door. [energy: -5]'));
    await frame.getByLabel('Message').fill('I listen at the door');
    await frame.getByRole('button', { name: 'Send' }).click();
    await poll(() => frame.getByTestId('hud').textContent()).toBe('HEALTH 10 / ENERGY 0');
    expect(await frame.locator('[data-yumina="messages"]').textContent()).toContain('Three knocks.');
    await poll(() => page.locator('ul[aria-label="Notifications"]').textContent()).toContain('You can barely stand.');
    // the turn's prompt carried the assistant's entries
    const turn = provider.completions.at(-1)!.body!.messages as { content: string }[];
    expect(turn.map((m) => m.content).join('\n')).toContain('A radio tower on a dead coast.');
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);

  it("the runtime check: a card whose interface builds but fails in the sandbox preview goes back to the assistant with the error, and is never approvable", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `assistant-runtime-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Runtime' });
    const worldId = await page.evaluate(async (providerUrl) => {
      const call = (url: string, method: string, body: unknown) => fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
      await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'builder-model', apiKey: 'assistant-key' });
      return ((await call('/api/worlds', 'POST', { world: { version: '20.0.0', name: 'Fragile screen' } })) as { id: string }).id;
    }, provider.url);
    await page.goto(`${server.url}/studio/${worldId}#assistant`);
    const panel = page.getByTestId('assistant');
    const broken = 'export default function Screen() {\n  const y = useYumina();\n  return <p>{y.variables.inventory.items.length} items</p>;\n}\n';
    const fixed = 'export default function Screen() {\n  return <p data-testid="fixed">No items yet</p>;\n}\n';
    provider.enqueue(
      fakeReplies.toolCalls([{ name: 'set_interface_file', arguments: { path: 'index.tsx', content: broken } }]),
      fakeReplies.completion('An inventory screen.'),
      // the error comes back: the model fixes it
      fakeReplies.toolCalls([{ name: 'set_interface_file', arguments: { path: 'index.tsx', content: fixed } }]),
      fakeReplies.completion('Fixed: the screen no longer reads a variable that does not exist.'),
    );
    const sent = provider.completions.length;
    await panel.getByLabel('What should the assistant build or change?').fill('An inventory screen.');
    await panel.getByRole('button', { name: 'Ask the assistant' }).click();
    // the broken card is rejected by the check itself, with the frame's error as the reason
    await poll(() => panel.locator('li[data-status="rejected"]').count()).toBe(1);
    expect(await panel.locator('li[data-status="rejected"] .assistant-request').textContent()).toBe('An inventory screen.');
    const feedback = provider.completions[sent + 2]!.body!.messages as { role: string; content: string }[];
    expect(feedback.at(-1)!.content).toMatch(/fails at runtime in the studio's sandbox preview: TypeError: .*'items'/);
    // the fixed card passes the check and can be approved
    const card = panel.locator('li[data-status="proposed"]');
    await poll(() => card.locator('.assistant-change summary').allTextContents()).toEqual(['Add interface file index.tsx (entry)']);
    await poll(() => card.frameLocator('iframe[title="Card interface preview"]').getByTestId('fixed').count()).toBe(1);
    await card.getByRole('button', { name: 'Approve' }).click();
    await poll(() => panel.locator('li[data-status="approved"]').count()).toBe(1);
    const saved = (await page.evaluate(async (id) => (await fetch(`/api/worlds/${id}`)).json(), worldId)) as { world: { rootComponent: { files: Record<string, string> } } };
    expect(saved.world.rootComponent.files['index.tsx']).toBe(fixed);
    await context.close();
  }, 90_000);

  it('unsaved edits in the studio hold Approve back until they are saved, then the card applies on top of them', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `assistant-dirty-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Dirty' });
    const worldId = await page.evaluate(async (providerUrl) => {
      const call = (url: string, method: string, body: unknown) => fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
      await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'builder-model', apiKey: 'assistant-key' });
      return ((await call('/api/worlds', 'POST', { world: { version: '20.0.0', name: 'Half written' } })) as { id: string }).id;
    }, provider.url);
    await page.goto(`${server.url}/studio/${worldId}#assistant`);
    const panel = page.getByTestId('assistant');
    provider.enqueue(fakeReplies.toolCalls([{ name: 'set_variable', arguments: { variable: { id: 'gold', name: 'Gold', type: 'number', defaultValue: 0 } } }]), fakeReplies.completion('Gold added.'));
    await panel.getByLabel('What should the assistant build or change?').fill('Add gold.');
    await panel.getByRole('button', { name: 'Ask the assistant' }).click();
    const card = panel.locator('li[data-status="proposed"]');
    await poll(() => card.getByRole('button', { name: 'Approve' }).isEnabled()).toBe(true);
    // an unsaved edit elsewhere in the studio
    const nav = page.getByRole('navigation', { name: 'Studio sections' });
    await nav.getByRole('button', { name: 'Basics', exact: true }).click();
    await page.getByLabel('Description', { exact: true }).fill('A trader with an empty purse.');
    await nav.getByRole('button', { name: 'Assistant', exact: true }).click();
    await poll(() => card.getByText('You have unsaved edits: save or discard them before applying or rolling back.').count()).toBe(1);
    expect(await card.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await poll(() => card.getByRole('button', { name: 'Approve' }).isEnabled()).toBe(true);
    await card.getByRole('button', { name: 'Approve' }).click();
    await poll(() => panel.locator('li[data-status="approved"]').count()).toBe(1);
    const saved = (await page.evaluate(async (id) => (await fetch(`/api/worlds/${id}`)).json(), worldId)) as { revision: number; world: { description: string; variables: { id: string }[] } };
    expect([saved.revision, saved.world.description, saved.world.variables.map((v) => v.id)]).toEqual([3, 'A trader with an empty purse.', ['gold']]);
    await context.close();
  }, 90_000);

  it('Stop ends a step at once: the provider request is aborted and nothing is kept', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    await signUp(server, page, { email: `assistant-stop-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Stopper' });
    const worldId = await page.evaluate(async (providerUrl) => {
      const call = (url: string, method: string, body: unknown) => fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
      await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'builder-model', apiKey: 'assistant-key' });
      return ((await call('/api/worlds', 'POST', { world: { version: '20.0.0', name: 'Stopped world' } })) as { id: string }).id;
    }, provider.url);
    await page.goto(`${server.url}/studio/${worldId}#assistant`);
    const panel = page.getByTestId('assistant');
    provider.enqueue({ kind: 'hang' });
    const sent = provider.completions.length;
    await panel.getByLabel('What should the assistant build or change?').fill('Add a variable.');
    await panel.getByRole('button', { name: 'Ask the assistant' }).click();
    await poll(() => provider.completions.length).toBe(sent + 1);
    await panel.getByRole('button', { name: 'Stop' }).click();
    await poll(() => provider.completions[sent]!.aborted).toBe(true);
    await poll(() => panel.locator('li[data-status="stopped"]').count()).toBe(1);
    expect(await panel.getByText('Stopped; nothing of this round was kept.').count()).toBe(1);
    await context.close();
  }, 90_000);
});
