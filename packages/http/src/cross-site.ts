import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The request's own origin as it reached this server: the socket's scheme and the Host header.
 * Never X-Forwarded-Host/-Proto, which any client can write and a proxy may pass through; behind a
 * TLS-terminating proxy the public origin is the configured one (PUBLIC_ORIGIN, in `allowedOrigins`).
 */
export function requestOrigin(request: FastifyRequest): string {
  const encrypted = (request.raw.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  return `${encrypted ? 'https' : 'http'}://${request.headers.host ?? ''}`;
}

/**
 * True when a browser tells us the request comes from another site: Sec-Fetch-Site
 * "cross-site", or an Origin (including the opaque "null") that is neither ours nor allowed.
 * Requests without either header (non-browser clients) are not cross-site.
 */
export function isCrossSite(request: FastifyRequest, allowedOrigins: readonly string[] = []): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  if (origin === 'null') return true;
  return origin !== requestOrigin(request) && !allowedOrigins.includes(origin);
}

/**
 * The one guard for state-changing, cookie-authenticated routes: a cross-site browser request
 * carrying the session cookie is refused with 403 before any route runs.
 */
export function crossSiteGuard(options: { cookieName: string; allowedOrigins: readonly string[] }) {
  return (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    const refused =
      !SAFE_METHODS.has(request.method) &&
      (request.headers.cookie ?? '').includes(`${options.cookieName}=`) &&
      isCrossSite(request, options.allowedOrigins);
    done(refused ? new HttpError(403, 'CROSS_SITE_REQUEST', 'Cross-site requests may not change anything here.') : undefined);
  };
}
