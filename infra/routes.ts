/**
 * The route table: which backend answers a path of the platform's one origin in production. The
 * SST Router (infra/router.ts, infra/web.ts) and the local production topology
 * (scripts/topology.ts) are both built from it, so what is rehearsed on one machine is what
 * CloudFront routes.
 *
 * Matching: the longest pattern wins, and a pattern matches the path itself or the path below it
 * at a segment boundary (`/api` matches `/api` and `/api/x`, not `/apix`). A `:name` segment
 * matches any one segment (`/api/worlds/:id/updates` matches `/api/worlds/w1/updates/u2`). The
 * Router itself matches path prefixes only: a path whose best pattern has a `:name` segment is
 * sent on by the Router's viewer-request code (edgeRouting below), which prefixes it with its
 * target's marker route; the marker route strips the prefix again before the request leaves.
 * No SST globals here: plain data and functions.
 */

/**
 * The design card's stateless handlers, every one a Lambda (infra/functions.ts): its path, the
 * folder under functions/ whose handler.ts `handler` export it runs (bundled by `npm run build`
 * into dist/functions/<folder>/handler.mjs), and the settings it cannot start without, which
 * infra/functions.ts links and its handler.ts `SETTINGS` requires (tests/infra.test.ts holds
 * the two lists equal). Every one requires TRUST_PROXY_SECRET: a Function URL is public, and a
 * function answers only requests that carry the Router's proof (infra/proxy-proof.ts).
 */
export const FUNCTION_ROUTES = [
  { pattern: '/api/partners/:partner/config', function: 'partnerConfig', folder: 'partner-config', settings: ['PARTNERS', 'TRUST_PROXY_SECRET'] },
  {
    pattern: '/api/partners/:partner/token',
    function: 'partnerToken',
    folder: 'partner-token',
    settings: ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'IDENTITY_SIGNING_KEY', 'PARTNERS', 'TRUST_PROXY_SECRET'],
  },
  { pattern: '/api/auth/jwks', function: 'jwks', folder: 'jwks', settings: ['IDENTITY_SIGNING_KEY', 'TRUST_PROXY_SECRET'] },
  // GET, POST and PATCH of the update records; the live overview stream below stays in the container.
  {
    pattern: '/api/worlds/:id/updates',
    function: 'worldUpdates',
    folder: 'world-updates',
    settings: ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'TRUST_PROXY_SECRET'],
  },
  { pattern: '/api/worlds/validate', function: 'worldValidate', folder: 'world-validate', settings: ['TRUST_PROXY_SECRET'] },
] as const;

export type FunctionName = (typeof FUNCTION_ROUTES)[number]['function'];
export type FunctionRoute = (typeof FUNCTION_ROUTES)[number];

/** Where `npm run build` puts a function's bundle (SST's `bundle`), and the handler in it. */
export const functionBundle = (route: Pick<FunctionRoute, 'folder'>) => `dist/functions/${route.folder}`;
export const BUNDLE_HANDLER = 'handler.handler';

/**
 * What the container serves in production: the API but the function paths, both health
 * endpoints, /metrics (answered only with METRICS_TOKEN), game delivery, the live overview stream
 * of update records (it holds its connections), and each configured partner's landing page
 * `/<partner>` (added by routeTable; a disabled partner's page says it is not available yet).
 */
export const SERVICE_PATTERNS = ['/api', '/health', '/metrics', '/games', '/api/worlds/:id/updates/events'] as const;

/** Client-side routes of the web app: the static site answers them (and any unknown path) with index.html. */
export const DEEP_LINKS = ['/play/', '/studio/', '/worlds/', '/app/', '/library', '/login', '/signup', '/forgot-password', '/reset-password', '/verify-email', '/adventure/', '/admin/'] as const;

export type RouteTarget = { kind: 'service' } | { kind: 'function'; function: FunctionName } | { kind: 'static' };
export interface Route {
  pattern: string;
  target: RouteTarget;
}

/** Top-level names a partner slug may not take: they belong to the API, the web app or its files. */
const RESERVED = new Set([
  ...SERVICE_PATTERNS.map((p) => p.split('/')[1]!),
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

/** True when the pattern has a `:name` segment (the Router cannot match it by prefix). */
export const hasParameters = (pattern: string) => pattern.split('/').some((s) => s.startsWith(':'));

/** The regular expression (source) of a pattern: its segments, each `:name` one segment, then the end or a `/`. */
export function patternSource(pattern: string): string {
  if (pattern === '/') return '^/';
  const segments = pattern
    .split('/')
    .slice(1)
    .map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return `^/${segments.join('/')}(?:/|$)`;
}

/** The Router's matching rule: the longest pattern that matches the path at a segment boundary. */
export function matchRoute(routes: readonly Route[], path: string): Route {
  let best: Route | undefined;
  for (const r of routes) {
    if (new RegExp(patternSource(r.pattern)).test(path) && (!best || r.pattern.length > best.pattern.length)) best = r;
  }
  if (!best) throw new Error(`no route for ${path}`);
  return best;
}

/** The prefix under which the Router's viewer-request code sends a path on to a target it cannot match by prefix. */
export const MARKER_PREFIX = '/_route/';
const targetKey = (target: RouteTarget) => (target.kind === 'function' ? target.function : target.kind);

export interface EdgeRouting {
  /** JavaScript for the Router's `edge.viewerRequest.injection` (CloudFront Functions, ES5). */
  injection: string;
  /** The marker routes to add to the Router: each strips its prefix before forwarding to its target. */
  markers: { pattern: string; target: RouteTarget; rewrite: { regex: string; to: string } }[];
}

/**
 * The Router's part for patterns with `:name` segments: viewer-request code that finds the best
 * route of the whole table for the request's path (matchRoute's rule) and, when that route has a
 * `:name` segment, moves the path under the target's marker route; the Router's own prefix
 * matching then picks the marker route, whose rewrite gives the path back. Paths that already
 * start with the marker prefix are refused (404), so nobody reaches a target by naming its marker.
 */
export function edgeRouting(routes: readonly Route[]): EdgeRouting {
  const table = routes.map((r) => ({
    source: patternSource(r.pattern),
    length: r.pattern.length,
    marker: hasParameters(r.pattern) ? `${MARKER_PREFIX}${targetKey(r.target)}` : '',
  }));
  const markers = new Map<string, EdgeRouting['markers'][number]>();
  for (const r of routes) {
    if (!hasParameters(r.pattern)) continue;
    const pattern = `${MARKER_PREFIX}${targetKey(r.target)}`;
    markers.set(pattern, { pattern, target: r.target, rewrite: { regex: `^${pattern}(/.*)$`, to: '$1' } });
  }
  const injection = [
    `var yuminaRoutes = ${JSON.stringify(table)};`,
    'var yuminaUri = event.request.uri;',
    `if (yuminaUri.indexOf(${JSON.stringify(MARKER_PREFIX)}) === 0 || yuminaUri === ${JSON.stringify(MARKER_PREFIX.slice(0, -1))}) return { statusCode: 404, statusDescription: 'Not Found' };`,
    'var yuminaBest = null;',
    'for (var yuminaI = 0; yuminaI < yuminaRoutes.length; yuminaI++) {',
    '  var yuminaRoute = yuminaRoutes[yuminaI];',
    '  if (new RegExp(yuminaRoute.source).test(yuminaUri) && (yuminaBest === null || yuminaRoute.length > yuminaBest.length)) yuminaBest = yuminaRoute;',
    '}',
    'if (yuminaBest !== null && yuminaBest.marker) event.request.uri = yuminaBest.marker + yuminaUri;',
  ].join('\n');
  return { injection, markers: [...markers.values()] };
}
