import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Collector, readEvents, startCollector } from '../support/collector.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * A stored provider key belongs to its base URL (issue 18, item 2). The attack: a session (stolen
 * or a shared computer) points the saved connection at a host it controls without knowing the key,
 * then makes the platform call it. The collectors run on loopback, so the server allows private
 * addresses here (AI_PRIVATE_NETWORK_ACCESS=allow, a player's own local server).
 */

const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));
const KEY = 'sk-key-K-0123456789abcdef';

describe('provider keys stay with the base URL they were saved for', () => {
  let server: TestServer;
  let a: Collector;
  let b: Collector;
  let player: Browser;

  beforeAll(async () => {
    a = await startCollector();
    b = await startCollector();
    server = await startTestServer({ AI_PRIVATE_NETWORK_ACCESS: 'allow' });
    player = new Browser(server.url);
    await signUp(server, player, { email: `keys-${Date.now()}@example.com`, password: 'long enough pw' });
  });
  afterAll(async () => {
    await server?.stop();
    await a?.close();
    await b?.close();
  });

  it('changing the base URL without a key clears the stored key; B never receives K (test, model list, turn)', async () => {
    const saved = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${a.origin}/v1`, defaultModel: 'm', apiKey: KEY } });
    expect(await saved.json()).toMatchObject({ apiKey: `••••${KEY.slice(-4)}`, keyCleared: false });

    // The attacker's move: the same form, another host, no key.
    const moved = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${b.origin}/v1`, defaultModel: 'm' } });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ baseUrl: `${b.origin}/v1`, apiKey: null, keyStatus: 'none', keyCleared: true });
    const row = await server.ctx.db.primary.query<{ key_ciphertext: Buffer | null; key_last4: string | null }>('select key_ciphertext, key_last4 from ai_connections');
    expect(row.rows.every((r) => r.key_ciphertext === null && r.key_last4 === null)).toBe(true);

    await player.fetch('/api/settings/ai/test', { method: 'POST' });
    await player.fetch('/api/models');
    const w = (await (await player.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string };
    const s = (await (await player.fetch(`/api/worlds/${w.id}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
    await readEvents(await player.fetch(`/api/sessions/${s.session.id}/messages`, { method: 'POST', json: { content: 'hello' } }));

    expect(b.requests.length).toBeGreaterThan(0); // B was called (without a key) …
    expect(b.everything()).not.toContain(KEY); // … and never saw K
    expect(b.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it('a hosted (https) base URL changed without a key is refused and asks for the key, saying why; nothing changes', async () => {
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${a.origin}/v1`, defaultModel: 'm', apiKey: KEY } });
    const res = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: 'https://api.example.com/v1', defaultModel: 'm' } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.message).toMatch(/previous base URL/);
    expect(await (await player.fetch('/api/settings/ai')).json()).toMatchObject({ baseUrl: `${a.origin}/v1`, keyStatus: 'ok' });
  });

  it('saving the same base URL without a key keeps the key (normalized: a trailing slash is the same URL)', async () => {
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${a.origin}/v1`, defaultModel: 'm', apiKey: KEY } });
    const again = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: `${a.origin}/v1/`, defaultModel: 'other' } });
    expect(await again.json()).toMatchObject({ keyStatus: 'ok', keyCleared: false });
    const before = a.requests.length;
    await player.fetch('/api/settings/ai/test', { method: 'POST' });
    expect(a.requests.slice(before).map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`]);
  });
});
