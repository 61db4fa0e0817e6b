import { readFileSync } from 'node:fs';
import { encodeBase64Utf8, pngWithText } from '@yumina/world';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../../tests/fixtures/worlds/${name}`, import.meta.url), 'utf8');

describe('POST /api/worlds/import (real PostgreSQL)', () => {
  let server: TestServer;
  let author: Browser;

  beforeAll(async () => {
    server = await startTestServer({ IMPORT_RATE_LIMIT_PER_MINUTE: '30' });
    author = new Browser(server.url);
    await signUp(server, author, { email: `importer-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Importer' });
  });
  afterAll(() => server?.stop());

  const count = async () => (await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from worlds')).rows[0]!.n;

  it('imports a 25.0.0 world as a draft of the caller and returns it with the report', async () => {
    const res = await author.fetch('/api/worlds/import', { method: 'POST', json: { world: JSON.parse(fixture('world-25.0.0.json')) } });
    expect(res.status).toBe(201);
    const body = (await res.json()) as {
      id: string;
      status: string;
      revision: number;
      world: { version: string; id: string; audioTracks: { url: string }[] };
      report: { format: string; sourceVersion: string; changes: { kind: string; path: string }[]; assets: { id: string; paths: string[] }[] };
    };
    expect(body).toMatchObject({ status: 'saved', revision: 1 });
    expect(body.world.version).toBe('20.0.0');
    expect(body.world.id).toBe('6f1c2b7e-8a9d-4c3b-b1e2-7d6a5f4e3c21');
    expect(body.world.audioTracks[0]?.url).toBe('asset://splash-sound');
    expect(body.report.format).toBe('world');
    expect(body.report.sourceVersion).toBe('25.0.0');
    expect(body.report.changes.map((change) => `${change.kind} ${change.path}`)).toContain('dropped spatial');
    expect(body.report.assets.map((asset) => asset.id)).toEqual(['greenhouse-photo', 'splash-sound']);
    const row = await server.ctx.db.primary.query<{ owner_id: string; status: string; definition: string; name: string }>('select * from worlds where id = $1', [body.id]);
    expect(row.rows[0]).toMatchObject({ status: 'saved', name: 'Glass Garden' });
    expect(JSON.parse(row.rows[0]!.definition)).toEqual(body.world);
    const read = (await (await author.fetch(`/api/worlds/${body.id}`)).json()) as { world: unknown; canEdit: boolean };
    expect(read).toMatchObject({ world: body.world, canEdit: true });
  });

  it('imports a V3 PNG card sent as base64 bytes', async () => {
    const png = pngWithText({ ccv3: encodeBase64Utf8(fixture('card-v3.json')) });
    const res = await author.fetch('/api/worlds/import', { method: 'POST', json: { file: { name: 'lumen.png', base64: Buffer.from(png).toString('base64') } } });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { world: { name: string; entries: { id: string }[] }; report: { format: string; sourceVersion: string } };
    expect(body.report).toMatchObject({ format: 'sillytavern-card', sourceVersion: 'chara_card_v3 (png)' });
    expect(body.world.name).toBe('Professor Lumen');
    expect(body.world.entries.map((entry) => entry.id)).toEqual(['system-prompt', 'character', 'personality', 'greeting', 'lore-0']);
  });

  it('a World Info file sent as bytes takes its name from the file name', async () => {
    const res = await author.fetch('/api/worlds/import', { method: 'POST', json: { file: { name: 'Green Moon.json', base64: Buffer.from(fixture('world-info.json')).toString('base64') } } });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { world: { name: string } }).world.name).toBe('Green Moon');
  });

  it('the definition keeps its UUID when the author saves it without one', async () => {
    const res = await author.fetch('/api/worlds/import', { method: 'POST', json: { world: JSON.parse(fixture('card-v2.json')) } });
    const created = (await res.json()) as { id: string; world: Record<string, unknown> & { id: string } };
    expect(created.world.id).toMatch(/^[0-9a-f-]{36}$/);
    const { id: _dropped, ...withoutId } = created.world;
    const saved = await author.fetch(`/api/worlds/${created.id}`, { method: 'PUT', json: { world: { ...withoutId, description: 'Edited' }, revision: 1 } });
    expect(saved.status).toBe(200);
    expect(((await saved.json()) as { world: { id: string; description: string } }).world).toMatchObject({ id: created.world.id, description: 'Edited' });
  });

  it('a refused import (not a world at all) is 422 naming its path, and creates nothing; a broken world is repaired instead', async () => {
    const before = await count();
    const res = await author.fetch('/api/worlds/import', { method: 'POST', json: { world: { version: '4.2.0', name: 'Old' } } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string; message: string }; issues: { path: string; message: string }[]; report: unknown };
    expect(body.error.code).toBe('IMPORT_REFUSED');
    expect(body.issues).toEqual([{ path: 'version', message: '4.2.0 cannot be imported: versions 5.x through 25.x can' }]);
    expect(body.error.message).toContain('version');
    expect(await count()).toBe(before);

    const repaired = await author.fetch('/api/worlds/import', { method: 'POST', json: { world: JSON.parse(fixture('repairs-8.0.0.json')) } });
    expect(repaired.status).toBe(201);
    const created = (await repaired.json()) as { world: { name: string }; report: { changes: { kind: string; path: string }[] } };
    expect(created.world.name).toBe('Imported world');
    expect(created.report.changes).toContainEqual(expect.objectContaining({ kind: 'dropped', path: 'rules[0].actions[0]' }));
  });

  it('bad bodies are 400 in the error shape; no session is 401; nothing is created', async () => {
    const before = await count();
    for (const json of [{}, { world: {}, file: { base64: 'AA==' } }, { file: { base64: '***' } }, { nope: 1 }]) {
      const res = await author.fetch('/api/worlds/import', { method: 'POST', json });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toEqual(expect.any(String));
    }
    const stranger = new Browser(server.url);
    expect((await stranger.fetch('/api/worlds/import', { method: 'POST', json: { world: JSON.parse(fixture('card-v2.json')) } })).status).toBe(401);
    const tooBig = await author.fetch('/api/worlds/import', { method: 'POST', json: { world: { version: '20.0.0', name: 'big', description: 'x'.repeat(6 * 1024 * 1024) } } });
    expect(tooBig.status).toBe(413);
    expect(await count()).toBe(before);
  });

  it('takes a PNG card as the file itself (binary body, ?name=) or as a multipart form; a JSON body stays under 5 MiB, a file under 16 MiB', async () => {
    const author = new Browser(server.url);
    await signUp(server, author, { email: `bytes-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Bytes' });
    const png = pngWithText({ ccv3: encodeBase64Utf8(fixture('card-v3.json')) });
    const raw = await author.fetch('/api/worlds/import?name=lumen.png', { method: 'POST', headers: { 'content-type': 'image/png' }, body: png as Uint8Array<ArrayBuffer> });
    expect(raw.status).toBe(201);
    expect(((await raw.json()) as { report: { sourceVersion: string } }).report.sourceVersion).toBe('chara_card_v3 (png)');

    const form = new FormData();
    form.append('file', new Blob([fixture('world-info.json')], { type: 'application/json' }), 'Silver Coast.json');
    const multipart = await author.fetch('/api/worlds/import', { method: 'POST', body: form });
    expect(multipart.status).toBe(201);
    expect(((await multipart.json()) as { world: { name: string } }).world.name).toBe('Silver Coast');

    // A body of unknown length (chunked, no Content-Length) is read whole as it arrives (the buffer
    // grows), and one that goes past the limit is refused the same way.
    const inChunks = (bytes: Uint8Array, size: number) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.subarray(at, at + size));
          controller.close();
        },
      });
    const bigPng = pngWithText({ ccv3: encodeBase64Utf8(fixture('card-v3.json')), padding: 'p'.repeat(300_000) });
    const chunked = await author.fetch('/api/worlds/import?name=lumen.png', { method: 'POST', headers: { 'content-type': 'image/png' }, body: inChunks(bigPng, 50_000), duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(201);
    expect(((await chunked.json()) as { report: { sourceVersion: string } }).report.sourceVersion).toBe('chara_card_v3 (png)');

    const before = await count();
    const tooBigFile = await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(16 * 1024 * 1024 + 1) });
    expect(tooBigFile.status).toBe(413);
    const tooBigChunked = await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: inChunks(new Uint8Array(16 * 1024 * 1024 + 1), 1 << 20), duplex: 'half' } as RequestInit);
    expect(tooBigChunked.status).toBe(413);
    const empty = await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(0) });
    expect(empty.status).toBe(400);
    const notMultipart = await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: 'nonsense' });
    expect(notMultipart.status).toBe(400);
    expect(((await notMultipart.json()) as { error: { code: string } }).error.code).toBe('BAD_REQUEST');
    expect(await count()).toBe(before);
  });

  it('imports are rate limited per account (429 with Retry-After; nothing created)', async () => {
    const busy = new Browser(server.url);
    await signUp(server, busy, { email: `busy-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Busy' });
    const card = JSON.parse(fixture('card-v2.json')) as unknown;
    for (let index = 0; index < 30; index++) expect((await busy.fetch('/api/worlds/import', { method: 'POST', json: { world: card } })).status).toBe(201);
    const before = await count();
    const limited = await busy.fetch('/api/worlds/import', { method: 'POST', json: { world: card } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    expect(await count()).toBe(before);
    // Another account is not limited by it.
    const other = new Browser(server.url);
    await signUp(server, other, { email: `other-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Other' });
    expect((await other.fetch('/api/worlds/import', { method: 'POST', json: { world: card } })).status).toBe(201);
  });
});
