import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { PartnerRegistry } from '@yumina/identity';
import type { FastifyInstance } from 'fastify';
import { repoRoot } from '../web.ts';

/**
 * GET /<partner>: the landing page that frames the partner client. The page itself is static
 * (web/landing.html); it reads the partner's public config and the `path` parameter (validated by
 * the kit's safeLandingPath) in the browser. The Content-Security-Policy allows framing only the
 * partner's client origin (and its configured dev origin).
 */
export async function landingRoutes(app: FastifyInstance, partners: PartnerRegistry, webDist: string): Promise<void> {
  const root = resolve(repoRoot, webDist);
  for (const partner of partners.values()) {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(partner.slug)) continue;
    const frames = [partner.clientOrigin, partner.devOrigin].filter(Boolean).join(' ');
    const csp = [
      "default-src 'self'",
      `frame-src ${frames}`,
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: https:",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
    // The page applies §2.6 to `path` itself (an invalid one, U+0000 included, falls back to `/`),
    // so the request-wide query check must not answer an error page first.
    app.get(`/${partner.slug}`, { config: { ownQueryRules: true } }, async (_request, reply) => {
      // Read here rather than through @fastify/static, which only local mode registers.
      const page = await readFile(join(root, 'landing.html')).catch(() => undefined);
      if (!page) return reply.code(503).send({ error: { code: 'WEB_NOT_BUILT', message: 'The web app is not built.' } });
      return reply
        .header('content-security-policy', csp)
        .header('cache-control', 'no-cache')
        .header('referrer-policy', 'strict-origin-when-cross-origin')
        .type('text/html; charset=utf-8')
        .send(page);
    });
  }
}
