import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EMPTY_COMPANION_SAVE, encodeCompanionSave } from '@yumina/companion';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../../../tests/support/browser.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { publishDemoGame } from './demo.ts';
import { parseRange } from './delivery.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

/** A raw GET whose path is sent exactly as written (fetch would normalise dot segments). */
function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const u = new URL(base);
  return new Promise((resolveRes, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolveRes({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('byte ranges', () => {
  it('parses single ranges and refuses unsatisfiable ones', () => {
    expect(parseRange(undefined, 10)).toBeUndefined();
    expect(parseRange('bytes=0-3', 10)).toEqual({ start: 0, end: 3 });
    expect(parseRange('bytes=4-', 10)).toEqual({ start: 4, end: 9 });
    expect(parseRange('bytes=-3', 10)).toEqual({ start: 7, end: 9 });
    expect(parseRange('bytes=5-100', 10)).toEqual({ start: 5, end: 9 });
    expect(parseRange('bytes=10-12', 10)).toBeNull();
    expect(parseRange('bytes=5-2', 10)).toBeNull();
    expect(parseRange('items=0-1', 10)).toBeNull();
  });
});

describe('game delivery and saves', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({}, { web: false });
    await publishDemoGame(server.ctx.objects, server.ctx.log);
  });
  afterAll(() => server?.stop());

  it('content types and cache headers: HTML revalidated, hashed JS and WASM immutable', async () => {
    const html = await fetch(`${server.url}/games/demo/`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('cache-control')).toBe('no-cache');
    const wasm = await fetch(`${server.url}/games/demo/add.8d41b6c3.wasm`);
    expect(wasm.headers.get('content-type')).toBe('application/wasm');
    expect(wasm.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(new Uint8Array(await wasm.arrayBuffer()).slice(0, 4)).toEqual(new Uint8Array([0, 0x61, 0x73, 0x6d]));
    const js = await fetch(`${server.url}/games/demo/main.5f1c2a9e.js`);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.headers.get('cache-control')).toContain('immutable');
  });

  it('304 on a matching ETag, 206 on a Range, 416 beyond the end', async () => {
    const first = await fetch(`${server.url}/games/demo/add.8d41b6c3.wasm`);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(`${server.url}/games/demo/add.8d41b6c3.wasm`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    const part = await fetch(`${server.url}/games/demo/add.8d41b6c3.wasm`, { headers: { range: 'bytes=0-3' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 0-3/41');
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(new Uint8Array([0, 0x61, 0x73, 0x6d]));
    const beyond = await fetch(`${server.url}/games/demo/add.8d41b6c3.wasm`, { headers: { range: 'bytes=100-200' } });
    expect(beyond.status).toBe(416);
  });

  it('404 for ../ and encoded traversal attempts', async () => {
    for (const path of [
      '/games/demo/../../package.json',
      '/games/demo/%2e%2e/%2e%2e/package.json',
      '/games/demo/..%2f..%2fpackage.json',
      '/games/demo/%2E%2E%5Cpackage.json',
      '/games/demo/..\\..\\package.json',
      '/games/demo/./index.html',
      '/games/demo//etc/passwd',
      '/games/demo/index.html%00.png',
      '/games/..%2fsecrets.key/x',
    ]) {
      const res = await rawGet(server.url, path);
      expect(res.status, path).toBe(404);
      expect(res.body.toString()).not.toMatch(/yumina-platform|BEGIN/);
    }
  });

  it('guests are refused in adventure saves and allowed in versus; a stale revision is refused without loss; unknown chunks stay byte for byte', async () => {
    const guest = new Browser(server.url);
    const save = { format: 'yumina-save', version: 3, chunks: [{ id: 1, data: b64('board') }, { id: 99, data: b64('\u0000future\u00ff'), note: 'x' }] };
    expect((await guest.fetch('/api/games/demo/saves/adventure', { method: 'PUT', json: { revision: 0, save } })).status).toBe(401);
    expect((await guest.fetch('/api/games/demo/saves/adventure')).status).toBe(401);
    const put = await guest.fetch('/api/games/demo/saves/versus', { method: 'PUT', json: { revision: 0, save } });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ revision: 1, slot: 'main' });
    const read = (await (await guest.fetch('/api/games/demo/saves/versus')).json()) as { revision: number; save: typeof save };
    expect(read.save).toEqual(save);
    expect(read.save.chunks[1]).toEqual({ id: 99, data: b64('\u0000future\u00ff'), note: 'x' });
    // An old save without chunks 21–23 loads with the companion defaults (empty / zero), no migration.
    expect((read as unknown as { companion: unknown }).companion).toEqual(EMPTY_COMPANION_SAVE);

    // Another tab still holding revision 0 (or 1 after a newer write) cannot overwrite.
    const newer = { ...save, chunks: [{ id: 1, data: b64('newer') }] };
    expect((await guest.fetch('/api/games/demo/saves/versus', { method: 'PUT', json: { revision: 1, save: newer } })).status).toBe(200);
    const stale = await guest.fetch('/api/games/demo/saves/versus', { method: 'PUT', json: { revision: 1, save } });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ error: { code: 'STALE_REVISION' }, currentRevision: 2 });
    expect(((await (await guest.fetch('/api/games/demo/saves/versus')).json()) as { save: unknown }).save).toEqual(newer);

    // A signed-in player saves adventure; a defeated board goes to its own slot.
    const player = new Browser(server.url);
    await signUp(server, player, { email: `game-${Date.now()}@example.com`, password: 'long enough pw' });
    expect((await player.fetch('/api/games/demo/saves/adventure', { method: 'PUT', json: { revision: 0, save } })).status).toBe(200);
    const defeated = { ...save, chunks: [{ id: 1, data: b64('lost board') }] };
    const d = await player.fetch('/api/games/demo/saves/adventure', { method: 'PUT', json: { revision: 0, save: defeated, defeated: true } });
    expect(await d.json()).toEqual({ revision: 1, slot: 'defeated' });
    expect(((await (await player.fetch('/api/games/demo/saves/adventure')).json()) as { save: unknown }).save).toEqual(save);
  });

  it('a save with chunks 21–23 round-trips through the companion codecs; a damaged chunk 23 is refused', async () => {
    const g = new Browser(server.url);
    const state = { ...EMPTY_COMPANION_SAVE, companion: { ...EMPTY_COMPANION_SAVE.companion, proactive: { count: 2, lastAtSimMs: 90_000 } } };
    const encoded = encodeCompanionSave(state);
    const chunks = [21, 22, 23].map((id) => ({ id, data: Buffer.from(encoded[id as 21 | 22 | 23]).toString('base64') }));
    const ok = await g.fetch('/api/games/demo/saves/versus', { method: 'PUT', json: { revision: 0, save: { format: 'yumina-save', version: 4, chunks } } });
    expect(ok.status).toBe(200);
    const read = (await (await g.fetch('/api/games/demo/saves/versus')).json()) as { companion: unknown };
    expect(read.companion).toEqual(state);
    const damaged = await g.fetch('/api/games/demo/saves/versus', {
      method: 'PUT',
      json: { revision: 1, save: { format: 'yumina-save', version: 4, chunks: [{ id: 23, data: Buffer.from([250, 1]).toString('base64') }] } },
    });
    expect(damaged.status).toBe(400);
  });

  it('bad saves are 400 and change nothing; oversize is 413', async () => {
    const g = new Browser(server.url);
    for (const save of [{ format: 'other', version: 1, chunks: [] }, { format: 'yumina-save', version: 1, chunks: [{ id: 1, data: 'not base64!' }] }, { format: 'yumina-save', version: 1, chunks: [{ id: 1, data: '' }, { id: 1, data: '' }] }]) {
      expect((await g.fetch('/api/games/demo/saves/versus', { method: 'PUT', json: { revision: 0, save } })).status).toBe(400);
    }
    expect((await g.fetch('/api/games/demo/saves/versus')).status).toBe(404);
    const huge = await g.fetch('/api/games/demo/saves/versus', {
      method: 'PUT',
      json: { revision: 0, save: { format: 'yumina-save', version: 1, chunks: [{ id: 1, data: 'A'.repeat(1_100_000) }] } },
    });
    expect(huge.status).toBe(413);
  });

  it('a browser loads the demo game through the delivery route and its WASM runs', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/games/demo/`);
      await page.waitForSelector('body[data-engine]');
      expect(await page.getAttribute('body', 'data-engine')).toBe('ready');
      expect(await page.textContent('#result')).toBe('5');
    } finally {
      await browser.close();
    }
  });
});

describe('npm run game:publish', () => {
  it('uploads into a local folder store with the HTML entry point last', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'yumina-publish-'));
    const root = resolve(import.meta.dirname, '../../../..');
    try {
      const run = spawnSync('npm', ['run', '--silent', 'game:publish', '--', 'containers/api/demo-game', '--game', 'order-test'], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir, GAMES_BUCKET: '' },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(0);
      const order = run.stdout
        .split('\n')
        .filter((l) => l.startsWith('uploaded '))
        .map((l) => l.slice('uploaded games/order-test/'.length));
      expect(order).toHaveLength(3);
      expect(order.at(-1)).toBe('index.html');
      expect(order.slice(0, 2).sort()).toEqual(['add.8d41b6c3.wasm', 'main.5f1c2a9e.js']);
      const refused = spawnSync('npm', ['run', '--silent', 'game:publish', '--', 'containers/api/demo-game', '--api', 'http://127.0.0.1:9'], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir },
        encoding: 'utf8',
      });
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/deploy it before the game/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
