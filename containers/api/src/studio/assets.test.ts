import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { AssetLinkSigner } from './asset-link.ts';
import { ASSET_LIMITS } from './asset-routes.ts';
import { sniffAssetType } from './asset-type.ts';
import sharp from 'sharp';
import { gradientPng } from '../../../../tests/support/png.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

/** A real 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe('asset type by content', () => {
  it('recognises images, audio and fonts by their first bytes and nothing else', () => {
    expect(sniffAssetType(PNG)).toEqual({ kind: 'image', contentType: 'image/png' });
    expect(sniffAssetType(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]))?.contentType).toBe('image/jpeg');
    expect(sniffAssetType(Buffer.from('GIF89a...'))?.contentType).toBe('image/gif');
    expect(sniffAssetType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))?.contentType).toBe('image/webp');
    expect(sniffAssetType(Buffer.from('RIFF\0\0\0\0WAVEfmt '))).toEqual({ kind: 'audio', contentType: 'audio/wav' });
    expect(sniffAssetType(Buffer.from('OggS\0\u0002'))?.contentType).toBe('audio/ogg');
    expect(sniffAssetType(Buffer.from('ID3\u0004\0'))?.contentType).toBe('audio/mpeg');
    expect(sniffAssetType(Buffer.from([0xff, 0xfb, 0x90, 0x64]))?.contentType).toBe('audio/mpeg');
    expect(sniffAssetType(Buffer.from('wOF2\0\u0001'))).toEqual({ kind: 'font', contentType: 'font/woff2' });
    expect(sniffAssetType(Buffer.from([0, 1, 0, 0, 0, 0x10]))?.contentType).toBe('font/ttf');
    for (const text of ['<!DOCTYPE html><script>alert(1)</script>', '<svg xmlns="http://www.w3.org/2000/svg"/>', '%PDF-1.7', 'PK\u0003\u0004', '']) {
      expect(sniffAssetType(Buffer.from(text)), text).toBeNull();
    }
  });
});

describe('world assets', () => {
  let server: TestServer;
  let author: Browser;
  let other: Browser;
  let worldId: string;
  let otherWorldId: string;

  const objectKeys = () => server.ctx.objects.list('assets/');
  const rowCount = async () => (await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from world_assets')).rows[0]!.n;
  const upload = (who: Browser, world: string, bytes: Buffer, name: string, type = 'application/octet-stream') =>
    who.fetch(`/api/worlds/${world}/assets?name=${encodeURIComponent(name)}`, { method: 'POST', body: new Blob([new Uint8Array(bytes)]), headers: { 'content-type': type } });

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    other = new Browser(server.url);
    for (const [b, n] of [[author, 'a'], [other, 'o']] as const) {
      await signUp(server, b, { email: `${n}-${Date.now()}@example.com`, password: 'long enough pw' });
    }
    worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world: sample('willow-street') } })).json()) as { id: string }).id;
    otherWorldId = ((await (await other.fetch('/api/worlds', { method: 'POST', json: { world: sample('ashen-depths') } })).json()) as { id: string }).id;
  });
  afterAll(() => server?.stop());

  it('a PNG uploads and resolves through its reference with long-lived immutable caching', async () => {
    const res = await upload(author, worldId, PNG, 'map.bin', 'text/plain');
    expect(res.status).toBe(201);
    const { asset } = (await res.json()) as { asset: { id: string; ref: string; url: string; kind: string; contentType: string; size: number; name: string } };
    expect(asset).toMatchObject({ kind: 'image', contentType: 'image/png', size: PNG.length, name: 'map.bin' });
    expect(asset.ref).toBe(`asset://${asset.id}`);
    expect(asset.url).toBe(`/api/worlds/${worldId}/assets/${asset.id}`);
    expect(await objectKeys()).toContain(`assets/${worldId}/${asset.id}`);

    const read = await author.fetch(asset.url);
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe('image/png');
    expect(read.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect(read.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await read.arrayBuffer()).equals(PNG)).toBe(true);
    const again = await author.fetch(asset.url, { headers: { 'if-none-match': read.headers.get('etag')! } });
    expect(again.status).toBe(304);

    const list = (await (await author.fetch(`/api/worlds/${worldId}/assets`)).json()) as { assets: { id: string }[]; usedBytes: number };
    expect(list.assets.map((a) => a.id)).toEqual([asset.id]);
    expect(list.usedBytes).toBe(PNG.length);
  });

  it('?w= answers a resized WebP of an image (made once, kept, its own validator); other widths get the original', async () => {
    const big = gradientPng(1600, 900, [200, 40, 40], [20, 40, 200]);
    const { asset } = (await (await upload(author, worldId, big, 'cover.png')).json()) as { asset: { id: string; url: string } };
    const small = await author.fetch(`${asset.url}?w=360`);
    expect(small.status).toBe(200);
    expect(small.headers.get('content-type')).toBe('image/webp');
    expect(small.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    const bytes = Buffer.from(await small.arrayBuffer());
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'webp', width: 360, height: 203 });
    expect(bytes.length).toBeLessThan(big.length / 10);
    const tag = small.headers.get('etag')!;
    expect(tag).not.toBe((await author.fetch(asset.url)).headers.get('etag'));
    expect((await author.fetch(`${asset.url}?w=360`, { headers: { 'if-none-match': tag } })).status).toBe(304);
    expect(await server.ctx.objects.list(`variants/${worldId}/${asset.id}/`)).toEqual([`variants/${worldId}/${asset.id}/w360.webp`]);
    // Concurrent first reads of another width make it once and all get it.
    const both = await Promise.all([1, 2, 3].map(() => author.fetch(`${asset.url}?w=720`).then(async (r) => Buffer.from(await r.arrayBuffer()))));
    expect(both[1]!.equals(both[0]!) && both[2]!.equals(both[0]!)).toBe(true);
    expect((await sharp(both[0]!).metadata()).width).toBe(720);
    // A width the app never asks for: the original (no store filled with sizes).
    const odd = await author.fetch(`${asset.url}?w=123`);
    expect(odd.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await odd.arrayBuffer()).equals(big)).toBe(true);
    // Never enlarged: the 1×1 PNG stays 1×1 (as WebP).
    const { asset: tiny } = (await (await upload(author, worldId, PNG, 'dot.png')).json()) as { asset: { url: string } };
    expect((await sharp(Buffer.from(await (await author.fetch(`${tiny.url}?w=360`)).arrayBuffer())).metadata()).width).toBe(1);
    // Someone else still cannot read the private world's image, resized or not.
    expect((await other.fetch(`${asset.url}?w=360`)).status).toBe(404);
    // Deleting the asset deletes its resized copies.
    expect((await author.fetch(asset.url, { method: 'DELETE' })).status).toBe(200);
    expect(await server.ctx.objects.list(`variants/${worldId}/${asset.id}/`)).toEqual([]);
  });

  it('a file named .png that is really HTML is refused, and nothing is stored', async () => {
    const rows = await rowCount();
    const keys = await objectKeys();
    const res = await upload(author, worldId, Buffer.from('<!DOCTYPE html><html><script>alert(document.cookie)</script></html>'), 'cute-cat.png', 'image/png');
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNSUPPORTED_ASSET_TYPE');
    expect(await rowCount()).toBe(rows);
    expect(await objectKeys()).toEqual(keys);
  });

  it('an oversize file gets 413 and nothing is stored; so does one past the per-world limit', async () => {
    const rows = await rowCount();
    const keys = await objectKeys();
    const big = Buffer.alloc(ASSET_LIMITS.fileBytes + 1);
    PNG.copy(big);
    const res = await upload(author, worldId, big, 'huge.png');
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await rowCount()).toBe(rows);
    expect(await objectKeys()).toEqual(keys);

    // The world already holds nearly its limit (recorded sizes): one more small file does not fit.
    await server.ctx.db.primary.query(
      `insert into world_assets (id, world_id, owner_id, kind, content_type, size, name, sha256)
       select 'ast_filler_filler_filler', $1, owner_id, 'audio', 'audio/ogg', $2, 'filler', 'x' from worlds where id = $1`,
      [worldId, ASSET_LIMITS.worldBytes - 10],
    );
    const full = await upload(author, worldId, PNG, 'one-more.png');
    expect(full.status).toBe(413);
    expect(((await full.json()) as { error: { code: string } }).error.code).toBe('WORLD_ASSETS_FULL');
    expect(await rowCount()).toBe(rows + 1);
    expect(await objectKeys()).toEqual(keys);
    await server.ctx.db.primary.query(`delete from world_assets where id = 'ast_filler_filler_filler'`);
  });

  it("another world's private asset cannot be read through the reference form, nor uploaded to by another account", async () => {
    const mine = ((await (await upload(other, otherWorldId, PNG, 'secret.png')).json()) as { asset: { id: string; url: string } }).asset;
    // Through the author's own world path (what asset://<id> resolves to in the author's world): not found.
    expect((await author.fetch(`/api/worlds/${worldId}/assets/${mine.id}`)).status).toBe(404);
    // Directly through the private world's path: not found for anyone but its author.
    expect((await author.fetch(mine.url)).status).toBe(404);
    expect((await new Browser(server.url).fetch(mine.url)).status).toBe(404);
    expect((await other.fetch(mine.url)).status).toBe(200);
    expect((await upload(author, otherWorldId, PNG, 'x.png')).status).toBe(404);
    expect((await new Browser(server.url).fetch(`/api/worlds/${worldId}/assets`, { method: 'POST', body: new Blob([new Uint8Array(PNG)]) })).status).toBe(401);

    // Published, its assets are public and cacheable by shared caches.
    // (as publishing does: the live version is the snapshot, and it names this asset)
    await server.ctx.db.primary.query(
      `update worlds set status = 'published', live_revision = revision, live_definition = $2 where id = $1`,
      [otherWorldId, JSON.stringify({ cover: `asset://${mine.id}` })],
    );
    const pub = await new Browser(server.url).fetch(mine.url);
    expect(pub.status).toBe(200);
    expect(pub.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // Still not through another world's reference.
    expect((await author.fetch(`/api/worlds/${worldId}/assets/${mine.id}`)).status).toBe(404);
  });

  it("a signed link of a private world reads that world's assets only, until it expires", async () => {
    const guest = new Browser(server.url);
    const create = async (who: Browser, name: string) =>
      ((await (await who.fetch('/api/worlds', { method: 'POST', json: { world: sample(name) } })).json()) as { id: string }).id;
    const uploadAsset = async (who: Browser, world: string) => ((await (await upload(who, world, PNG, 'p.png')).json()) as { asset: { id: string; url: string } }).asset;
    // A: the author's private world; B: another private world of the same author; C: another account's private world.
    const worldA = await create(author, 'willow-street');
    const worldB = await create(author, 'ashen-depths');
    const worldC = await create(other, 'changan-nights');
    const [a, b, c] = [await uploadAsset(author, worldA), await uploadAsset(author, worldB), await uploadAsset(other, worldC)];

    // The author (session) gets a token for A; nobody else does; a published world needs none.
    const grant = await author.fetch(`/api/worlds/${worldA}/asset-access`, { method: 'POST' });
    expect(grant.status).toBe(200);
    expect(grant.headers.get('cache-control')).toBe('no-store');
    const access = (await grant.json()) as { worldId: string; token: string; expiresAt: string; expiresInSeconds: number };
    expect(access.worldId).toBe(worldA);
    expect(access.expiresInSeconds).toBeGreaterThanOrEqual(590);
    expect(access.expiresInSeconds).toBeLessThanOrEqual(900);
    const tokenA = access.token;
    expect((await guest.fetch(`/api/worlds/${worldA}/asset-access`, { method: 'POST' })).status).toBe(404);
    expect((await other.fetch(`/api/worlds/${worldA}/asset-access`, { method: 'POST' })).status).toBe(404);
    expect((await guest.fetch(`/api/worlds/00000000-0000-4000-8000-000000000000/asset-access`, { method: 'POST' })).status).toBe(404);
    expect(await (await guest.fetch(`/api/worlds/${otherWorldId}/asset-access`, { method: 'POST' })).json()).toMatchObject({ token: null });

    // No session, a valid signature of A: A's private asset, embeddable by the sandbox frame, cached privately.
    const signed = await guest.fetch(`${a.url}?sig=${tokenA}`);
    expect(signed.status).toBe(200);
    expect(Buffer.from(await signed.arrayBuffer()).equals(PNG)).toBe(true);
    expect(signed.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(signed.headers.get('access-control-allow-origin')).toBe('*');
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(signed.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(900);
    expect(signed.headers.get('x-content-type-options')).toBe('nosniff');

    // No signature and no session: refused.
    expect((await guest.fetch(a.url)).status).toBe(404);
    // The same signature never opens another world's asset: not B's (same author), not C's (another account),
    // neither through that world's own path nor through A's path (the reference form resolves there).
    for (const path of [`${b.url}?sig=${tokenA}`, `${c.url}?sig=${tokenA}`, `/api/worlds/${worldA}/assets/${b.id}?sig=${tokenA}`, `/api/worlds/${worldA}/assets/${c.id}?sig=${tokenA}`]) {
      const res = await guest.fetch(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).not.toBe('image/png');
    }
    expect((await other.fetch(`${b.url}?sig=${tokenA}`)).status).toBe(404);

    // Tampered signatures: refused.
    const [exp, mac] = tokenA.split('.') as [string, string];
    const flipped = `${exp}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    for (const token of [flipped, `${Number(exp) + 300}.${mac}`, `${exp}.${mac.slice(0, -1)}`, 'garbage', `${tokenA}&sig=${tokenA}`]) {
      expect((await guest.fetch(`${a.url}?sig=${token}`)).status, token).toBe(404);
    }
    // A signature of the wrong key: refused.
    const foreign = new AssetLinkSigner(Buffer.alloc(32, 1)).sign(worldA).token;
    expect((await guest.fetch(`${a.url}?sig=${foreign}`)).status).toBe(404);

    // Expired (a genuine signature of A from 20 minutes ago): refused with its own code.
    const expired = new AssetLinkSigner(server.ctx.secrets.deriveKey('asset-links')).sign(worldA, Date.now() - 20 * 60_000).token;
    const late = await guest.fetch(`${a.url}?sig=${expired}`);
    expect(late.status).toBe(403);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('ASSET_LINK_EXPIRED');
    // The author's session still reads it (same-origin only, as before).
    const bySession = await author.fetch(`${a.url}?sig=${expired}`);
    expect(bySession.status).toBe(200);
    expect(bySession.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(bySession.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
  });
});
