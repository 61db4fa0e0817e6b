import type { Queryable } from '@yumina/db';
import { HttpError } from '@yumina/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { type Authenticated, createSession, type LoginSession, resolveSession, SESSION_COOKIE } from './sessions.ts';

const resolved = new WeakMap<FastifyRequest, Promise<Authenticated | null>>();

export function sessionCookieOptions(ctx: AppContext, expires: Date) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: ctx.config.auth.secureCookies, expires };
}

/**
 * The login cookie again with a renewed expiry (sliding expiry), as a header of the reply: an event
 * stream (a turn, a regeneration, the update overview) takes the response over before the cookie
 * plugin's onSend hook would write a `setCookie`, and sends the reply's headers with its own
 * (../event-stream.ts).
 */
export function sendRenewedCookie(ctx: AppContext, reply: FastifyReply, token: string, expires: Date): void {
  reply.header('set-cookie', reply.server.serializeCookie(SESSION_COOKIE, token, sessionCookieOptions(ctx, expires)));
}

/** The answer to a request that needs a login and has none (or one that ended or expired). */
export const notSignedIn = () => new HttpError(401, 'UNAUTHENTICATED', 'Sign in to continue.');

/**
 * The current login (account + session) of a request, or null; resolved once per request, through
 * `db` when given (a live update stream reads through the stream connections), else the primary pool.
 */
export function authenticate(ctx: AppContext, request: FastifyRequest, reply?: FastifyReply, db: Queryable = ctx.db.primary): Promise<Authenticated | null> {
  let pending = resolved.get(request);
  if (!pending) {
    const token = request.cookies[SESSION_COOKIE];
    pending = token ? resolveSession(db, token, ctx.config.auth.sessionTtlDays, { address: request.ip }) : Promise.resolve(null);
    resolved.set(request, pending);
    if (token && reply) {
      pending.then((auth) => {
        // Sliding expiry: the same token (and so the same sid) with a later expiry.
        if (auth?.renewed) sendRenewedCookie(ctx, reply, token, auth.session.expiresAt);
      }, () => {});
    }
  }
  return pending;
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
