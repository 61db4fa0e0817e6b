import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradientPng } from '../../../../tests/support/png.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { SecretBox } from './secret-box.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const key = randomBytes(32).toString('base64');
const secretApiKey = `sk-test-${randomBytes(12).toString('hex')}`;

describe('private AI connection, encrypted at rest', () => {
  let server: TestServer;
  let provider: Server;
  let providerUrl: string;
  const seenAuth: string[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    provider = createServer((req, res) => {
      seenAuth.push(String(req.headers.authorization));
      if (req.url === '/v1/models' && req.headers.authorization === `Bearer ${secretApiKey}`) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'model-a', object: 'model' }, { id: 'model-b', object: 'model' }] }));
      } else {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: { message: 'bad key' } }));
      }
    });
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    providerUrl = `http://127.0.0.1:${(provider.address() as { port: number }).port}/v1`;
    // Capture every log line the server writes, to prove the key never appears in one.
    server = await startTestServer({ SECRETS_KEY: key, LOG_LEVEL: 'debug' }, { logDestination: { write: (line: string) => logLines.push(line) } });
  });
  afterAll(async () => {
    await server?.stop();
    provider?.close();
  });

  it('stores ciphertext, decrypts only with the right server key, masks it in every answer, and the test call works', async () => {
    const a = new Browser(server.url);
    await signUp(server, a, { email: `ai-${Date.now()}@example.com`, password: 'long enough pw' });
    const saved = await a.fetch('/api/settings/ai', {
      method: 'PUT',
      json: { baseUrl: providerUrl, defaultModel: 'model-a', apiKey: secretApiKey, privateEnabled: true },
    });
    expect(saved.status).toBe(200);
    const savedText = await saved.text();
    expect(savedText).not.toContain(secretApiKey);
    expect(JSON.parse(savedText)).toMatchObject({ apiKey: `••••${secretApiKey.slice(-4)}`, keyStatus: 'ok', defaultModel: 'model-a' });

    const read = await (await a.fetch('/api/settings/ai')).text();
    expect(read).not.toContain(secretApiKey);

    const { rows } = await server.ctx.db.primary.query<{ key_ciphertext: Buffer; key_iv: Buffer; key_tag: Buffer; key_id: string }>(
      'select key_ciphertext, key_iv, key_tag, key_id from ai_connections',
    );
    const row = rows[0]!;
    expect(row.key_ciphertext.toString('utf8')).not.toContain(secretApiKey);
    expect(row.key_ciphertext.includes(Buffer.from(secretApiKey))).toBe(false);
    const right = new SecretBox(Buffer.from(key, 'base64'));
    expect(right.open({ ciphertext: row.key_ciphertext, iv: row.key_iv, tag: row.key_tag, keyId: row.key_id })).toBe(secretApiKey);
    const wrong = new SecretBox(randomBytes(32));
    expect(() => wrong.open({ ciphertext: row.key_ciphertext, iv: row.key_iv, tag: row.key_tag, keyId: row.key_id })).toThrow(
      /different server key/,
    );
    // Even a forged key id does not make the wrong key "decrypt" garbage: GCM refuses.
    expect(() => wrong.open({ ciphertext: row.key_ciphertext, iv: row.key_iv, tag: row.key_tag, keyId: wrong.keyId })).toThrow(
      /different server key/,
    );

    const test = await a.fetch('/api/settings/ai/test', { method: 'POST' });
    expect(await test.json()).toMatchObject({ ok: true, models: 2 });
    expect(seenAuth.at(-1)).toBe(`Bearer ${secretApiKey}`);

    // Saving again without apiKey keeps the stored key.
    await a.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: providerUrl, defaultModel: 'model-b' } });
    expect(await (await a.fetch('/api/settings/ai/test', { method: 'POST' })).json()).toMatchObject({ ok: true });

    expect(logLines.length).toBeGreaterThan(3);
    expect(logLines.join('')).not.toContain(secretApiKey);
    expect(await (await a.fetch('/api/settings/ai', { method: 'DELETE' })).json()).toEqual({ configured: false });
  });

  it('a changed server key is detected and reported, not silently garbled', async () => {
    const a = new Browser(server.url);
    await signUp(server, a, { email: `ai2-${Date.now()}@example.com`, password: 'long enough pw' });
    await a.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: providerUrl, defaultModel: 'm', apiKey: secretApiKey } });
    const other = await startTestServer({ SECRETS_KEY: randomBytes(32).toString('base64url') });
    try {
      // Same rows, different server key: copy the account's connection into the other database.
      const { rows } = await server.ctx.db.primary.query('select * from ai_connections');
      const b = new Browser(other.url);
      await signUp(other, b, { email: `ai3-${Date.now()}@example.com`, password: 'long enough pw' });
      const me = (await (await b.fetch('/api/auth/session')).json()) as { account: { id: string } };
      const r = rows.at(-1)!;
      await other.ctx.db.primary.query(
        'insert into ai_connections (account_id, base_url, default_model, key_ciphertext, key_iv, key_tag, key_id, key_last4) values ($1,$2,$3,$4,$5,$6,$7,$8)',
        [me.account.id, r.base_url, r.default_model, r.key_ciphertext, r.key_iv, r.key_tag, r.key_id, r.key_last4],
      );
      expect(await (await b.fetch('/api/settings/ai')).json()).toMatchObject({ keyStatus: 'undecryptable' });
      const test = (await (await b.fetch('/api/settings/ai/test', { method: 'POST' })).json()) as { ok: boolean; message: string };
      expect(test.ok).toBe(false);
      expect(test.message).toMatch(/different server key/);
    } finally {
      await other.stop();
    }
  });

  it('an unsaved connection is probed (models listed, tested) before anything is stored; Save without a model takes the first listed', async () => {
    const a = new Browser(server.url);
    await signUp(server, a, { email: `ai-probe-${Date.now()}@example.com`, password: 'long enough pw' });
    const probe = await a.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: providerUrl, apiKey: secretApiKey } });
    const text = await probe.text();
    expect(text).not.toContain(secretApiKey);
    expect(JSON.parse(text)).toMatchObject({ ok: true, keySource: 'typed', models: [{ id: 'model-a' }, { id: 'model-b' }] });
    expect(seenAuth.at(-1)).toBe(`Bearer ${secretApiKey}`);
    // Nothing was saved.
    expect(await (await a.fetch('/api/settings/ai')).json()).toEqual({ configured: false });
    // A wrong key: the provider's answer, not a stored key.
    expect(await (await a.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: providerUrl, apiKey: 'sk-wrong' } })).json()).toMatchObject({
      ok: false,
      status: 401,
    });
    // Without a model, Save takes the first model the provider lists.
    const saved = await a.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: providerUrl, apiKey: secretApiKey } });
    expect(await saved.json()).toMatchObject({ configured: true, defaultModel: 'model-a' });
    // Without a typed key, the stored key is used for its own base URL only.
    expect(await (await a.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: providerUrl } })).json()).toMatchObject({ ok: true, keySource: 'stored' });
    const before = seenAuth.length;
    const elsewhere = providerUrl.replace('127.0.0.1', 'localhost');
    expect(await (await a.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: elsewhere } })).json()).toMatchObject({ ok: false, keySource: 'none' });
    expect(seenAuth.slice(before).some((h) => h.includes(secretApiKey))).toBe(false);
    // Bad input is a 400; signed out is a 401.
    expect((await a.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: 'ftp://x' } })).status).toBe(400);
    expect((await a.fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: providerUrl, extra: 1 } })).status).toBe(400);
    expect((await new Browser(server.url).fetch('/api/settings/ai/probe', { method: 'POST', json: { baseUrl: providerUrl } })).status).toBe(401);
    expect(logLines.join('\n')).not.toContain(secretApiKey);
  });

  it('bad input is a 400 and changes nothing; signed-out is 401', async () => {
    const a = new Browser(server.url);
    expect((await a.fetch('/api/settings/ai')).status).toBe(401);
    await signUp(server, a, { email: `ai4-${Date.now()}@example.com`, password: 'long enough pw' });
    for (const json of [
      { baseUrl: 'ftp://x', defaultModel: 'm', apiKey: 'k' },
      { baseUrl: 'https://user:pw@host/v1', defaultModel: 'm', apiKey: 'k' },
      { baseUrl: 'https://api.example.com/v1', defaultModel: 'm'.repeat(201), apiKey: 'k' },
      { baseUrl: 'https://api.example.com/v1', defaultModel: 'm' },
    ]) {
      expect((await a.fetch('/api/settings/ai', { method: 'PUT', json })).status).toBe(400);
    }
    expect(await (await a.fetch('/api/settings/ai')).json()).toEqual({ configured: false });
  });

  it('personas: create, edit, choose active (one at a time), delete', async () => {
    const a = new Browser(server.url);
    await signUp(server, a, { email: `p-${Date.now()}@example.com`, password: 'long enough pw' });
    const first = (await (await a.fetch('/api/personas', { method: 'POST', json: { name: 'Aria', description: 'A bard' } })).json()) as {
      id: string;
      active: boolean;
    };
    expect(first.active).toBe(true); // the first persona is active
    const second = (await (await a.fetch('/api/personas', { method: 'POST', json: { name: 'Bram' } })).json()) as { id: string; active: boolean };
    expect(second.active).toBe(false);
    await a.fetch(`/api/personas/${second.id}/activate`, { method: 'POST' });
    const list = (await (await a.fetch('/api/personas')).json()) as { personas: { id: string; active: boolean }[] };
    expect(list.personas.filter((p) => p.active).map((p) => p.id)).toEqual([second.id]);
    const edited = await a.fetch(`/api/personas/${first.id}`, { method: 'PATCH', json: { name: 'Aria the Bold', avatar: 'https://img.example/a.png' } });
    expect(await edited.json()).toMatchObject({ name: 'Aria the Bold', description: 'A bard', avatar: 'https://img.example/a.png' });
    expect((await a.fetch(`/api/personas/${first.id}`, { method: 'PATCH', json: { avatar: 'javascript:alert(1)' } })).status).toBe(400);
    // Another account cannot touch them.
    const b = new Browser(server.url);
    await signUp(server, b, { email: `p2-${Date.now()}@example.com`, password: 'long enough pw' });
    expect((await b.fetch(`/api/personas/${first.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await a.fetch(`/api/personas/${first.id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('a persona avatar is uploaded, resized like a profile picture, replaced and removed with its file (issue 30 B)', async () => {
    const a = new Browser(server.url);
    await signUp(server, a, { email: `pa-${Date.now()}@example.com`, password: 'long enough pw' });
    const persona = (await (await a.fetch('/api/personas', { method: 'POST', json: { name: 'Vale' } })).json()) as { id: string };
    const upload = (id: string, body: Uint8Array | string, as = a) => as.fetch(`/api/personas/${id}/avatar`, { method: 'POST', headers: { 'content-type': 'image/png' }, body: body as Uint8Array<ArrayBuffer> });
    const stored = () => server.ctx.objects.list(`pictures/`).then((keys) => keys.length);

    // Not an image, another account's persona, no body: refused, nothing stored.
    const before = await stored();
    expect((await upload(persona.id, '<svg xmlns="http://www.w3.org/2000/svg"/>')).status).toBe(415);
    const b = new Browser(server.url);
    await signUp(server, b, { email: `pb-${Date.now()}@example.com`, password: 'long enough pw' });
    expect((await upload(persona.id, new Uint8Array(gradientPng(40, 40, [1, 1, 1], [2, 2, 2])), b)).status).toBe(404);
    expect((await upload(persona.id, new Uint8Array(0))).status).toBe(400);
    expect(await stored()).toBe(before);

    const res = await upload(persona.id, new Uint8Array(gradientPng(800, 600, [200, 40, 90], [20, 20, 120])));
    expect(res.status).toBe(201);
    const first = (await res.json()) as { avatar: string };
    expect(first.avatar).toMatch(/^\/api\/account-pictures\/acc_[\w-]+\/[a-f0-9]{32}\.webp$/);
    const served = await a.fetch(first.avatar);
    expect(served.headers.get('content-type')).toBe('image/webp');
    expect(await sharp(Buffer.from(await served.arrayBuffer())).metadata()).toMatchObject({ format: 'webp', width: 256, height: 256 });
    expect((await (await a.fetch('/api/personas')).json()) as { personas: { avatar: string }[] }).toMatchObject({ personas: [{ avatar: first.avatar }] });

    // A new upload replaces the file; a link set by PATCH replaces it too; removing and deleting leave no file behind.
    const second = (await (await upload(persona.id, new Uint8Array(gradientPng(64, 64, [0, 200, 0], [0, 0, 0])))).json()) as { avatar: string };
    expect(second.avatar).not.toBe(first.avatar);
    expect((await a.fetch(first.avatar)).status).toBe(404);
    await a.fetch(`/api/personas/${persona.id}`, { method: 'PATCH', json: { avatar: 'https://img.example/vale.png' } });
    expect((await a.fetch(second.avatar)).status).toBe(404);
    const third = (await (await upload(persona.id, new Uint8Array(gradientPng(64, 64, [0, 0, 200], [0, 0, 0])))).json()) as { avatar: string };
    const cleared = (await (await a.fetch(`/api/personas/${persona.id}/avatar`, { method: 'DELETE' })).json()) as { avatar: string | null };
    expect(cleared.avatar).toBeNull();
    expect((await a.fetch(third.avatar)).status).toBe(404);
    const fourth = (await (await upload(persona.id, new Uint8Array(gradientPng(64, 64, [90, 0, 0], [0, 0, 0])))).json()) as { avatar: string };
    expect((await a.fetch(`/api/personas/${persona.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await a.fetch(fourth.avatar)).status).toBe(404);
    expect(await stored()).toBe(before);
  });
});
