/**
 * The route table: which backend answers a path of the platform's one origin in production. The
 * SST Router (infra/web.ts) and the local production topology (scripts/topology.ts) are both built
 * from it, so what is rehearsed on one machine is what CloudFront routes.
 *
 * Matching is the Router's: the longest pattern wins, and a pattern matches the path itself or the
 * path below it at a segment boundary (`/api` matches `/api` and `/api/x`, not `/apix`).
 * No SST globals here: plain data and functions.
 */

/** The Lambdas of functions/ that production runs as functions, by the name infra/functions.ts gives them. */
export const FUNCTION_ROUTES = [
  { pattern: '/api/auth/jwks', function: 'jwks', handler: 'functions/jwks/handler.handler' },
  { pattern: '/api/worlds/validate', function: 'worldValidate', handler: 'functions/world-validate/handler.handler' },
] as const;

export type FunctionName = (typeof FUNCTION_ROUTES)[number]['function'];

/**
 * What the container serves in production: the API (including partner-config, partner-token and
 * world-updates, which need the login session), both health endpoints, /metrics (answered only
 * with METRICS_TOKEN), game delivery, and each configured partner's landing page `/<partner>`
 * (added by routeTable; a disabled partner's page says it is not available yet).
 */
export const SERVICE_PATTERNS = ['/api', '/health', '/metrics', '/games'] as const;

/** Client-side routes of the web app: the static site answers them (and any unknown path) with index.html. */
export const DEEP_LINKS = ['/play/', '/studio/', '/worlds/', '/app/', '/library', '/login', '/signup', '/forgot-password', '/reset-password', '/verify-email', '/adventure/', '/admin/'] as const;

export type RouteTarget = { kind: 'service' } | { kind: 'function'; function: FunctionName } | { kind: 'static' };
export interface Route {
  pattern: string;
  target: RouteTarget;
}

/** Top-level names a partner slug may not take: they belong to the API, the web app or its files. */
const RESERVED = new Set([
  ...SERVICE_PATTERNS.map((p) => p.slice(1)),
  ...DEEP_LINKS.map((p) => p.replace(/\//g, '')),
  'assets',
  'index.html',
  'landing.html',
  'partner-demo.html',
  'dev',
]);

/** Slugs of the partners in a PARTNERS value (JSON: one partner object or an array of them). */
export function partnerSlugs(partnersJson: string | undefined): string[] {
  if (!partnersJson || partnersJson === 'none') return [];
  const value: unknown = JSON.parse(partnersJson);
  const list = Array.isArray(value) ? value : [value];
  return list.map((p) => {
    const slug = (p as { slug?: unknown } | null)?.slug;
    if (typeof slug !== 'string' || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(slug)) throw new Error(`PARTNERS: invalid slug ${JSON.stringify(slug)}`);
    return slug;
  });
}

/** Every route, most specific first; the last one sends everything else to the static web app. */
export function routeTable(partners: readonly string[] = []): Route[] {
  for (const slug of partners) {
    if (RESERVED.has(slug)) throw new Error(`partner slug ${JSON.stringify(slug)} would shadow /${slug} of the platform`);
  }
  const routes: Route[] = [
    ...FUNCTION_ROUTES.map((r) => ({ pattern: r.pattern, target: { kind: 'function' as const, function: r.function } })),
    ...SERVICE_PATTERNS.map((pattern) => ({ pattern, target: { kind: 'service' as const } })),
    ...partners.map((slug) => ({ pattern: `/${slug}`, target: { kind: 'service' as const } })),
    { pattern: '/', target: { kind: 'static' } },
  ];
  return routes.sort((a, b) => b.pattern.length - a.pattern.length);
}

/** The Router's matching rule: the longest pattern that matches the path at a segment boundary. */
export function matchRoute(routes: readonly Route[], path: string): Route {
  let best: Route | undefined;
  for (const r of routes) {
    const p = r.pattern;
    const matches = path.startsWith(p) && (path === p || p.endsWith('/') || path[p.length] === '/');
    if (matches && (!best || p.length > best.pattern.length)) best = r;
  }
  if (!best) throw new Error(`no route for ${path}`);
  return best;
}
