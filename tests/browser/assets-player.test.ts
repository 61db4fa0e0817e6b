import { readFileSync } from 'node:fs';
import type { Browser as PwBrowser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { hasPostgres } from '../support/postgres.ts';
import { hasRedis } from '../support/redis.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe.runIf(hasPostgres && hasRedis && hasChromium)('a world asset in the player’s sandboxed interface', () => {
  let server: TestServer;
  let browser: PwBrowser;
  let provider: FakeOpenAi;
  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'k' });
    server = await startTestServer({}, { web: true });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await provider?.close();
  });

  it('an uploaded PNG renders inside the sandbox through resolveAssetUrl', async () => {
    const author = new Browser(server.url);
    await author.fetch('/api/auth/signup', { method: 'POST', json: { email: `asset-${Date.now()}@example.com`, password: 'long enough pw' } });
    await author.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'm', apiKey: 'k' } });
    const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
    const created = (await (await author.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string; revision: number };
    const uploaded = await author.fetch(`/api/worlds/${created.id}/assets?name=map.png`, {
      method: 'POST',
      body: new Blob([new Uint8Array(PNG)]),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(uploaded.status).toBe(201);
    const { asset } = (await uploaded.json()) as { asset: { id: string } };
    world.rootComponent = {
      ...world.rootComponent,
      entryFile: 'index.tsx',
      files: {
        'index.tsx': `export default function Screen() {
  const yumina = useYumina();
  return <img id="map" alt="map" src={yumina.resolveAssetUrl('asset://${asset.id}')} />;
}`,
      },
    };
    expect((await author.fetch(`/api/worlds/${created.id}`, { method: 'PUT', json: { world, revision: created.revision } })).status).toBe(200);
    expect((await author.fetch(`/api/worlds/${created.id}/publish`, { method: 'POST' })).status).toBe(200);

    const context = await browser.newContext();
    await context.addCookies(
      [...author.cookies].map(([name, value]) => ({ name, value, url: server.url })),
    );
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${server.url}/play/${created.id}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect
      .poll(() => frame.locator('#map').evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0)), { timeout: 30_000 })
      .toBe(1);
    await context.close();
  }, 120_000);
});
