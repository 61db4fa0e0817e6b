import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp as signUpAccount } from '../support/sign-up.ts';

/**
 * Issue 35, point 4, against the real server: the account's logins (device, address, last seen;
 * end one, end the others; never another account's), the profile (display name, username with
 * the partners' rules, a picture resized through the asset store; partners see each change at
 * their next token), and "download my data" (prepared in the background, the account's own
 * worlds, sessions with messages, personas and settings, never a secret).
 */

interface ErrorBody {
  error: { code: string; message: string };
}
interface Login {
  id: string;
  device: string;
  address: string;
  current: boolean;
  lastSeenAt: string;
}
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe('logins, profile and data export', () => {
  let server: TestServer;
  let n = 0;

  beforeAll(async () => {
    // An https public origin, as production has: identity tokens carry https picture URLs only.
    server = await startTestServer({ PUBLIC_ORIGIN: 'https://platform.test', TRUST_PROXY: 'loopback' });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  async function signUp(headers: Record<string, string> = {}): Promise<{ browser: Browser; email: string; id: string }> {
    const browser = new Browser(server.url);
    const email = `data-${++n}-${Date.now()}@example.com`;
    const res = await signUpAccount(server, browser, { email, password: 'the password 1', displayName: `Player ${n}`, headers });
    expect(res.status).toBe(201);
    return { browser, email, id: res.account.id };
  }
  async function signIn(email: string, headers: Record<string, string>): Promise<Browser> {
    const browser = new Browser(server.url);
    expect((await browser.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'the password 1' }, headers })).status).toBe(200);
    return browser;
  }
  const logins = async (b: Browser) => ((await (await b.fetch('/api/account/logins')).json()) as { logins: Login[] }).logins;
  const signedIn = async (b: Browser) => ((await (await b.fetch('/api/auth/session')).json()) as { account: unknown }).account !== null;
  async function claims(b: Browser) {
    const res = await b.fetch('/api/partners/demo/token', { method: 'POST' });
    expect(res.status).toBe(200);
    return JSON.parse(Buffer.from(((await res.json()) as { token: string }).token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  }

  it('lists each login with its device, address and last use; ends one, then all but this one; never another account’s', async () => {
    const { browser: laptop, email } = await signUp({ 'user-agent': FIREFOX, 'x-forwarded-for': '203.0.113.7' });
    const phone = await signIn(email, { 'user-agent': IPHONE, 'x-forwarded-for': '198.51.100.20' });
    const third = await signIn(email, { 'user-agent': 'curl/8', 'x-forwarded-for': '198.51.100.21' });
    const list = await logins(laptop);
    expect(list).toHaveLength(3);
    // This login was made from 203.0.113.7 and is listing from 127.0.0.1 (no forwarded address): its last address.
    expect(list.find((l) => l.current)).toMatchObject({ device: 'Firefox on Linux', address: '127.0.0.1' });
    const onPhone = list.find((l) => l.device === 'Safari on iPhone')!;
    expect(onPhone).toMatchObject({ address: '198.51.100.20', current: false });
    expect(Date.now() - Date.parse(onPhone.lastSeenAt)).toBeLessThan(60_000);
    // A login used from another address shows that address.
    await phone.fetch('/api/auth/session', { headers: { 'x-forwarded-for': '198.51.100.99' } });
    expect((await logins(laptop)).find((l) => l.id === onPhone.id)!.address).toBe('198.51.100.99');

    // Another account can neither see nor end these.
    const stranger = (await signUp()).browser;
    expect((await logins(stranger)).map((l) => l.id)).not.toContain(onPhone.id);
    const foreign = await stranger.fetch(`/api/account/logins/${onPhone.id}`, { method: 'DELETE' });
    expect(foreign.status).toBe(404);
    expect(await signedIn(phone)).toBe(true);

    expect((await laptop.fetch(`/api/account/logins/${onPhone.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await signedIn(phone)).toBe(false);
    expect((await laptop.fetch(`/api/account/logins/${onPhone.id}`, { method: 'DELETE' })).status).toBe(404);
    const others = await laptop.fetch('/api/account/logins/end-others', { method: 'POST' });
    expect(await others.json()).toEqual({ ok: true, ended: 1 });
    expect(await signedIn(third)).toBe(false);
    expect(await signedIn(laptop)).toBe(true);
    expect((await logins(laptop)).map((l) => l.current)).toEqual([true]);
    // Ending this login is signing out.
    const self = (await logins(laptop))[0]!;
    expect(await (await laptop.fetch(`/api/account/logins/${self.id}`, { method: 'DELETE' })).json()).toEqual({ ok: true, current: true });
    expect(await signedIn(laptop)).toBe(false);
    expect((await new Browser(server.url).fetch('/api/account/logins')).status).toBe(401);
  });

  it('edits the display name and the username with the partners’ rules; partners see it at their next token', async () => {
    const { browser } = await signUp();
    const other = await signUp();
    const patch = (b: Browser, json: unknown) => b.fetch('/api/account/profile', { method: 'PATCH', json });
    expect((await claims(browser)).username).toBeNull();
    const ok = await patch(browser, { displayName: '  Morgan  ', username: 'morgan_1' });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { account: Record<string, unknown> }).account).toMatchObject({ displayName: 'Morgan', username: 'morgan_1' });
    expect(await claims(browser)).toMatchObject({ display_name: 'Morgan', username: 'morgan_1' });
    for (const bad of [{ username: 'Morgan' }, { username: 'ab' }, { username: 'a'.repeat(31) }, { username: 'mor-gan' }, { displayName: '   ' }, { displayName: 'x'.repeat(61) }, {}, { email: 'x@example.com' }]) {
      const res = await patch(browser, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    const taken = await patch(other.browser, { username: 'morgan_1' });
    expect(taken.status).toBe(409);
    expect(((await taken.json()) as ErrorBody).error.code).toBe('USERNAME_TAKEN');
    expect(await claims(browser)).toMatchObject({ display_name: 'Morgan', username: 'morgan_1' });
  });

  it('uploads a picture through the asset store, resized to a 256 px WebP without its metadata; partners get an absolute https URL', async () => {
    const { browser, id } = await signUp();
    const photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#c04070' } })
      .withMetadata({ exif: { IFD0: { Copyright: 'secret-location-marker' } } })
      .jpeg()
      .toBuffer();
    const up = await browser.fetch('/api/account/picture', { method: 'POST', body: photo, headers: { 'content-type': 'application/octet-stream' } });
    expect(up.status).toBe(201);
    const { picture } = (await up.json()) as { picture: string };
    expect(picture).toMatch(new RegExp(`^/api/account-pictures/${id}/[a-f0-9]{32}\\.webp$`));
    const served = await fetch(`${server.url}${picture}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/webp');
    expect(served.headers.get('cache-control')).toContain('immutable');
    const bytes = Buffer.from(await served.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect(meta).toMatchObject({ format: 'webp', width: 256, height: 256 });
    expect(meta.exif).toBeUndefined();
    expect(bytes.toString('latin1')).not.toContain('secret-location-marker');
    expect((await claims(browser)).picture).toBe(`https://platform.test${picture}`);

    // Not an image by its content (whatever it claims), a damaged image, an empty or too large body: refused, nothing changed.
    const html = await browser.fetch('/api/account/picture', { method: 'POST', body: '<svg onload="alert(1)"/>', headers: { 'content-type': 'image/png' } });
    expect(html.status).toBe(415);
    const broken = await browser.fetch('/api/account/picture', { method: 'POST', body: Buffer.concat([photo.subarray(0, 200)]), headers: { 'content-type': 'image/jpeg' } });
    expect(broken.status).toBe(422);
    expect((await browser.fetch('/api/account/picture', { method: 'POST', body: Buffer.alloc(0), headers: { 'content-type': 'image/png' } })).status).toBe(400);
    const huge = await browser.fetch('/api/account/picture', { method: 'POST', body: Buffer.concat([photo, Buffer.alloc(9 * 1024 * 1024)]), headers: { 'content-type': 'image/jpeg' } });
    expect(huge.status).toBe(413);
    expect((await claims(browser)).picture).toBe(`https://platform.test${picture}`);

    // A new picture replaces the old one, whose file goes; removing leaves none.
    const second = await browser.fetch('/api/account/picture', { method: 'POST', body: await sharp({ create: { width: 300, height: 300, channels: 3, background: '#20a0f0' } }).png().toBuffer() });
    const next = ((await second.json()) as { picture: string }).picture;
    expect(next).not.toBe(picture);
    expect((await fetch(`${server.url}${picture}`)).status).toBe(404);
    expect((await browser.fetch('/api/account/picture', { method: 'DELETE' })).status).toBe(200);
    expect((await claims(browser)).picture).toBeNull();
    expect((await fetch(`${server.url}${next}`)).status).toBe(404);
  });

  it('prepares “download my data” in the background: worlds, sessions with every message, personas and settings, never a secret; only for its account', async () => {
    const { browser, id, email } = await signUp();
    const world = await browser.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: 'Exported world', description: 'Kept in the archive.' } } });
    expect(world.status).toBe(201);
    const worldId = ((await world.json()) as { id: string }).id;
    expect((await browser.fetch('/api/personas', { method: 'POST', json: { name: 'Wanderer', description: 'A quiet traveller.' } })).status).toBe(201);
    const KEY = 'sk-never-in-an-export-4242';
    expect((await browser.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: 'https://llm.example/v1', defaultModel: 'story-1', apiKey: KEY } })).status).toBe(200);
    // what the world's interface chose for this player in this world (issue 43 point 9) is the player's data too
    expect((await browser.fetch(`/api/worlds/${worldId}/player/model`, { method: 'PUT', json: { model: 'story-2' } })).status).toBe(200);
    // A large account: 120 sessions of 20 messages each (built in pages of 50 sessions).
    await server.ctx.db.primary.query(
      `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count)
       select 'cnv_export_' || lpad(s::text, 4, '0'), $1, $2, 'Session ' || s, 'seed', '{}', '{}', 20 from generate_series(1, 120) s`,
      [worldId, id],
    );
    await server.ctx.db.primary.query(
      `insert into chat_messages (id, session_id, position, role, content)
       select 'msg_export_' || s || '_' || p, 'cnv_export_' || lpad(s::text, 4, '0'), p, case when p % 2 = 0 then 'user' else 'assistant' end, 'Line ' || p || ' of session ' || s
         from generate_series(1, 120) s, generate_series(0, 19) p`,
    );
    // a round with the studio assistant on the world (issue 48) is the author's data too
    await server.ctx.db.primary.query(
      `insert into world_assistant_rounds (id, world_id, account_id, kind, request, reply, status, operations, base_revision)
       values ('asc_export_1', $1, $2, 'request', 'Add health.', 'Health added.', 'proposed', '[{"op":"remove_entry","id":"x"}]', 1)`,
      [worldId, id],
    );

    const asked = await browser.fetch('/api/account/exports', { method: 'POST' });
    expect(asked.status).toBe(202);
    const { export: job } = (await asked.json()) as { export: { id: string; status: string; download: string | null } };
    // The answer came before the archive: it is prepared in the background.
    expect(['queued', 'running']).toContain(job.status);
    expect(job.download).toBeNull();
    await expect
      .poll(async () => ((await (await browser.fetch('/api/account/exports')).json()) as { exports: { id: string; status: string }[] }).exports.find((e) => e.id === job.id)?.status, { timeout: 30_000 })
      .toBe('ready');

    const stranger = (await signUp()).browser;
    expect((await stranger.fetch(`/api/account/exports/${job.id}/download`)).status).toBe(404);
    expect((await new Browser(server.url).fetch(`/api/account/exports/${job.id}/download`)).status).toBe(401);

    const download = await browser.fetch(`/api/account/exports/${job.id}/download`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="yumina-data-\d{4}-\d{2}-\d{2}\.json"$/);
    const text = await download.text();
    const archive = JSON.parse(text) as {
      format: string;
      account: { id: string; email: string };
      settings: { aiConnection: Record<string, unknown>; aiChoicesByWorld: Record<string, unknown>[] };
      personas: { name: string }[];
      worlds: { id: string; name: string; definition: { name: string }; assistant: Record<string, unknown>[] }[];
      sessions: { id: string; worldName: string; messages: { position: number; role: string; content: string }[] }[];
    };
    expect(archive.format).toBe('yumina-account-export');
    expect(archive.account).toMatchObject({ id, email });
    expect(archive.settings.aiConnection).toEqual(expect.objectContaining({ baseUrl: 'https://llm.example/v1', defaultModel: 'story-1', keyStored: true }));
    expect(archive.settings.aiChoicesByWorld).toEqual([expect.objectContaining({ worldId, provider: null, model: 'story-2' })]);
    expect(archive.personas.map((p) => p.name)).toEqual(['Wanderer']);
    expect(archive.worlds).toHaveLength(1);
    expect(archive.worlds[0]).toMatchObject({ id: worldId, name: 'Exported world', definition: { name: 'Exported world' } });
    expect(archive.worlds[0]!.assistant).toEqual([
      expect.objectContaining({ id: 'asc_export_1', request: 'Add health.', reply: 'Health added.', status: 'proposed', operations: [{ op: 'remove_entry', id: 'x' }] }),
    ]);
    expect(archive.sessions).toHaveLength(120);
    expect(archive.sessions.map((s) => s.id)).toEqual(Array.from({ length: 120 }, (_, i) => `cnv_export_${String(i + 1).padStart(4, '0')}`));
    expect(archive.sessions[119]!.messages).toHaveLength(20);
    expect(archive.sessions[119]!.messages[19]).toMatchObject({ position: 19, role: 'assistant', content: 'Line 19 of session 120' });
    // Never a secret: the provider key (or its last digits), the password hash, a login token.
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('4242');
    expect(text).not.toContain('scrypt$');
    const { rows } = await server.ctx.db.primary.query<{ key_id: string }>('select key_id from ai_connections where account_id = $1', [id]);
    expect(text).not.toContain(rows[0]!.key_id);
    expect(text).not.toMatch(/token_hash|password_hash|key_ciphertext|ses_/);
  }, 60_000);
});
