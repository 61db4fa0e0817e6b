import { describe, expect, it } from 'vitest';
import { type AssetScope, assetIdOf, isAssetId, resolveAssetUrl } from './asset-url.ts';

const world = '3f0c9a52-7d1e-4b8a-9c3e-5a6b7c8d9e01';
const id = 'ast_AbCdEfGhIjKlMnOpQrSt_-';
const token = `1760000000.${'a'.repeat(40)}B_-`;
const publicScope: AssetScope = { origin: 'http://127.0.0.1:4000', worldId: world, token: null };
const privateScope: AssetScope = { ...publicScope, token };

describe('resolveAssetUrl', () => {
  it('resolves an exact asset id within the current world only', () => {
    expect(resolveAssetUrl(`asset://${id}`, publicScope)).toBe(`http://127.0.0.1:4000/api/worlds/${world}/assets/${id}`);
    expect(resolveAssetUrl(`  asset://${id}\n`, publicScope)).toBe(`http://127.0.0.1:4000/api/worlds/${world}/assets/${id}`);
    // The same reference in another world resolves under that world, never this one.
    expect(resolveAssetUrl(`asset://${id}`, { ...publicScope, worldId: 'w2' })).toBe(`http://127.0.0.1:4000/api/worlds/w2/assets/${id}`);
    // Only the origin of the scope's URL is used.
    expect(resolveAssetUrl(`asset://${id}`, { ...publicScope, origin: 'https://assets.example/some/path?x=1' })).toBe(`https://assets.example/api/worlds/${world}/assets/${id}`);
  });

  it('adds the signed token of a private world', () => {
    expect(resolveAssetUrl(`asset://${id}`, privateScope)).toBe(`http://127.0.0.1:4000/api/worlds/${world}/assets/${id}?sig=${token}`);
    // A token that is not of the issued form is never pasted into the URL.
    expect(resolveAssetUrl(`asset://${id}`, { ...publicScope, token: 'x&y=../z' })).toBe(`http://127.0.0.1:4000/api/worlds/${world}/assets/${id}`);
  });

  it('gives an empty string for anything but the exact id syntax the server issues', () => {
    for (const ref of [
      'asset://../x',
      `asset://../${id}`,
      `asset://${id}/../../other`,
      'asset://a/b',
      `asset://${id}/x`,
      `asset://${id}%2F..`,
      `asset://%2E%2E%2F${id}`,
      `asset://ast_..%2f..%2fauth%2fsession`,
      `asset://${id}?x=1`,
      `asset://${id}#x`,
      `asset://${id}x`,
      `asset://${id.slice(0, -1)}`,
      'asset://ast_short',
      'asset://audio/theme.ogg',
      'asset://',
      'asset:ast_AbCdEfGhIjKlMnOpQrSt_-',
      `ASSET://${id.replace('ast_', 'AST_')}`,
      `asset:///${id}`,
      `asset://\\${id}`,
      `asset://${id} ${id}`,
    ]) {
      expect(resolveAssetUrl(ref, privateScope), ref).toBe('');
      expect(assetIdOf(ref), ref).toBeNull();
    }
    for (const ref of [undefined, null, 42, {}, ['asset://x']]) expect(resolveAssetUrl(ref, privateScope)).toBe('');
    // No current world or an opaque origin: nothing to resolve against.
    expect(resolveAssetUrl(`asset://${id}`, { ...publicScope, worldId: '' })).toBe('');
    expect(resolveAssetUrl(`asset://${id}`, { ...publicScope, origin: 'null' })).toBe('');
  });

  it('passes direct URLs through and drops other schemes', () => {
    for (const url of ['https://cdn.example/a.png', 'http://x.example/b.ogg', '/api/version', 'data:image/png;base64,AAAA', 'blob:http://x/1']) {
      expect(resolveAssetUrl(url, privateScope)).toBe(url);
    }
    for (const url of ['javascript:alert(1)', '//evil.example/x.png', '/\\evil.example', 'images/x.png', 'file:///etc/passwd', '']) {
      expect(resolveAssetUrl(url, privateScope), url).toBe('');
    }
  });

  it('checks ids by the issued syntax', () => {
    expect(isAssetId(id)).toBe(true);
    expect(isAssetId('ast_filler_filler_filler')).toBe(false);
    expect(isAssetId(`${id}/`)).toBe(false);
    expect(assetIdOf(`asset://${id}`)).toBe(id);
  });
});
