import { type Authenticated, createSession, type LoginSession, SESSION_COOKIE } from '@yumina/accounts';
import type { Queryable } from '@yumina/db';
import { HttpError, type LoginSettings, requestLogin, sendRenewedCookie as sendCookie, sessionCookieOptions as cookieOptions } from '@yumina/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';

/** The container's login settings for @yumina/http's requestLogin (the functions use the same). */
export const loginSettings = (ctx: AppContext): LoginSettings => ({ db: ctx.db.primary, sessionTtlDays: ctx.config.auth.sessionTtlDays, secureCookies: ctx.config.auth.secureCookies });

export function sessionCookieOptions(ctx: AppContext, expires: Date) {
  return cookieOptions(ctx.config.auth.secureCookies, expires);
}

/**
 * The login cookie again with a renewed expiry (sliding expiry), as a header of the reply: an event
 * stream (a turn, a regeneration, the update overview) takes the response over before the cookie
 * plugin's onSend hook would write a `setCookie`, and sends the reply's headers with its own
 * (../event-stream.ts).
 */
export function sendRenewedCookie(ctx: AppContext, reply: FastifyReply, token: string, expires: Date): void {
  sendCookie(reply, token, expires, ctx.config.auth.secureCookies);
}

/** The answer to a request that needs a login and has none (or one that ended or expired). */
export const notSignedIn = () => new HttpError(401, 'UNAUTHENTICATED', 'Sign in to continue.');

/**
 * The current login (account + session) of a request, or null; resolved once per request (@yumina/http
 * requestLogin, which records the address it is used from), through `db` when given (a live update
 * stream reads through the stream connections), else the primary pool.
 */
export function authenticate(ctx: AppContext, request: FastifyRequest, reply?: FastifyReply, db?: Queryable): Promise<Authenticated | null> {
  return requestLogin(request, reply, loginSettings(ctx), db);
}

/** The auth guard: the current login, or a 401. */
export async function requireAuth(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<Authenticated> {
  const auth = await authenticate(ctx, request, reply);
  if (!auth) throw notSignedIn();
  return auth;
}

/** The device and address a request comes from, as a login records them. */
export const clientSeen = (request: FastifyRequest) => ({ address: request.ip, userAgent: request.headers['user-agent'] });

/** Signs this browser in to the account: a new login session and its cookie. */
export async function startLogin(ctx: AppContext, reply: FastifyReply, accountId: string, request: FastifyRequest): Promise<LoginSession> {
  const { session, token } = await createSession(ctx.db.primary, accountId, ctx.config.auth.sessionTtlDays, clientSeen(request));
  reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(ctx, session.expiresAt));
  return session;
}
