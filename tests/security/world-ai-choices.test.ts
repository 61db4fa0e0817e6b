import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Issue 43, point 9: a world's interface changed the player's account-wide provider and model
 * (`setPreferredProvider('official')` moved an account from its own key to spending credits;
 * `setModel` changed its default model). From a world, both apply to that world only, and a switch
 * to spending credits asks the player in the platform's own page first.
 */
const INTERFACE = String.raw`
const y = () => window.yumina;
async function outcome(run) {
  try { return 'done ' + JSON.stringify(await run()); } catch (e) { return 'refused ' + (e && e.code) + ': ' + (e && e.message); }
}
export default function Chooser() {
  const [answer, setAnswer] = React.useState('');
  // reads the state fields again now and then (they change after the answers arrive)
  const [, tick] = React.useState(0);
  React.useEffect(() => { const t = setInterval(() => tick((n) => n + 1), 200); return () => clearInterval(t); }, []);
  const run = (work) => { setAnswer('…'); outcome(work).then(setAnswer); };
  return (
    <div className="p-2">
      <button id="model" type="button" onClick={() => run(() => y().setModel('world-picked-model'))}>Model</button>
      <button id="credits" type="button" onClick={() => run(() => y().setPreferredProvider('official'))}>Credits</button>
      <span id="selected">{String(y().selectedModel) + ' ' + y().preferredProvider}</span>
      <pre id="answer">{answer}</pre>
    </div>
  );
}
`;

function chooserWorld() {
  return {
    ...sampleWorld('willow-street'),
    name: 'Provider Chooser',
    rootComponent: { id: '7c6d5e4f-3a2b-4c1d-9e0f-8a7b6c5d4e3f', name: 'Chooser', entryFile: 'index.tsx', files: { 'index.tsx': INTERFACE }, updatedAt: '2026-11-29T00:00:00.000Z' },
  };
}

describe('a world chooses the provider and model for itself alone (issue 43 point 9)', () => {
  let server: TestServer;
  let browser: Browser;
  let official: FakeOpenAi;
  let own: FakeOpenAi;

  beforeAll(async () => {
    [official, own] = await Promise.all([startFakeOpenAi({ apiKey: 'platform-key' }), startFakeOpenAi({ apiKey: 'own-key' })]);
    [server, browser] = await Promise.all([
      startTestServer({ OFFICIAL_AI_BASE_URL: official.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform/story' }, { web: true }),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await Promise.all([official?.close(), own?.close()]);
  });

  /** One turn through the real send route, from the page's signed-in context: which provider got it, with which model. */
  async function turnIn(page: Page, worldId: string): Promise<{ provider: 'official' | 'own' | 'none'; model: unknown }> {
    const before = { official: official.completions.length, own: own.completions.length };
    await page.evaluate(async (id) => {
      const created = (await (await fetch(`/api/worlds/${id}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
      const res = await fetch(`/api/sessions/${created.session.id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'Hello there' }) });
      await res.text();
    }, worldId);
    if (official.completions.length > before.official) return { provider: 'official', model: official.completions.at(-1)!.body?.model };
    if (own.completions.length > before.own) return { provider: 'own', model: own.completions.at(-1)!.body?.model };
    return { provider: 'none', model: null };
  }

  it("setModel and setPreferredProvider from a world change that world's turns only; credits only after the player says yes in the platform's dialog", async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/`);
    const [chooserId, otherId] = (await signUpWithWorlds(server, page, { providerUrl: own.url, apiKey: 'own-key', worlds: [chooserWorld(), { ...sampleWorld('willow-street'), name: 'Plain World', rootComponent: null }] })) as [string, string];
    const accountId = await page.evaluate(() => fetch('/api/auth/session').then((r) => r.json()).then((s) => s.account.id as string));
    const db = server.ctx.db.primary;
    // The player has credits to spend: a move to credits would be real.
    await db.query(`insert into billing_accounts (account_id, credits) values ($1, 100000) on conflict (account_id) do update set credits = 100000`, [accountId]);
    const accountWide = async () =>
      (
        await db.query<{ preference: string; default_model: string }>(
          'select b.preference, c.default_model from billing_accounts b join ai_connections c on c.account_id = b.account_id where b.account_id = $1',
          [accountId],
        )
      ).rows[0];
    const before = await accountWide();
    expect(before).toEqual({ preference: 'auto', default_model: 'story-model' });

    await page.goto(`${server.url}/play/${chooserId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.locator('#selected').textContent(), { timeout: 20_000 }).toBe('story-model private');

    // setModel: this world's turns use the world's pick; the account's model and other worlds' turns do not change.
    await frame.locator('#model').click();
    await expect.poll(() => frame.locator('#answer').textContent()).toBe('done null');
    expect(await accountWide()).toEqual(before);
    expect(await turnIn(page, chooserId)).toEqual({ provider: 'own', model: 'world-picked-model' });
    expect(await turnIn(page, otherId)).toEqual({ provider: 'own', model: 'story-model' });

    // setPreferredProvider('official'): the platform's own dialog asks (outside the world's frame); a no changes nothing.
    const dialog = page.getByRole('alertdialog');
    await frame.locator('#credits').click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.textContent()).toContain('credits');
    expect(await dialog.textContent()).toContain('this world only');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => frame.locator('#answer').textContent()).toMatch(/^done \{"ok":false/);
    expect(await accountWide()).toEqual(before);
    expect(await turnIn(page, chooserId)).toMatchObject({ provider: 'own' });
    // The world cannot nag: declined once, it is not asked again on this page.
    await frame.locator('#credits').click();
    await expect.poll(() => frame.locator('#answer').textContent()).toMatch(/^done \{"ok":false/);
    expect(await dialog.count()).toBe(0);

    // Nor can its page skip the question: the route itself wants the consent.
    const unasked = await page.evaluate((id) => fetch(`/api/worlds/${id}/player/provider`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'official' }) }).then((r) => r.json()), chooserId);
    expect(unasked).toMatchObject({ ok: false, consentRequired: true });

    // After a reload the world may ask again; a yes moves this world's turns to credits, and only this world's.
    await page.reload();
    await expect.poll(() => frame.locator('#selected').textContent(), { timeout: 20_000 }).toBe('world-picked-model private');
    await frame.locator('#credits').click();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => frame.locator('#answer').textContent()).toBe('done {"ok":true,"provider":"official"}');
    await expect.poll(() => frame.locator('#selected').textContent()).toBe('platform/story official');
    expect(await accountWide()).toEqual(before);
    expect(await turnIn(page, chooserId)).toEqual({ provider: 'official', model: 'platform/story' });
    expect(await turnIn(page, otherId)).toEqual({ provider: 'own', model: 'story-model' });
    // Another world's route is no way around it either: a world the player cannot open is not found.
    const foreign = await page.evaluate(() => fetch('/api/worlds/wld_doesnotexist0000/player/model', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'x' }) }).then((r) => r.status));
    expect(foreign).toBe(404);
    await page.close();
  }, 180_000);
});
