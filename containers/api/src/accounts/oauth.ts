import { createHash, timingSafeEqual } from 'node:crypto';
import { OAUTH_PROVIDERS, type OAuthProvider, type OAuthProviderConfig } from '@yumina/config';
import { HttpError, oneLineText } from '@yumina/http';
import { safeReturnTo } from '@yumina/identity/browser';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { AppContext } from '../context.ts';
import { createSession, newId, newSecret, SESSION_COOKIE } from '@yumina/accounts';
import { authenticate, clientSeen, requireAuth, sessionCookieOptions } from './auth.ts';
import { canonicalEmail, isReservedAddress, noAddress } from './email-address.ts';

/** What a completed OAuth flow proves: the provider's own subject id, plus profile hints. */
interface ProviderIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
}

const FLOW_TTL_MINUTES = 10;
/**
 * The browser binding of an OAuth flow (login CSRF): the start sets this short-lived, single-use,
 * HttpOnly, SameSite=Lax cookie holding a hash of the flow's state and PKCE verifier; the callback
 * refuses a flow whose cookie is missing or differs, so a callback URL opened in another browser
 * signs nobody in and links nothing.
 */
export const OAUTH_FLOW_COOKIE = 'yumina_oauth_flow';
const FLOW_COOKIE_PATH = '/api/auth/oauth/';

const flowBinding = (state: string, verifier: string) => createHash('sha256').update(`${state}.${verifier}`).digest('base64url');

function sameBinding(cookie: string | undefined, expected: string): boolean {
  if (!cookie) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The refusal of a callback from another browser: a clear page for a browser, the error shape otherwise. */
function refuseForeignCallback(request: FastifyRequest, reply: FastifyReply) {
  const message = 'This sign-in was started in another browser (or a newer sign-in replaced it, or its time ran out), so nobody was signed in. Start the sign-in again from this browser.';
  reply.code(400).header('cache-control', 'no-store');
  if (!(request.headers.accept ?? '').includes('text/html')) return reply.send({ error: { code: 'OAUTH_BROWSER_MISMATCH', message } });
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem">` +
        `<h1>Sign-in refused</h1><p data-testid="oauth-refused">${message}</p><p><a href="/login">Sign in</a></p></body></html>`,
    );
}
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function callbackUrl(ctx: AppContext, provider: OAuthProvider): string {
  return `${ctx.config.publicOrigin}/api/auth/oauth/${provider}/callback`;
}

function providerConfig(ctx: AppContext, provider: string): [OAuthProvider, OAuthProviderConfig] {
  const p = OAUTH_PROVIDERS.find((x) => x === provider);
  const conf = p && ctx.config.auth.oauth[p];
  if (!p || !conf) throw new HttpError(404, 'UNKNOWN_PROVIDER', `Sign-in with ${provider} is not configured.`);
  return [p, conf];
}

async function exchangeCode(ctx: AppContext, provider: OAuthProvider, conf: OAuthProviderConfig, code: string, verifier: string) {
  const res = await fetch(conf.tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(conf.clientId)}:${encodeURIComponent(conf.clientSecret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: callbackUrl(ctx, provider),
      code_verifier: verifier,
      client_id: conf.clientId,
    }),
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new HttpError(502, 'OAUTH_EXCHANGE_FAILED', `${provider} refused the sign-in (${res.status}).`);
  return (await res.json()) as { access_token?: string; id_token?: string };
}

async function providerIdentity(
  provider: OAuthProvider,
  conf: OAuthProviderConfig,
  tokens: { access_token?: string; id_token?: string },
  nonce: string,
): Promise<ProviderIdentity> {
  if (provider === 'google') {
    // OpenID Connect: the identity is the verified id_token's `sub`.
    if (!tokens.id_token || !conf.jwksUrl || !conf.issuer) throw new HttpError(502, 'OAUTH_NO_ID_TOKEN', 'The provider sent no ID token.');
    let keys = keySets.get(conf.jwksUrl);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(conf.jwksUrl));
      keySets.set(conf.jwksUrl, keys);
    }
    const { payload } = await jwtVerify(tokens.id_token, keys, {
      issuer: [conf.issuer, conf.issuer.replace(/\/$/, ''), `${conf.issuer.replace(/\/$/, '')}/`],
      audience: conf.clientId,
      requiredClaims: ['sub', 'exp', 'iat'],
    }).catch(() => {
      throw new HttpError(502, 'OAUTH_BAD_ID_TOKEN', 'The provider’s ID token did not verify.');
    });
    if (payload.nonce !== nonce) throw new HttpError(502, 'OAUTH_BAD_ID_TOKEN', 'The provider’s ID token did not match this sign-in.');
    return {
      subject: String(payload.sub),
      email: typeof payload.email === 'string' ? payload.email : null,
      emailVerified: payload.email_verified === true,
      name: typeof payload.name === 'string' ? payload.name : null,
      picture: typeof payload.picture === 'string' && payload.picture.startsWith('https://') ? payload.picture : null,
    };
  }
  if (!tokens.access_token) throw new HttpError(502, 'OAUTH_NO_ACCESS_TOKEN', 'The provider sent no access token.');
  const res = await fetch(conf.userinfoUrl, {
    headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new HttpError(502, 'OAUTH_PROFILE_FAILED', `${provider} did not return the profile (${res.status}).`);
  const body = (await res.json()) as Record<string, unknown>;
  // Discord's /users/@me is the user object; X's /2/users/me wraps it in `data`.
  const user = (provider === 'twitter' ? body.data : body) as Record<string, unknown> | undefined;
  const id = user?.id;
  if (typeof id !== 'string' || !id) throw new HttpError(502, 'OAUTH_PROFILE_FAILED', `${provider} returned no user id.`);
  const avatar = provider === 'discord' && typeof user?.avatar === 'string' ? `https://cdn.discordapp.com/avatars/${id}/${user.avatar}.png` : null;
  return {
    subject: id,
    email: typeof user?.email === 'string' ? user.email : null,
    // Discord's `verified` is about the e-mail; X's `verified` is its badge, never the e-mail's.
    emailVerified: provider === 'discord' && user?.verified === true,
    name: (typeof user?.global_name === 'string' && user.global_name) || (typeof user?.name === 'string' && user.name) || (typeof user?.username === 'string' ? user.username : null),
    picture: avatar ?? (typeof user?.profile_image_url === 'string' && user.profile_image_url.startsWith('https://') ? user.profile_image_url : null),
  };
}

function redirectWithError(reply: FastifyReply, returnTo: string, code: string) {
  const sep = returnTo.includes('?') ? '&' : '?';
  return reply.redirect(`${returnTo}${sep}auth_error=${encodeURIComponent(code)}`, 302);
}

export async function oauthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.get('/api/auth/providers', async () => ({ providers: OAUTH_PROVIDERS.filter((p) => ctx.config.auth.oauth[p]) }));

  /** Starts a login (or, with ?link=1 while signed in, a link) through a provider: Authorization Code + PKCE + state (+ nonce). */
  app.get<{ Params: { provider: string }; Querystring: { returnTo?: string; link?: string } }>(
    '/api/auth/oauth/:provider/start',
    async (request, reply) => {
      const [provider, conf] = providerConfig(ctx, request.params.provider);
      const linking = request.query.link === '1';
      const auth = linking ? await requireAuth(ctx, request, reply) : null;
      const state = newSecret();
      const verifier = newSecret(48);
      const nonce = newSecret(16);
      await db.query('delete from oauth_flows where created_at < now() - make_interval(mins => $1)', [FLOW_TTL_MINUTES]);
      await db.query('insert into oauth_flows (state, provider, code_verifier, nonce, link_account_id, return_to) values ($1,$2,$3,$4,$5,$6)', [
        state,
        provider,
        verifier,
        nonce,
        auth?.account.id ?? null,
        safeReturnTo(request.query.returnTo, ctx.config.publicOrigin),
      ]);
      reply.setCookie(OAUTH_FLOW_COOKIE, flowBinding(state, verifier), {
        path: FLOW_COOKIE_PATH,
        httpOnly: true,
        sameSite: 'lax',
        secure: ctx.config.auth.secureCookies,
        maxAge: FLOW_TTL_MINUTES * 60,
      });
      const url = new URL(conf.authorizeUrl);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: conf.clientId,
        redirect_uri: callbackUrl(ctx, provider),
        scope: conf.scope,
        state,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        ...(provider === 'google' ? { nonce } : {}),
      }).toString();
      return reply.redirect(url.toString(), 302);
    },
  );

  app.get<{ Params: { provider: string }; Querystring: { code?: string; state?: string; error?: string } }>(
    '/api/auth/oauth/:provider/callback',
    async (request, reply) => {
      const [provider, conf] = providerConfig(ctx, request.params.provider);
      const { code, state } = request.query;
      if (!state) throw new HttpError(400, 'OAUTH_STATE_MISSING', 'The sign-in response is missing its state.');
      const { rows: found } = await db.query<{ code_verifier: string }>(
        `select code_verifier from oauth_flows where state = $1 and provider = $2 and created_at > now() - make_interval(mins => $3)`,
        [state, provider, FLOW_TTL_MINUTES],
      );
      if (!found[0]) throw new HttpError(400, 'OAUTH_STATE_INVALID', 'This sign-in link expired or was already used. Start again.');
      // Bound to the browser that started it: another browser's callback is refused before anything is exchanged.
      if (!sameBinding(request.cookies[OAUTH_FLOW_COOKIE], flowBinding(state, found[0].code_verifier))) return refuseForeignCallback(request, reply);
      reply.clearCookie(OAUTH_FLOW_COOKIE, { path: FLOW_COOKIE_PATH });
      // Single use: the flow row is consumed whatever happens next.
      const { rows } = await db.query<{ code_verifier: string; nonce: string; link_account_id: string | null; return_to: string }>(
        `delete from oauth_flows where state = $1 and provider = $2 and created_at > now() - make_interval(mins => $3)
         returning code_verifier, nonce, link_account_id, return_to`,
        [state, provider, FLOW_TTL_MINUTES],
      );
      const flow = rows[0];
      if (!flow) throw new HttpError(400, 'OAUTH_STATE_INVALID', 'This sign-in link expired or was already used. Start again.');
      if (!code) return redirectWithError(reply, flow.return_to, request.query.error ?? 'cancelled');
      const identity = await providerIdentity(provider, conf, await exchangeCode(ctx, provider, conf, code, flow.code_verifier), flow.nonce);

      if (flow.link_account_id) {
        const current = await authenticate(ctx, request, reply);
        if (current?.account.id !== flow.link_account_id) return redirectWithError(reply, flow.return_to, 'session_changed');
        const linked = await db.query(
          `insert into oauth_identities (provider, subject, account_id) values ($1, $2, $3)
           on conflict do nothing returning account_id`,
          [provider, identity.subject, flow.link_account_id],
        );
        if (!linked.rowCount) {
          const owner = await db.query<{ account_id: string }>('select account_id from oauth_identities where provider = $1 and subject = $2', [
            provider,
            identity.subject,
          ]);
          if (owner.rows[0]?.account_id !== flow.link_account_id) return redirectWithError(reply, flow.return_to, 'identity_in_use');
          return redirectWithError(reply, flow.return_to, 'provider_already_linked');
        }
        return reply.redirect(flow.return_to, 302);
      }

      // Sign in: the (provider, subject) pair decides. An e-mail match never links accounts.
      const accountId = await db.transaction(async (tx) => {
        const found = await tx.query<{ account_id: string }>('select account_id from oauth_identities where provider = $1 and subject = $2', [
          provider,
          identity.subject,
        ]);
        if (found.rows[0]) return found.rows[0].account_id;
        const id = newId('acc');
        const displayName = oneLineText(identity.name ?? '').slice(0, 60).trim() || `${provider} player`;
        const insert = (email: string, verified: boolean, onConflict: string) =>
          tx.query(
            `insert into accounts (id, email, email_verified, display_name, picture)
             select $1, $2, $3, $4, $5 where not exists (select 1 from retired_account_ids where id = $1) ${onConflict}`,
            [id, email, verified, displayName, identity.picture],
          );
        // The provider's address becomes the account's only when the provider vouches for it and no
        // other account holds it (any letter case; the unique index decides, even under a race).
        // Otherwise the account has no address: an unverified one may name someone else's mailbox.
        const vouched = identity.email && identity.emailVerified && !isReservedAddress(identity.email) ? canonicalEmail(identity.email) : null;
        const withAddress = vouched ? await insert(vouched, true, 'on conflict ((lower(email))) do nothing') : null;
        if (!withAddress?.rowCount) {
          const without = await insert(noAddress(id), false, '');
          if (without.rowCount !== 1) throw new HttpError(409, 'RETRY', 'Please try again.');
        }
        await tx.query('insert into oauth_identities (provider, subject, account_id) values ($1, $2, $3)', [provider, identity.subject, id]);
        return id;
      });
      const { session, token } = await createSession(db, accountId, ctx.config.auth.sessionTtlDays, clientSeen(request));
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(ctx, session.expiresAt));
      return reply.redirect(flow.return_to, 302);
    },
  );

  app.get('/api/auth/identities', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows } = await db.query<{ provider: string; linked_at: Date }>(
      'select provider, linked_at from oauth_identities where account_id = $1 order by provider',
      [auth.account.id],
    );
    return { identities: rows.map((r) => ({ provider: r.provider, linkedAt: r.linked_at.toISOString() })) };
  });

  app.delete<{ Params: { provider: string } }>('/api/auth/identities/:provider', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ identities: number; has_password: boolean }>(
        `select (select count(*)::int from oauth_identities where account_id = $1) as identities,
                exists (select 1 from password_credentials where account_id = $1) as has_password`,
        [auth.account.id],
      );
      const removed = await tx.query('delete from oauth_identities where account_id = $1 and provider = $2', [auth.account.id, request.params.provider]);
      if (!removed.rowCount) throw new HttpError(404, 'NOT_LINKED', `No ${request.params.provider} identity is linked.`);
      if (!rows[0]!.has_password && rows[0]!.identities <= 1) {
        throw new HttpError(409, 'LAST_SIGN_IN_METHOD', 'This is the only way to sign in to this account; add a password or another provider first.');
      }
    });
    return { ok: true };
  });
}
