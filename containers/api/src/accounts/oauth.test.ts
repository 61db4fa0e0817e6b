import { OAuth2Server } from 'oauth2-mock-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../../tests/support/redis.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

/** A real OAuth2/OIDC server on loopback (oauth2-mock-server): authorize, token (PKCE checked), JWKS-signed id_tokens, userinfo. */
describe('OAuth identities through a loopback OIDC provider', () => {
  let idp: OAuth2Server;
  let server: TestServer;
  let next = { sub: 'google-sub-1', email: 'shared@example.com', name: 'Gwen' };
  const discordUser = { id: '80351110224678912', username: 'nelly', email: 'shared@example.com', verified: true };

  beforeAll(async () => {
    idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    await idp.start(0, '127.0.0.1');
    const issuer = idp.issuer.url!;
    idp.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
      if (token.payload.aud === 'google-client') Object.assign(token.payload, { sub: next.sub, email: next.email, email_verified: true, name: next.name });
    });
    idp.service.on('beforeUserinfo', (res: { body: unknown }) => {
      res.body = discordUser;
    });
    const port = await freePort();
    const endpoints = (p: string) => ({
      [`OAUTH_${p}_CLIENT_SECRET`]: 'secret',
      [`OAUTH_${p}_AUTHORIZE_URL`]: `${issuer}/authorize`,
      [`OAUTH_${p}_TOKEN_URL`]: `${issuer}/token`,
      [`OAUTH_${p}_USERINFO_URL`]: `${issuer}/userinfo`,
    });
    server = await startTestServer({
      PORT: String(port),
      PUBLIC_ORIGIN: `http://127.0.0.1:${port}`,
      OAUTH_GOOGLE_CLIENT_ID: 'google-client',
      ...endpoints('GOOGLE'),
      OAUTH_GOOGLE_ISSUER: issuer,
      OAUTH_GOOGLE_JWKS_URL: `${issuer}/jwks`,
      OAUTH_DISCORD_CLIENT_ID: 'discord-client',
      ...endpoints('DISCORD'),
    });
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.stop();
  });

  /** Drives the whole redirect dance the way a browser would. */
  async function loginWith(browser: Browser, provider: string, query = ''): Promise<Response> {
    const start = await browser.fetch(`/api/auth/oauth/${provider}/start?returnTo=/app/settings${query}`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const approved = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(approved.headers.get('location')!);
    expect(callback.pathname).toBe(`/api/auth/oauth/${provider}/callback`);
    return browser.fetch(callback.pathname + callback.search);
  }

  const me = async (b: Browser) =>
    (await (await b.fetch('/api/auth/session')).json()) as { account: { id: string; email: string; displayName: string } | null; identities: Record<string, string> };

  it('a first login creates an account with the google identity (the OIDC sub); a second login signs into the same account', async () => {
    const first = new Browser(server.url);
    const done = await loginWith(first, 'google');
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe('/app/settings');
    const a = await me(first);
    expect(a.account).not.toBeNull();
    expect(a.identities).toEqual({ google: 'google-sub-1' });
    expect(a.account!.displayName).toBe('Gwen');

    const second = new Browser(server.url);
    await loginWith(second, 'google');
    expect((await me(second)).account!.id).toBe(a.account!.id);
  });

  it('an e-mail match alone never links: a password account with the same e-mail stays separate', async () => {
    const pw = new Browser(server.url);
    await signUp(server, pw, { email: 'other@example.com', password: 'long enough pw' });
    next = { sub: 'google-sub-2', email: 'other@example.com', name: 'Other' };
    const viaGoogle = new Browser(server.url);
    await loginWith(viaGoogle, 'google');
    const g = await me(viaGoogle);
    const p = await me(pw);
    expect(g.account!.id).not.toBe(p.account!.id);
    expect(p.identities).toEqual({});
  });

  it('a signed-in user links discord (its user id) and can unlink it; a subject linked elsewhere is refused', async () => {
    next = { sub: 'google-sub-3', email: 'link@example.com', name: 'Linker' };
    const b = new Browser(server.url);
    await loginWith(b, 'google');
    const linked = await loginWith(b, 'discord', '&link=1');
    expect(linked.headers.get('location')).toBe('/app/settings');
    expect((await me(b)).identities).toEqual({ google: 'google-sub-3', discord: '80351110224678912' });

    // Another account trying to link the same discord user is refused.
    next = { sub: 'google-sub-4', email: 'x@example.com', name: 'X' };
    const c = new Browser(server.url);
    await loginWith(c, 'google');
    const refused = await loginWith(c, 'discord', '&link=1');
    expect(refused.headers.get('location')).toMatch(/auth_error=identity_in_use/);
    expect((await me(c)).identities).toEqual({ google: 'google-sub-4' });

    expect((await b.fetch('/api/auth/identities/discord', { method: 'DELETE' })).status).toBe(200);
    expect((await me(b)).identities).toEqual({ google: 'google-sub-3' });
    // The last way to sign in cannot be removed.
    expect((await b.fetch('/api/auth/identities/google', { method: 'DELETE' })).status).toBe(409);
  });

  it('a replayed or forged state is refused and creates nothing', async () => {
    const before = await server.ctx.db.primary.query('select count(*)::int as n from accounts');
    const r = await new Browser(server.url).fetch('/api/auth/oauth/google/callback?code=abc&state=forged');
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('OAUTH_STATE_INVALID');
    const after = await server.ctx.db.primary.query('select count(*)::int as n from accounts');
    expect(after.rows[0]).toEqual(before.rows[0]);
    expect((await new Browser(server.url).fetch('/api/auth/oauth/twitter/start')).status).toBe(404);
  });
});
