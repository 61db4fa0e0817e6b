import { createServer, type Server } from 'node:http';
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { screenPath } from '../support/screens.ts';
import { signUp as signUpAccount } from '../support/sign-up.ts';
import { freePort } from '../support/redis.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The handoff end to end with two real sites: the platform on http://localhost:P and the demo
 * partner (client + partner API built from the kit) on http://127.0.0.1:Q.
 */
describe('partner identity handoff in a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let platform: string;
  let third: Server;
  let thirdOrigin: string;

  beforeAll(async () => {
    const port = await freePort();
    platform = `http://localhost:${port}`;
    server = await startTestServer({ PORT: String(port), PUBLIC_ORIGIN: platform, DEMO_PARTNER_PORT: String(await freePort()) }, { web: true });
    browser = await launchBrowser();
    // A third origin whose page tries to talk to both the landing page and the partner frame.
    third = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      // It opens the landing page, then messages it and the partner frame inside it.
      res.end(`<!doctype html><script>
        window.replies = [];
        window.addEventListener('message', (e) => window.replies.push(e.data));
        window.attack = (url) => { window.target = window.open(url); return true; };
        window.fire = () => {
          const w = window.target;
          w.postMessage({ type: 'platform:auth:request', requestId: 'evil-1' }, '*');
          w.postMessage({ type: 'platform:auth:login' }, '*');
          w.postMessage({ type: 'platform:auth:logout' }, '*');
          try { w.frames[0].postMessage({ type: 'platform:auth:changed' }, '*'); } catch (e) {}
          try { w.frames[0].postMessage({ type: 'platform:auth:unauthenticated', requestId: 'x' }, '*'); } catch (e) {}
          try { w.frames[0].postMessage({ type: 'platform:auth:token', requestId: 'x', token: 'forged' }, '*'); } catch (e) {}
          return true;
        };
      </script>third`);
    });
    const tp = await freePort();
    await new Promise<void>((r) => third.listen(tp, '127.0.0.1', r));
    thirdOrigin = `http://127.0.0.1:${tp}`;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    third?.close();
    await server?.stop();
  });

  const partnerFrame = (page: Page): Frame => {
    const frame = page.frames().find((f) => f.url().includes('host=platform'));
    if (!frame) throw new Error('partner frame not loaded');
    return frame;
  };
  /** The partner frame's player state, or null while the frame is (re)loading. */
  const playerState = async (page: Page) => {
    try {
      return await partnerFrame(page).locator('#player').getAttribute('data-state', { timeout: 2_000 });
    } catch {
      return null;
    }
  };

  it('boots, hands over the identity, ignores a third origin, announces logout and another tab’s login', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${platform}/`);
    const signUp = await signUpAccount({ url: platform, dataDir: server.dataDir }, page, { email: `partner-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Hana' });

    await page.goto(`${platform}/demo?path=${encodeURIComponent('/play?level=3')}`);
    const csp = (await page.request.get(`${platform}/demo`)).headers()['content-security-policy'];
    expect(csp).toMatch(/frame-src http:\/\/127\.0\.0\.1:\d+(;| )/);
    await expect.poll(() => page.frames().some((f) => f.url().includes('host=platform')), { timeout: 15_000 }).toBe(true);
    expect(new URL(partnerFrame(page).url()).pathname).toBe('/play');
    expect(new URL(partnerFrame(page).url()).searchParams.get('level')).toBe('3');
    // The frame asked, got a token, posted it to the partner API, which verified it through the JWKS URL.
    await expect.poll(() => playerState(page), { timeout: 15_000 }).toBe('signed-in');
    expect(await partnerFrame(page).textContent('#player')).toBe('Hana');
    expect(await partnerFrame(page).getAttribute('#player', 'data-sub')).toBe(signUp.account.id);
    expect(await page.isHidden('#overlay')).toBe(true);

    // The landing page's CSP refuses to frame anything but the partner client.
    const blocked = await page.evaluate(
      (src) =>
        new Promise<boolean>((done) => {
          const f = document.createElement('iframe');
          f.src = src;
          document.body.appendChild(f);
          setTimeout(() => {
            try {
              done(f.contentWindow?.location.href === 'about:blank' || !f.contentDocument);
            } catch {
              done(true);
            }
          }, 1000);
        }),
      `${thirdOrigin}/`,
    );
    expect(blocked).toBe(true);
    expect(page.frames().some((f) => f.url().startsWith(thirdOrigin))).toBe(false);

    // A third origin that opens the landing page and messages it and the partner frame: nobody answers, nothing changes.
    const attacker = await context.newPage();
    await attacker.goto(`${thirdOrigin}/`);
    const popupOpened = context.waitForEvent('page');
    await attacker.evaluate((url) => (window as unknown as { attack(u: string): boolean }).attack(url), `${platform}/demo`);
    const popup = await popupOpened;
    const platformCalls: string[] = [];
    popup.on('request', (r) => {
      const url = new URL(r.url());
      if (url.origin === platform && url.pathname.startsWith('/api/')) platformCalls.push(`${r.method()} ${url.pathname}`);
    });
    await expect.poll(() => playerState(popup), { timeout: 15_000 }).toBe('signed-in');
    await popup.waitForTimeout(500);
    const logBefore = (await partnerFrame(popup).textContent('#log')) ?? '';
    const callsBefore = platformCalls.length;
    expect(await attacker.evaluate(() => (window as unknown as { fire(): boolean }).fire())).toBe(true);
    await popup.waitForTimeout(1_500);
    expect(await attacker.evaluate(() => (window as unknown as { replies: unknown[] }).replies)).toEqual([]);
    expect(await playerState(popup)).toBe('signed-in');
    // Neither the landing page nor the frame acted on them: no token fetch, no logout, no login
    // redirect, and the frame logged no `changed` / `unauthenticated` / token.
    expect(platformCalls.slice(callsBefore).filter((c) => !c.endsWith('/api/auth/session'))).toEqual([]);
    expect(popup.url()).toBe(`${platform}/demo`);
    expect((await partnerFrame(popup).textContent('#log')) ?? '').toBe(logBefore);
    expect((await server.ctx.db.primary.query('select 1 from login_sessions where account_id = $1 and ended_at is null', [signUp.account.id])).rowCount).toBeGreaterThan(0);
    await popup.close();
    await attacker.close();

    // Logout in another tab: the frame gets `changed`, then `unauthenticated`.
    const other = await context.newPage();
    await other.goto(`${platform}/`);
    await other.evaluate(() => fetch('/api/auth/logout', { method: 'POST' }));
    await expect.poll(() => playerState(page), { timeout: 8_000 }).toBe('guest');
    const log = (await partnerFrame(page).textContent('#log')) ?? '';
    expect(log.indexOf('unauthenticated')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('platform user changed')).toBeGreaterThan(log.indexOf('unauthenticated')); // newest first

    // Login in another tab is announced to the frame within 5 s.
    const t0 = Date.now();
    await other.evaluate(async (email) => {
      await fetch('/api/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'long enough pw' }),
      });
    }, (await server.ctx.db.primary.query<{ email: string }>('select email from accounts where id = $1', [signUp.account.id])).rows[0]!.email);
    await expect.poll(() => playerState(page), { timeout: 5_000, interval: 100 }).toBe('signed-in');
    expect(Date.now() - t0).toBeLessThan(5_000);
    await context.close();
  }, 90_000);

  it('the demo partner follows docs/PARTNERS.md §7: the profile is synced at every session start, and leases are scoped to (iss, sub, sid)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${platform}/`);
    const signUp = await signUpAccount({ url: platform, dataDir: server.dataDir }, page, { email: `rules-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Kai' });
    // The partner sessions (leases) the frame received from the demo partner's API.
    const leases: { token: string; lease: { iss: string; sub: string; sid: string } }[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().endsWith('/auth/platform/session') && r.ok()) void r.json().then((b: (typeof leases)[number]) => leases.push(b));
    });
    await page.goto(`${platform}/demo`);
    await expect.poll(() => playerState(page), { timeout: 15_000 }).toBe('signed-in');
    const frame = () => partnerFrame(page);
    expect(await frame().textContent('#player')).toBe('Kai');
    const partnerAccount = await frame().getAttribute('#player', 'data-account');
    const firstSid = await frame().getAttribute('#lease', 'data-sid');
    expect(partnerAccount).toMatch(/^demo-\d+$/);
    expect(await frame().textContent('#lease')).toContain(`sub ${signUp.account.id}`);
    await expect.poll(() => leases.length).toBe(1);
    expect(leases[0]!.lease).toEqual({ iss: platform, sub: signUp.account.id, sid: firstSid });
    const demoOrigin = new URL(frame().url()).origin;
    const me = (token: string) => fetch(`${demoOrigin}/me`, { headers: { authorization: `Bearer ${token}` } });

    // Profile sync: renamed on the platform, the next session start carries the new name into the
    // same partner account (matched by sub), under the same platform login.
    expect(await page.evaluate(async () => (await fetch('/api/account/profile', { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ displayName: 'Kai Renamed' }) })).status)).toBe(200);
    await page.reload();
    await expect.poll(() => playerState(page), { timeout: 15_000 }).toBe('signed-in');
    expect(await frame().textContent('#player')).toBe('Kai Renamed');
    expect(await frame().getAttribute('#player', 'data-account')).toBe(partnerAccount);
    expect(await frame().getAttribute('#lease', 'data-sid')).toBe(firstSid);
    await expect.poll(() => leases.length).toBe(2);
    expect(((await (await me(leases[0]!.token)).json()) as { player: { displayName: string } }).player.displayName).toBe('Kai Renamed');

    // Lease scoping: a logout ends the platform login; the frame hears `changed` and every lease of
    // that (iss, sub, sid) ends, both page loads' leases included.
    const other = await context.newPage();
    await other.goto(`${platform}/`);
    await other.evaluate(() => fetch('/api/auth/logout', { method: 'POST' }));
    await expect.poll(() => playerState(page), { timeout: 8_000 }).toBe('guest');
    await expect.poll(async () => (await me(leases[1]!.token)).status, { timeout: 8_000 }).toBe(401);
    expect((await me(leases[0]!.token)).status).toBe(401);
    // A new login is a new sid: a new lease for the same partner account.
    const email = (await server.ctx.db.primary.query<{ email: string }>('select email from accounts where id = $1', [signUp.account.id])).rows[0]!.email;
    await other.evaluate(async (address) => {
      await fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: address, password: 'long enough pw' }) });
    }, email);
    await expect.poll(() => playerState(page), { timeout: 8_000 }).toBe('signed-in');
    await expect.poll(() => leases.length).toBe(3);
    const newSid = await frame().getAttribute('#lease', 'data-sid');
    expect(newSid).toBe(leases[2]!.lease.sid);
    expect(newSid).not.toBe(firstSid);
    expect(await frame().getAttribute('#player', 'data-account')).toBe(partnerAccount);
    expect((await me(leases.at(-1)!.token)).status).toBe(200);
    await page.screenshot({ path: screenPath('partner-demo') });
    // Issue 44 point 7: the landing page has a way back to the platform.
    await page.getByRole('link', { name: 'Back to Yumina' }).click();
    await expect.poll(() => page.url()).toBe(`${platform}/`);
    await context.close();
  }, 90_000);

  it('every invalid landing path of §2.6 (NUL included) falls back to the partner’s `/`; a valid one is kept', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const framed = async (raw: string | null) => {
      const query = raw === null ? '' : `?path=${encodeURIComponent(raw)}`;
      const res = await page.goto(`${platform}/demo${query}`);
      expect(res?.status(), JSON.stringify(raw)).toBe(200);
      await expect.poll(() => page.frames().some((f) => f.url().includes('host=platform')), { timeout: 15_000 }).toBe(true);
      const url = new URL(partnerFrame(page).url());
      return `${url.pathname}${url.search}`;
    };
    const invalid: Array<[string, string]> = [
      ['U+0000', '/play\u0000?level=3'],
      ['U+0000 alone', '\u0000'],
      ['a tab', '/play\t?level=3'],
      ['a line feed', '/play\n?level=3'],
      ['DEL', '/play\u007f?level=3'],
      ['a C1 control', '/play\u0085?level=3'],
      ['an encoded control', '/play%00?level=3'],
      ['a backslash', '/play\\x?level=3'],
      ['a leading backslash', '/\\evil.example/play'],
      ['an encoded backslash', '/%5cevil.example/play'],
      ['no leading slash', 'play?level=3'],
      ['an absolute URL', 'https://evil.example/play?level=3'],
      ['a leading //', '//evil.example/play?level=3'],
      ['an encoded //', '/%2f%2fevil.example/play'],
      ['513 characters', `/play?level=3&pad=${'a'.repeat(513 - '/play?level=3&pad='.length)}`],
      ['empty', ''],
    ];
    for (const [name, raw] of invalid) {
      expect(await framed(raw), name).toBe('/?host=platform');
    }
    // The rule is not “always /”: 512 characters and an ordinary path are kept, and no path is /.
    const longest = `/play?level=3&pad=${'a'.repeat(512 - '/play?level=3&pad='.length)}`;
    expect(await framed(longest)).toBe(`${longest}&host=platform`);
    expect(await framed('/play?level=3')).toBe('/play?level=3&host=platform');
    expect(await framed(null)).toBe('/?host=platform');
    await context.close();
  }, 120_000);

  it('a disabled or unknown partner shows “not available”; the token endpoint refuses without a session', async () => {
    // A platform whose partner list holds one partner that is switched off: its landing page
    // says so within the first screen (the frame's own display rule once kept it shown, blank,
    // pushing the notice below an 800 px window), at 1280 and at 390 px.
    const off = await startTestServer({ PARTNERS: JSON.stringify([{ slug: 'soon', enabled: false, clientOrigin: 'https://client.soon.example', issuer: 'https://yumina.example' }]) }, { web: true });
    try {
      for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
        const context = await browser.newContext({ viewport, hasTouch: viewport.width < 500 });
        const page = await context.newPage();
        await page.goto(`${off.url}/soon`);
        const notice = page.getByRole('heading', { name: 'Not available yet' });
        await notice.waitFor({ state: 'visible' });
        expect(await page.locator('#game').isVisible()).toBe(false);
        const box = (await notice.boundingBox())!;
        expect(box.y).toBeGreaterThanOrEqual(0);
        expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
        expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
        expect(await page.getByRole('link', { name: 'Back to Yumina' }).getAttribute('href')).toBe('/');
        if (viewport.width === 1280) await page.screenshot({ path: screenPath('partner-unavailable') });
        await context.close();
      }
    } finally {
      await off.stop();
    }
    const res = await fetch(`${server.url}/api/partners/demo/token`, { method: 'POST' });
    expect(res.status).toBe(401);
    const config = (await (await fetch(`${server.url}/api/partners/demo/config`)).json()) as Record<string, unknown>;
    expect(Object.keys(config)).toEqual(['enabled', 'clientOrigin', 'apiOrigin', 'audience', 'issuer', 'jwksUrl', 'tokenTtlSeconds']);
    expect(config).toMatchObject({ enabled: true, issuer: platform, tokenTtlSeconds: 90 });
    expect((await fetch(`${server.url}/api/partners/nope/config`)).status).toBe(404);
    const jwks = (await (await fetch(`${server.url}/api/auth/jwks`)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of jwks.keys) expect(Object.keys(k)).not.toContain('d');
  });
});
