import { type Authenticated, resolveSession, SESSION_COOKIE } from '@yumina/accounts';
import type { Queryable } from '@yumina/db';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The platform login of a request, wherever it is served: the container and the functions that
 * need a login (partner-token, world-updates) read the login cookie, look its session up in
 * PostgreSQL (@yumina/accounts resolveSession, with sliding expiry) and send the renewed cookie
 * back the same way. The cookie is read from @fastify/cookie's parse when that plugin is
 * registered (the container), else from the Cookie header (a function). The login records the
 * client address it is used from (`request.ip`: derived through TRUST_PROXY, with the Router's
 * proof where TRUST_PROXY_SECRET is set; ./proxy-trust.ts), which Settings lists beside it.
 */
export interface LoginSettings {
  /** The primary pool (login_sessions and accounts). */
  db: Queryable;
  sessionTtlDays: number;
  /** Cookies are Secure when the platform is served over https (config.auth.secureCookies). */
  secureCookies: boolean;
}

/** The login cookie's attributes (set at login, sent again on renewal). */
export function sessionCookieOptions(secure: boolean, expires: Date) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure, expires };
}

/** The Set-Cookie value of the login cookie with `token` until `expires`. */
export function sessionCookie(token: string, expires: Date, secure: boolean): string {
  return stringifySetCookie({ name: SESSION_COOKIE, value: token, ...sessionCookieOptions(secure, expires) });
}

/** The login cookie's token of a request, if any. */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const parsed = (request as { cookies?: Record<string, string | undefined> }).cookies;
  if (parsed) return parsed[SESSION_COOKIE] || undefined;
  const header = request.headers.cookie;
  return header ? parseCookie(header)[SESSION_COOKIE] || undefined : undefined;
}

/**
 * The login cookie again with a renewed expiry (sliding expiry), as a header of the reply: an event
 * stream takes the response over before a cookie plugin's onSend hook would write a `setCookie`,
 * and sends the reply's headers with its own.
 */
export function sendRenewedCookie(reply: FastifyReply, token: string, expires: Date, secure: boolean): void {
  reply.header('set-cookie', sessionCookie(token, expires, secure));
}

const resolved = new WeakMap<FastifyRequest, Promise<Authenticated | null>>();

/**
 * The current login (account + session) of a request, or null; resolved once per request, through
 * `db` when given (the container's live update streams read through their own connections), else
 * `settings.db`.
 */
export function requestLogin(request: FastifyRequest, reply: FastifyReply | undefined, settings: LoginSettings, db: Queryable = settings.db): Promise<Authenticated | null> {
  let pending = resolved.get(request);
  if (!pending) {
    const token = sessionTokenOf(request);
    pending = token ? resolveSession(db, token, settings.sessionTtlDays, { address: request.ip }) : Promise.resolve(null);
    resolved.set(request, pending);
    if (token && reply) {
      pending.then(
        (auth) => {
          // Sliding expiry: the same token (and so the same sid) with a later expiry.
          if (auth?.renewed) sendRenewedCookie(reply, token, auth.session.expiresAt, settings.secureCookies);
        },
        () => {},
      );
    }
  }
  return pending;
}
