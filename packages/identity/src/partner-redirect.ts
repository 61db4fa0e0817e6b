import { LANDING_PATH_MAX_LENGTH, safeLandingPath } from './landing-path.ts';

/**
 * Item 6e: the redirect rule a partner runs on its own public site. Every URL except the embed
 * for another portal and the partner client origin answers 301 to
 * `{base}/<partner>?path=<URL-encoded original path and query>`. Browser-safe, framework-free.
 */
export interface PartnerRedirectRule {
  /** Platform origin, e.g. https://yumina.example (a trailing slash is ignored). */
  platformBase: string;
  /** Partner slug on the platform, e.g. `demo`. */
  partner: string;
  /** Origin of the partner client (the framed game); requests to it are never redirected. */
  clientOrigin: string;
  /** True for the URLs that embed the game in another portal; they are never redirected. */
  isPortalEmbed?: (url: URL) => boolean;
}

export interface PartnerRedirect {
  status: 301;
  location: string;
}

/** Returns the 301 to answer for `requestUrl` (absolute), or null when the request is served as is. */
export function partnerRedirect(rule: PartnerRedirectRule, requestUrl: string | URL): PartnerRedirect | null {
  const url = typeof requestUrl === 'string' ? new URL(requestUrl) : requestUrl;
  if (url.origin === new URL(rule.clientOrigin).origin) return null;
  if (rule.isPortalEmbed?.(url)) return null;
  return { status: 301, location: partnerLandingUrl(rule.platformBase, rule.partner, url.pathname + url.search) };
}

/** `{base}/<partner>?path=<encoded>`; a path the landing page would refuse is left out (the page then uses `/`). */
export function partnerLandingUrl(platformBase: string, partner: string, pathAndQuery: string): string {
  const base = new URL(platformBase).origin;
  const landing = `${base}/${encodeURIComponent(partner)}`;
  const path = pathAndQuery.length <= LANDING_PATH_MAX_LENGTH ? safeLandingPath(pathAndQuery) : '/';
  return path === '/' ? landing : `${landing}?path=${encodeURIComponent(path)}`;
}
