import { readFileSync } from 'node:fs';
import type { Browser as PwBrowser, Locator, Page, Response } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { Browser, type TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { signUp } from '../support/sign-up.ts';

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

const sampleWorld = () => JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

/** 1 once the image has loaded, 0 once it has failed (or has no source); null while it is still loading. */
const imageState = (img: Locator) =>
  img.evaluate((el: HTMLImageElement) => (!el.getAttribute('src') ? 0 : el.complete ? (el.naturalWidth > 0 ? 1 : 0) : null));

describe('a world asset in the player and its sandboxed interface', () => {
  let server: TestServer;
  let browser: PwBrowser;
  let provider: FakeOpenAi;
  useBrowserPlatform({ provider: { apiKey: 'k' } }, async (p) => {
    ({ server, browser, provider } = p);
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
  });

  async function account(name: string): Promise<Browser> {
    const who = new Browser(server.url);
    await signUp(server, who, { email: `${name}-${Date.now()}@example.com`, password: 'long enough pw' });
    await who.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'm', apiKey: 'k' } });
    return who;
  }

  async function createWorld(who: Browser): Promise<{ id: string; revision: number; world: Record<string, unknown> }> {
    const world = sampleWorld();
    const created = (await (await who.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string; revision: number };
    return { ...created, world };
  }

  async function uploadPng(who: Browser, worldId: string): Promise<string> {
    const res = await who.fetch(`/api/worlds/${worldId}/assets?name=map.png`, {
      method: 'POST',
      body: new Blob([new Uint8Array(PNG)]),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { asset: { id: string } }).asset.id;
  }

  /** The player page of a world, logged in as `who` (the session cookie as the server sets it: HttpOnly, SameSite=Lax). */
  async function openPlayer(who: Browser, worldId: string, onResponse?: (res: Response) => void): Promise<{ page: Page; close(): Promise<void> }> {
    const context = await browser.newContext();
    await context.addCookies([...who.cookies].map(([name, value]) => ({ name, value, url: server.url, httpOnly: true, sameSite: 'Lax' as const })));
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    if (onResponse) page.on('response', onResponse);
    await page.goto(`${server.url}/play/${worldId}`);
    return { page, close: () => context.close() };
  }

  it('an uploaded PNG of a published world renders inside the sandbox through resolveAssetUrl', async () => {
    const author = await account('asset');
    const created = await createWorld(author);
    const assetId = await uploadPng(author, created.id);
    const world = created.world;
    world.rootComponent = {
      ...(world.rootComponent as object),
      entryFile: 'index.tsx',
      files: {
        'index.tsx': `export default function Screen() {
  const yumina = useYumina();
  return <img id="map" alt="map" src={yumina.resolveAssetUrl('asset://${assetId}')} />;
}`,
      },
    };
    expect((await author.fetch(`/api/worlds/${created.id}`, { method: 'PUT', json: { world, revision: created.revision } })).status).toBe(200);
    expect((await author.fetch(`/api/worlds/${created.id}/publish`, { method: 'POST' })).status).toBe(200);

    const { page, close } = await openPlayer(author, created.id);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => imageState(frame.locator('#map')), { timeout: 30_000 }).toBe(1);
    // A published world's assets are public: plain, long-cacheable URLs without a signature.
    expect(await frame.locator('#map').getAttribute('src')).toBe(`${server.url}/api/worlds/${created.id}/assets/${assetId}`);
    await close();
  }, 120_000);

  it("an unpublished world's PNG renders for its author in the sandbox and in the player; another world's private asset does not", async () => {
    const author = await account('draft');
    const stranger = await account('stranger');
    // The stranger's private world, and a second private world of the author: neither is reachable from world A.
    const strangerWorld = await createWorld(stranger);
    const strangerAsset = await uploadPng(stranger, strangerWorld.id);
    const otherOwn = await createWorld(author);
    const otherOwnAsset = await uploadPng(author, otherOwn.id);

    const created = await createWorld(author);
    const assetId = await uploadPng(author, created.id);
    const world = created.world as { entries: Record<string, unknown>[]; rootComponent: object };
    world.entries = [
      ...world.entries,
      {
        id: 'greeting-map',
        name: 'Greeting',
        content: `You unroll the map. ![the map](asset://${assetId}) A stolen page: ![stolen](asset://${strangerAsset}) Another of yours: ![elsewhere](asset://${otherOwnAsset})`,
        role: 'greeting',
        section: 'system-presets',
        position: 0,
      },
    ];
    world.rootComponent = {
      ...world.rootComponent,
      entryFile: 'index.tsx',
      files: {
        'index.tsx': `export default function Screen() {
  const yumina = useYumina();
  const own = yumina.resolveAssetUrl('asset://${assetId}');
  return (
    <div>
      <img id="map" alt="map" src={own} />
      <img id="foreign" alt="foreign" src={yumina.resolveAssetUrl('asset://${strangerAsset}')} />
      <img id="foreign-own" alt="foreign-own" src={yumina.resolveAssetUrl('asset://${otherOwnAsset}')} />
      <img id="spliced" alt="spliced" src={own.replace('/worlds/${created.id}/assets/${assetId}', '/worlds/${strangerWorld.id}/assets/${strangerAsset}')} />
      <img id="spliced-own" alt="spliced-own" src={own.replace('/worlds/${created.id}/assets/${assetId}', '/worlds/${otherOwn.id}/assets/${otherOwnAsset}')} />
      <output id="escapes">{JSON.stringify(['asset://../${strangerWorld.id}/assets/${strangerAsset}', 'asset://a/b', 'asset://${assetId}%2F..%2F..'].map((r) => yumina.resolveAssetUrl(r)))}</output>
    </div>
  );
}`,
      },
    };
    const saved = await author.fetch(`/api/worlds/${created.id}`, { method: 'PUT', json: { world, revision: created.revision } });
    expect(saved.status).toBe(200);
    expect(((await saved.json()) as { status: string }).status).not.toBe('published');

    const assetResponses: { url: string; status: number }[] = [];
    const { page, close } = await openPlayer(author, created.id, (res) => {
      if (res.url().includes('/assets/ast_')) assetResponses.push({ url: res.url(), status: res.status() });
    });
    const frame = page.frameLocator('iframe[title="World interface"]');

    // Inside the sandbox (opaque origin, no session cookie): the signed URL of this world loads.
    await expect.poll(() => imageState(frame.locator('#map')), { timeout: 30_000 }).toBe(1);
    const src = (await frame.locator('#map').getAttribute('src'))!;
    expect(src).toMatch(new RegExp(`^${server.url}/api/worlds/${created.id}/assets/${assetId}\\?sig=\\d+\\.[A-Za-z0-9_-]{43}$`));
    // Other worlds' private assets: through the reference form they resolve under this world (not found);
    // this world's signature spliced onto their paths is refused.
    for (const id of ['#foreign', '#foreign-own', '#spliced', '#spliced-own']) {
      await expect.poll(() => imageState(frame.locator(id)), { timeout: 15_000, message: id }).toBe(0);
    }
    expect(await frame.locator('#foreign').getAttribute('src')).toContain(`/api/worlds/${created.id}/assets/${strangerAsset}?sig=`);
    expect(JSON.parse((await frame.locator('#escapes').textContent())!)).toEqual(['', '', '']);

    // In the player outside the sandbox: the greeting's Markdown image of this world's asset renders.
    const messages = page.getByTestId('messages');
    await expect.poll(() => imageState(messages.locator(`img[data-asset-ref="asset://${assetId}"]`)), { timeout: 30_000 }).toBe(1);
    for (const ref of [`asset://${strangerAsset}`, `asset://${otherOwnAsset}`]) {
      await expect.poll(() => imageState(messages.locator(`img[data-asset-ref="${ref}"]`)), { timeout: 15_000, message: ref }).toBe(0);
    }

    // What the server answered: this world's asset read, the others refused.
    const status = (part: string) => assetResponses.filter((r) => r.url.includes(part)).map((r) => r.status);
    expect(status(`/assets/${assetId}`).length).toBeGreaterThan(0);
    expect(status(`/assets/${assetId}`).every((s) => s === 200 || s === 304)).toBe(true);
    for (const foreignId of [strangerAsset, otherOwnAsset]) {
      const seen = status(`/assets/${foreignId}`);
      expect(seen.length, foreignId).toBeGreaterThan(0);
      expect(seen.every((s) => s === 404), foreignId).toBe(true);
    }
    await close();
  }, 120_000);
});
