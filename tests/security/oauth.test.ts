import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type LoopbackOidc, startLoopbackOidc } from '../support/oidc.ts';
import { freePort } from '../support/redis.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Item 3 of issue 18: OAuth login CSRF. The attacker starts a sign-in (or a link) in their own
 * browser, stops at the callback URL (code + state) and gets a victim's browser to open it. Real
 * OIDC provider on loopback (oauth2-mock-server), a real server on PostgreSQL and Redis, and two
 * Chromium contexts as the two browsers.
 */
describe('OAuth flows are bound to the browser that started them', () => {
  let server: TestServer;
  let oidc: LoopbackOidc;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;

  beforeAll(async () => {
    oidc = await startLoopbackOidc();
    const port = await freePort();
    [server, browser] = await Promise.all([
      startTestServer({ PORT: String(port), PUBLIC_ORIGIN: `http://127.0.0.1:${port}`, ...oidc.env() }, { web: true }),
      launchBrowser(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await oidc?.stop();
  });

  /**
   * Starts a flow in `context` (its cookie jar is the browser's) and follows it to the provider,
   * returning the callback URL the provider sends the browser to, without opening it.
   */
  async function captureCallback(context: BrowserContext, query: string): Promise<string> {
    const start = await context.request.get(`${server.url}/api/auth/oauth/google/start?${query}`, { maxRedirects: 0 });
    expect(start.status()).toBe(302);
    const authorize = await context.request.get(start.headers().location!, { maxRedirects: 0 });
    expect(authorize.status()).toBe(302);
    const callback = authorize.headers().location!;
    expect(new URL(callback).pathname).toBe('/api/auth/oauth/google/callback');
    return callback;
  }

  const sessionOf = async (context: BrowserContext) =>
    ((await (await context.request.get(`${server.url}/api/auth/session`)).json()) as { account: { id: string } | null; identities?: Record<string, string> });

  const counts = async () => {
    const { rows } = await server.ctx.db.primary.query<{ accounts: number; identities: number; sessions: number }>(
      `select (select count(*)::int from accounts) as accounts, (select count(*)::int from oauth_identities) as identities,
              (select count(*)::int from login_sessions) as sessions`,
    );
    return rows[0]!;
  };

  async function openIn(context: BrowserContext, url: string): Promise<{ page: Page; status: number | undefined }> {
    const page = await context.newPage();
    const response = await page.goto(url);
    return { page, status: response?.status() };
  }

  it('a callback URL captured in one browser context and opened in another signs nobody in', async () => {
    const attacker = await browser.newContext();
    const victim = await browser.newContext();
    try {
      oidc.identity = { sub: 'attacker-sub', email: 'attacker@example.com', name: 'Attacker' };
      const callback = await captureCallback(attacker, 'returnTo=/app/settings');
      // The flow cookie is HttpOnly, SameSite=Lax and scoped to the OAuth routes.
      const flowCookie = (await attacker.cookies(`${server.url}/api/auth/oauth/google/callback`)).find((c) => c.name === 'yumina_oauth_flow');
      expect(flowCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/api/auth/oauth/' });
      expect(flowCookie!.value).not.toContain(new URL(callback).searchParams.get('state')!);

      const before = await counts();
      const { page, status } = await openIn(victim, callback);
      expect(status).toBe(400);
      await expect.poll(() => page.getByTestId('oauth-refused').textContent()).toMatch(/started in another browser/);
      expect((await victim.cookies(server.url)).map((c) => c.name)).not.toContain('yumina_session');
      expect((await sessionOf(victim)).account).toBeNull();
      expect(await counts()).toEqual(before);

      // The same URL in the browser that started the flow completes it: the refusal was the binding.
      const own = await openIn(attacker, callback);
      expect(new URL(own.page.url()).pathname).toBe('/app/settings');
      expect((await sessionOf(attacker)).account).not.toBeNull();
      // Single use: opening it once more is refused.
      expect((await attacker.request.get(callback, { maxRedirects: 0 })).status()).toBe(400);
    } finally {
      await attacker.close();
      await victim.close();
    }
  });

  it("linking a provider needs that account's session in the browser that started the link", async () => {
    const a = await browser.newContext();
    const b = await browser.newContext();
    try {
      for (const [ctx, email] of [
        [a, 'linker-a@example.com'],
        [b, 'linker-b@example.com'],
      ] as const) {
        expect((await signUp(server, ctx, { email, password: 'long enough pw' })).status).toBe(201);
      }
      oidc.identity = { sub: 'link-sub', email: 'linker@example.com', name: 'Linker' };
      const callback = await captureCallback(a, `link=1&returnTo=${encodeURIComponent('/app/settings#providers')}`);
      const before = await counts();
      const { status } = await openIn(b, callback);
      expect(status).toBe(400);
      expect((await sessionOf(b)).identities).toEqual({});
      expect((await sessionOf(a)).identities).toEqual({});
      expect(await counts()).toEqual(before);
      // Without a session, starting a link is refused outright.
      const anonymous = await browser.newContext();
      expect((await anonymous.request.get(`${server.url}/api/auth/oauth/google/start?link=1`, { maxRedirects: 0 })).status()).toBe(401);
      await anonymous.close();
      // The browser that started it, with its session, links.
      await openIn(a, callback);
      expect((await sessionOf(a)).identities).toEqual({ google: 'link-sub' });
    } finally {
      await a.close();
      await b.close();
    }
  });
});
