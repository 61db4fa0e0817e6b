import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld } from '../support/player-world.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/** The Ashen Depths with an interface that reports mode, capabilities and what a guest's calls answer. */
function guestWorld() {
  const world = sampleWorld('ashen-depths') as Record<string, unknown>;
  world.name = 'Guest Depths';
  world.rootComponent = {
    id: '3c9a1b7e-5d2f-4e8a-9b6c-1d0e2f3a4b5c',
    name: 'Guest probe',
    entryFile: 'index.tsx',
    files: {
      'index.tsx': `export default function Probe() {
  const yumina = useYumina();
  const [answer, setAnswer] = React.useState('');
  return (
    <div>
      <span id="mode">{yumina.mode}</span>
      <span id="caps">{JSON.stringify(yumina.capabilities)}</span>
      <span id="hp">HP {String(yumina.variables.hp)}</span>
      <span id="count">{yumina.messages.length}</span>
      <button id="save" type="button" onClick={() => yumina.saveCheckpoint('x').then(() => setAnswer('saved'), (e) => setAnswer(e.code + ': ' + e.message))}>Save</button>
      <button id="send" type="button" onClick={() => yumina.sendMessage('I look around')}>Send</button>
      <span id="answer">{answer}</span>
    </div>
  );
}`,
    },
    updatedAt: '2026-11-24T00:00:00.000Z',
  };
  return world;
}

describe('guest preview in the real player', () => {
  let guestServer: TestServer;
  let browser: Browser;
  let official: FakeOpenAi;

  // Guests write on the platform's official provider: the server is started with it (so not through the shared harness).
  beforeAll(async () => {
    official = await startFakeOpenAi({ apiKey: 'platform-key' });
    [guestServer, browser] = await Promise.all([
      startTestServer(
        { OFFICIAL_AI_BASE_URL: official.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform/story', GUEST_PREVIEW_TURNS_PER_HOUR: '5' },
        { web: true },
      ),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await guestServer?.stop();
    await official?.close();
  });

  it('a signed-out visitor plays a published world in guest-preview mode; what would persist asks to sign in', async () => {
    const author = await browser.newPage();
    await author.goto(`${guestServer.url}/`);
    await signUp(guestServer, author, { email: `author-${Date.now()}@example.com`, password: 'long enough pw' });
    const worldId = await author.evaluate(async (world) => {
      const post = (url: string, body?: unknown) =>
        fetch(url, { method: 'POST', headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((r) => r.json());
      const created = (await post('/api/worlds', { world })) as { id: string };
      return created.id;
    }, guestWorld());
    await guestServer.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    expect((await author.evaluate((id) => fetch(`/api/worlds/${id}/publish`, { method: 'POST' }).then((r) => r.status), worldId))).toBeLessThan(300);
    await author.close();

    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${guestServer.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.locator('#mode').textContent(), { timeout: 20_000 }).toBe('guest-preview');
    expect(JSON.parse((await frame.locator('#caps').textContent())!)).toEqual({ canSendMessage: true, canPersistSession: false, canUseSessionApis: false, requiresAuth: true });
    expect(await page.getByTestId('guest-preview').textContent()).toContain('Sign in');
    expect(new URL(page.url()).pathname).toBe(`/play/${worldId}`);

    official.enqueue({ kind: 'completion', content: 'Ash falls. [hp: -10]' });
    await frame.locator('#send').click();
    await expect.poll(() => frame.locator('#hp').textContent(), { timeout: 20_000 }).toBe('HP 90');
    expect(await frame.locator('#count').textContent()).toBe('3'); // the greeting, the message, the reply
    expect(await page.locator('[data-testid="messages"]').textContent()).toContain('Ash falls.');

    await frame.locator('#save').click();
    await expect.poll(() => frame.locator('#answer').textContent()).toMatch(/^REQUIRES_AUTH: .*sign in/);
    await context.close();
  }, 120_000);
});
