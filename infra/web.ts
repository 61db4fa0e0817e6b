import { api } from './api';
import { functions } from './functions';
import { edgeRouting, hasParameters, partnerSlugs, type Route, routeTable } from './routes';
import { router } from './router';
import { secrets } from './secrets';

const backend = (target: Route['target']) => (target.kind === 'function' ? functions[target.function].url : api.url);

/**
 * The route table on the router: each path prefix to the container or its function; patterns with
 * a `:name` segment through their marker routes (infra/routes.ts edgeRouting, whose viewer-request
 * code infra/router.ts installs); the rest is the web app.
 */
for (const route of routeTable()) {
  if (route.target.kind !== 'static' && !hasParameters(route.pattern)) router.route(route.pattern, backend(route.target));
}
for (const marker of edgeRouting(routeTable()).markers) router.route(marker.pattern, backend(marker.target), { rewrite: marker.rewrite });

/** Each configured partner's landing page `/<partner>` goes to the container; the slugs come from the Partners secret. */
export const partnerRoutes = secrets.partners.value.apply((json) => {
  const fixed = new Set(routeTable().map((r) => r.pattern));
  const added = routeTable(partnerSlugs(json)).filter((r) => !fixed.has(r.pattern));
  for (const route of added) router.route(route.pattern, backend(route.target));
  return added.map((r) => r.pattern);
});

/**
 * How the static site's files are cached, as the container serves them in local mode
 * (containers/api/src/web.ts): hashed build output (assets/) immutable for a year; index.html and
 * every other unhashed file revalidated on each use. The build's .br/.gz copies stay out of the
 * bucket: CloudFront compresses at the edge (infra/router.ts).
 */
export const ASSET_CACHE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';
const PRECOMPRESSED = ['**/*.br', '**/*.gz'];
export const webFileOptions = [
  { files: '**', ignore: PRECOMPRESSED, cacheControl: REVALIDATE },
  { files: 'assets/**', ignore: PRECOMPRESSED, cacheControl: ASSET_CACHE },
];

/** The static web app; any path without a file (deep links such as /play/<id>) is answered by index.html. */
export const web = new sst.aws.StaticSite('Web', {
  path: 'web',
  build: { command: 'npm run build', output: 'dist' },
  errorPage: 'index.html',
  assets: { fileOptions: webFileOptions },
  router: { instance: router },
});
