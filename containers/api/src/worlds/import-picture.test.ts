/**
 * Issue 31 point 2: a card's picture is kept. A PNG card's image becomes the world's cover (sized
 * for the library card) and the character's avatar (an asset of the world through the same asset
 * store as uploads); V3 assets embedded as data: URIs are stored as assets of the world; the report
 * lists what was kept and what was not.
 */
import { decodeBase64Utf8, encodeBase64, encodeBase64Utf8, pngReplaceText, readPngText } from '@yumina/world';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradientPng } from '../../../../tests/support/png.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

interface Imported {
  id: string;
  coverUrl: string | null;
  avatarUrl: string | null;
  avatarAssetId: string | null;
  report: { assets: { id: string; embedded?: string; storedAs?: string; role?: string; notKept?: string }[] };
}

const card = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'Iris', description: '{{char}} paints.', first_mes: 'Hello.', personality: '', scenario: '', mes_example: '', ...extra } });

describe('a card picture becomes the cover and the avatar (real PostgreSQL)', () => {
  let server: TestServer;
  let author: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    await signUp(server, author, { email: `picture-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Picture' });
  });
  afterAll(() => server?.stop());

  const picture = async (url: string) => {
    const res = await author.fetch(url);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    return { type: res.headers.get('content-type'), meta: await sharp(bytes).metadata() };
  };

  it('a PNG card: cover 640 × 360 and avatar with the whole portrait, stored as assets of the world', async () => {
    const png = pngReplaceText(new Uint8Array(gradientPng(600, 900, [200, 40, 40], [40, 40, 200])), { ccv3: encodeBase64Utf8(card()) });
    const res = await author.fetch('/api/worlds/import?name=iris.png', { method: 'POST', headers: { 'content-type': 'image/png' }, body: png as Uint8Array<ArrayBuffer> });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Imported;
    expect(body.coverUrl).toMatch(/^\/api\/worlds\/wld_[^/]+\/assets\/ast_/);
    expect(body.avatarUrl).toMatch(/^\/api\/worlds\/wld_[^/]+\/assets\/ast_/);
    const cover = await picture(body.coverUrl!);
    expect(cover).toMatchObject({ type: 'image/webp', meta: { width: 640, height: 360 } });
    const avatar = await picture(body.avatarUrl!);
    expect(avatar).toMatchObject({ type: 'image/webp', meta: { width: 512, height: 768 } });
    // The same asset store as uploads: both are listed among the world's assets (and the card's own picture, for card exports).
    const assets = (await (await author.fetch(`/api/worlds/${body.id}/assets`)).json()) as { assets: { id: string; kind: string }[] };
    expect(assets.assets.map((asset) => asset.kind)).toEqual(['image', 'image', 'image']);
    expect(assets.assets.map((asset) => asset.id)).toContain(body.avatarAssetId);
    expect(body.report.assets[0]).toMatchObject({ id: 'picture', embedded: 'picture', storedAs: `asset://${body.avatarAssetId}`, role: expect.stringContaining('the library cover is asset://') });
    // The world's reader view carries the avatar too (issue 30 B reads it there).
    expect(((await (await author.fetch(`/api/worlds/${body.id}`)).json()) as { avatarUrl: string }).avatarUrl).toBe(body.avatarUrl);
  });

  it('a V3 JSON card: an embedded icon becomes the picture, other data: assets are stored, and what is not kept is said', async () => {
    const icon = `data:image/png;base64,${encodeBase64(new Uint8Array(gradientPng(300, 200, [0, 120, 0], [0, 0, 0])))}`;
    const json = card({
      assets: [
        { type: 'icon', uri: icon, name: 'main', ext: 'png' },
        { type: 'background', uri: `data:image/png;base64,${encodeBase64(new Uint8Array(gradientPng(64, 32, [1, 2, 3], [4, 5, 6])))}`, name: 'hall', ext: 'png' },
        { type: 'emotion', uri: 'data:text/plain,hello', name: 'note', ext: 'txt' },
        { type: 'emotion', uri: 'https://example.invalid/joy.png', name: 'joy', ext: 'png' },
      ],
    });
    const res = await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: json });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Imported;
    const byId = Object.fromEntries(body.report.assets.map((asset) => [asset.id, asset]));
    expect(byId.main).toMatchObject({ embedded: 'data', storedAs: `asset://${body.avatarAssetId}` });
    expect(byId.hall).toMatchObject({ embedded: 'data', storedAs: expect.stringMatching(/^asset:\/\/ast_/), role: 'a background asset of the card' });
    expect(byId.note).toMatchObject({ embedded: 'data', notKept: expect.stringContaining('Only images') });
    expect(byId.joy).toEqual({ id: 'joy', reference: 'https://example.invalid/joy.png', paths: ['data.assets[3]'] });
    expect(await picture(body.coverUrl!)).toMatchObject({ meta: { width: 640, height: 360 } });
    expect(await picture(body.avatarUrl!)).toMatchObject({ meta: { width: 300, height: 200 } });
  });

  it('a PNG card whose picture cannot be decoded is imported without a cover, and the report says why', async () => {
    const png = pngReplaceText(new Uint8Array(gradientPng(40, 40, [0, 0, 0], [9, 9, 9])), { ccv3: encodeBase64Utf8(card()) });
    // Break the image data (IDAT) but keep the chunks readable.
    const at = Buffer.from(png).indexOf('IDAT') + 6;
    png.fill(0x55, at, at + 20);
    const res = await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'image/png' }, body: png as Uint8Array<ArrayBuffer> });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Imported;
    expect(body.coverUrl).toBeNull();
    expect(body.report.assets[0]).toMatchObject({ id: 'picture', notKept: expect.stringContaining('the picture could not be read') });
  });

  it('the studio export: card.png carries the avatar as its picture and the world, and imports back as the same world with its picture', async () => {
    const png = pngReplaceText(new Uint8Array(gradientPng(400, 600, [250, 200, 0], [0, 80, 160])), { ccv3: encodeBase64Utf8(card({ character_book: { entries: [{ keys: ['paint'], content: 'Iris mixes her own paints.', enabled: true, insertion_order: 3, extensions: { position: 4, depth: 2 } }] } })) });
    const first = (await (await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'image/png' }, body: png as Uint8Array<ArrayBuffer> })).json()) as Imported & { world: unknown };
    const res = await author.fetch(`/api/worlds/${first.id}/card.png`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-disposition')).toContain('Iris.png');
    const exported = new Uint8Array(await res.arrayBuffer());
    const texts = readPngText(exported);
    expect([...texts.keys()]).toEqual(['chara', 'ccv3']);
    expect((JSON.parse(decodeBase64Utf8(texts.get('ccv3')!)) as { data: { name: string } }).data.name).toBe('Iris');
    // The picture is the avatar (the whole portrait), as a PNG.
    expect(await sharp(Buffer.from(exported)).metadata()).toMatchObject({ format: 'png', width: 400, height: 600 });

    const again = await author.fetch('/api/worlds/import?name=Iris.png', { method: 'POST', headers: { 'content-type': 'image/png' }, body: exported as Uint8Array<ArrayBuffer> });
    expect(again.status).toBe(201);
    const second = (await again.json()) as Imported & { world: unknown; report: { sourceVersion: string } };
    expect(second.world).toEqual(first.world);
    expect(second.report.sourceVersion).toBe('chara_card_v3 (png), world 20.0.0');
    expect(second.avatarUrl).not.toBeNull();

    const json = await author.fetch(`/api/worlds/${first.id}/card.json`);
    expect(json.status).toBe(200);
    expect(((await json.json()) as { spec: string }).spec).toBe('chara_card_v3');
    // Only the author exports.
    const stranger = new Browser(server.url);
    await signUp(server, stranger, { email: `stranger-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Stranger' });
    expect((await stranger.fetch(`/api/worlds/${first.id}/card.png`)).status).toBe(404);
    expect((await author.fetch(`/api/worlds/${first.id}/card.gif`)).status).toBe(404);
  });

  it('a portrait uploaded in the studio (issue 30 B): the same resizing makes the avatar, and the cover while the world has none; readers get it once published', async () => {
    const created = (await (await author.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: 'Portrait test' } } })).json()) as Imported & { revision: number };
    const upload = (id: string, body: Uint8Array | string, as: Browser = author) =>
      as.fetch(`/api/worlds/${id}/portrait`, { method: 'POST', headers: { 'content-type': 'image/png' }, body: body as Uint8Array<ArrayBuffer> });
    const assetCount = async (id: string) => ((await (await author.fetch(`/api/worlds/${id}/assets`)).json()) as { assets: unknown[] }).assets.length;

    // Bad input changes nothing: not an image (an SVG declared as PNG), an undecodable one, an empty body, another account.
    expect((await upload(created.id, '<svg xmlns="http://www.w3.org/2000/svg"/>')).status).toBe(415);
    const broken = new Uint8Array(gradientPng(60, 60, [0, 0, 0], [9, 9, 9]));
    broken.fill(0x55, Buffer.from(broken).indexOf('IDAT') + 6, Buffer.from(broken).indexOf('IDAT') + 40);
    const unreadable = await upload(created.id, broken);
    expect(unreadable.status).toBe(422);
    expect(((await unreadable.json()) as { error: { code: string } }).error.code).toBe('PICTURE_UNREADABLE');
    expect((await upload(created.id, new Uint8Array(0))).status).toBe(400);
    const stranger = new Browser(server.url);
    await signUp(server, stranger, { email: `portrait-stranger-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Stranger' });
    expect((await upload(created.id, new Uint8Array(gradientPng(60, 90, [1, 1, 1], [2, 2, 2])), stranger)).status).toBe(404);
    expect(await assetCount(created.id)).toBe(0);
    const unchanged = (await (await author.fetch(`/api/worlds/${created.id}`)).json()) as Imported & { revision: number };
    expect(unchanged).toMatchObject({ revision: created.revision, avatarUrl: null, coverUrl: null });

    // A portrait: the whole picture within 512 × 768 as the avatar, and the library cover from its top.
    const res = await upload(created.id, new Uint8Array(gradientPng(600, 900, [220, 120, 40], [30, 30, 90])));
    expect(res.status).toBe(201);
    const first = (await res.json()) as Imported & { revision: number };
    expect(first.revision).toBe(created.revision + 1);
    expect(await picture(first.avatarUrl!)).toMatchObject({ type: 'image/webp', meta: { width: 512, height: 768 } });
    expect(await picture(first.coverUrl!)).toMatchObject({ type: 'image/webp', meta: { width: 640, height: 360 } });
    // Another portrait replaces the avatar; the cover the world now has stays.
    const second = (await (await upload(created.id, new Uint8Array(gradientPng(300, 300, [0, 90, 0], [0, 0, 0])))).json()) as Imported;
    expect(second.avatarUrl).not.toBe(first.avatarUrl);
    expect(second.coverUrl).toBe(first.coverUrl);
    expect(await picture(second.avatarUrl!)).toMatchObject({ meta: { width: 300, height: 300 } });

    // Published, the preview (guests) and every reader see the live portrait.
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    expect((await author.fetch(`/api/worlds/${created.id}/publish`, { method: 'POST' })).status).toBe(200);
    const guest = new Browser(server.url);
    const preview = (await (await guest.fetch(`/api/worlds/${created.id}/preview`)).json()) as { avatarUrl: string; coverUrl: string };
    expect(preview).toMatchObject({ avatarUrl: second.avatarUrl, coverUrl: first.coverUrl });
    expect((await guest.fetch(preview.avatarUrl)).status).toBe(200);
    expect(((await (await stranger.fetch(`/api/worlds/${created.id}`)).json()) as Imported).avatarUrl).toBe(second.avatarUrl);

    // Removed: no avatar (the cover stays), and a published world's readers follow.
    const removed = (await (await author.fetch(`/api/worlds/${created.id}/portrait`, { method: 'DELETE' })).json()) as Imported;
    expect(removed).toMatchObject({ avatarUrl: null, coverUrl: first.coverUrl });
    expect(((await (await guest.fetch(`/api/worlds/${created.id}/preview`)).json()) as { avatarUrl: string | null }).avatarUrl).toBeNull();
  });
});
