import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import { HOST_PAGE_HEADER_POLICY, pageFramingHeaders } from '@yumina/sandbox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const repoRoot = resolve(import.meta.dirname, '../../..');

/**
 * Every HTML answer of the server (the shell, its files, the landing pages, sign-in pages, game
 * pages) says who may frame it: `frame-ancestors 'self'` and `X-Frame-Options: SAMEORIGIN` unless
 * the page's own policy names its frame-ancestors (@yumina/sandbox pageFramingHeaders). Another
 * site cannot show the platform's pages in a frame of its own (clickjacking).
 */
export function installFramePolicy(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    if (!/^text\/html/i.test(type)) return payload;
    const existing = reply.getHeader('content-security-policy');
    const { policy, frameOptions } = pageFramingHeaders(typeof existing === 'string' ? existing : undefined);
    reply.header('content-security-policy', policy);
    if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', frameOptions);
    return payload;
  });
}

/** Builds the web shell with Vite when no build exists yet (first `npm start`). */
export async function ensureWebBuild(webDist: string, log: { info(msg: string): void }): Promise<void> {
  const dist = resolve(repoRoot, webDist);
  if (existsSync(join(dist, 'index.html'))) return;
  log.info('Building the web app (first start)…');
  const { build } = await import('vite');
  await build({ root: join(repoRoot, 'web'), logLevel: 'warn', build: { outDir: dist, emptyOutDir: true } });
}

/** Hashed build output (web/dist/assets/<name>-<hash>.<ext>): a new build writes new names, so a year's caching is safe. */
export const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** Files the build writes compressed copies of (web/vite.config.ts), as served (the copy's own name) or asked for. */
const TEXT_FILE = /\.(js|mjs|css|html|svg|json|txt|webmanifest)(\.br|\.gz)?$/;
/** The shell and other unhashed files: a cache keeps them but asks (ETag / Last-Modified) before each use. */
export const REVALIDATE = 'no-cache';

/**
 * Serves the built web app: hashed assets immutable for a year, index.html (and every other
 * unhashed file) revalidated, and index.html for any other GET navigation that no route claimed
 * (client-side routes). The build writes a brotli and a gzip copy beside every text file
 * (web/vite.config.ts), which @fastify/static sends to a client that accepts one, with
 * `Vary: Accept-Encoding`; nothing is compressed while a request waits. The shell goes out with
 * the host page's Content-Security-Policy (@yumina/sandbox host-policy.ts), which says that only
 * the platform's own pages may frame it; every other HTML page gets that part from
 * installFramePolicy (a compressed copy of the shell too: the hook reads the content type, which
 * is the page's whatever its encoding).
 */
export async function serveWeb(app: FastifyInstance, webDist: string): Promise<void> {
  const root = resolve(repoRoot, webDist);
  const assets = `${join(root, 'assets')}/`;
  await app.register(fastifyStatic, {
    root,
    wildcard: false,
    index: false,
    preCompressed: true,
    // @fastify/static's own cache-control (max-age=0) would overwrite the one set here.
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('cache-control', path.startsWith(assets) ? ASSET_CACHE : REVALIDATE);
      // A text file may go out as its .br or .gz copy, chosen by Accept-Encoding: caches must key on it.
      if (TEXT_FILE.test(path)) res.setHeader('vary', 'accept-encoding');
    },
  });
  app.get('/', (_req, reply) => reply.header('content-security-policy', HOST_PAGE_HEADER_POLICY).sendFile('index.html'));
  // Browsers ask for /favicon.ico whatever the page says; the one icon is an SVG.
  app.get('/favicon.ico', (_req, reply) => reply.type('image/svg+xml').sendFile('favicon.svg'));
}

/**
 * The web app's own routes (web/src/routes.tsx); any other page path answers 404 with the app,
 * which shows its "not found" page.
 */
const APP_ROUTES = [
  /^\/$/,
  /^\/(login|signup|library|studio|inbox|forgot-password|reset-password|verify-email|complete-signup)\/?$/,
  /^\/app\/(settings|models|inbox)\/?$/,
  /^\/(play|worlds)\/[^/]+\/?$/,
  /^\/studio\/[^/]+(\/character)?\/?$/,
  /^\/admin\/(reviews|credits)(\/[^/]+)?\/?$/,
  /^\/adventure\/demo\/?$/,
  /^\/dev\/sandbox\/?$/,
];
export const isAppRoute = (path: string) => APP_ROUTES.some((r) => r.test(path));

/** Client-side pages for development only: a server in production mode answers them with 404. */
export const DEVELOPMENT_PAGES = /^\/dev(\/|$)/;

/**
 * Unclaimed GET navigations get the app's index.html (client-side routes); anything else is a JSON
 * 404. In production (`env` = production) the development pages (/dev/…) are a 404 too.
 */
export function webNotFound(webDist: string, env = 'development') {
  const index = join(resolve(repoRoot, webDist), 'index.html');
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (env === 'production' && DEVELOPMENT_PAGES.test(path)) {
      return reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${path}` } });
    }
    const wantsPage = request.method === 'GET' && !path.startsWith('/api/') && (request.headers.accept ?? '').includes('text/html');
    if (wantsPage && existsSync(index)) {
      return reply.code(isAppRoute(path) ? 200 : 404).header('content-security-policy', HOST_PAGE_HEADER_POLICY).sendFile('index.html');
    }
    return reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${path}` } });
  };
}
