import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const repoRoot = resolve(import.meta.dirname, '../../..');

/** Builds the web shell with Vite when no build exists yet (first `npm start`). */
export async function ensureWebBuild(webDist: string, log: { info(msg: string): void }): Promise<void> {
  const dist = resolve(repoRoot, webDist);
  if (existsSync(join(dist, 'index.html'))) return;
  log.info('Building the web app (first start)…');
  const { build } = await import('vite');
  await build({ root: join(repoRoot, 'web'), logLevel: 'warn', build: { outDir: dist, emptyOutDir: true } });
}

/**
 * Serves the built web app: hashed assets for a year, index.html revalidated, and
 * index.html for any other GET navigation that no route claimed (client-side routes).
 */
export async function serveWeb(app: FastifyInstance, webDist: string): Promise<void> {
  const root = resolve(repoRoot, webDist);
  await app.register(fastifyStatic, {
    root,
    wildcard: false,
    index: false,
    setHeaders(res, path) {
      if (path.includes(`${join(root, 'assets')}`)) res.setHeader('cache-control', 'public, max-age=31536000, immutable');
      else res.setHeader('cache-control', 'no-cache');
    },
  });
  app.get('/', (_req, reply) => reply.header('cache-control', 'no-cache').sendFile('index.html'));
}

/** Unclaimed GET navigations get the app's index.html (client-side routes); anything else is a JSON 404. */
export function webNotFound(webDist: string) {
  const index = join(resolve(repoRoot, webDist), 'index.html');
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const wantsPage = request.method === 'GET' && !path.startsWith('/api/') && (request.headers.accept ?? '').includes('text/html');
    if (wantsPage && existsSync(index)) return reply.header('cache-control', 'no-cache').sendFile('index.html');
    return reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route for ${request.method} ${path}` } });
  };
}
