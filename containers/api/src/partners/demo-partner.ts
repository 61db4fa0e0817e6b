import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import { createIdentityVerifier, type IdentityVerifier, type PartnerRegistry } from '@yumina/identity';
import Fastify, { type FastifyInstance } from 'fastify';
import { repoRoot } from '../web.ts';

/** A loopback origin and its twin (localhost ⇄ 127.0.0.1); any other origin alone. */
export function loopbackTwins(origin: string): string[] {
  const url = new URL(origin);
  const twin = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname === '127.0.0.1' ? 'localhost' : null;
  if (!twin) return [url.origin];
  const other = new URL(url.origin);
  other.hostname = twin;
  return [url.origin, other.origin];
}

/**
 * The demo partner of the embedded default, on its own loopback port (a different origin and
 * site from the platform): a tiny game page built with the partner kit's frame client, and a
 * partner API whose POST /auth/platform/session verifies the identity token through the JWKS
 * URL and answers its own session token. It stands for a partner's code, not the platform's.
 */
export async function startDemoPartner(options: {
  webDist: string;
  host: string;
  port: number;
  platformOrigin: string;
  partners: () => PartnerRegistry;
}): Promise<{ app: FastifyInstance; origin: string }> {
  const app = Fastify({ logger: false });
  const root = resolve(repoRoot, options.webDist);
  const sessions = new Map<string, { sub: string; displayName: string; sid: string }>();
  let verifier: IdentityVerifier | undefined;

  // The platform answers on localhost and on 127.0.0.1 alike: the game accepts whichever frames it.
  app.get('/partner-config.json', async () => ({ platformOrigin: options.platformOrigin, platformOrigins: loopbackTwins(options.platformOrigin) }));

  app.post<{ Body: { token?: unknown } }>('/auth/platform/session', async (request, reply) => {
    const partner = options.partners().get('demo');
    if (!partner) return reply.code(404).send({ error: { code: 'PARTNER_NOT_FOUND', message: 'demo partner not configured' } });
    verifier ??= createIdentityVerifier({ jwksUrl: partner.jwksUrl, issuer: partner.issuer, audience: partner.audience });
    const token = request.body?.token;
    if (typeof token !== 'string') return reply.code(400).send({ error: { code: 'INVALID_REQUEST', message: 'token required' } });
    try {
      const identity = await verifier.verify(token);
      const own = randomBytes(24).toString('base64url');
      sessions.set(own, { sub: identity.sub, sid: identity.sid, displayName: identity.displayName });
      return { token: own, player: sessions.get(own) };
    } catch (err) {
      return reply.code(401).send({ error: { code: 'INVALID_IDENTITY_TOKEN', message: (err as Error).message } });
    }
  });

  app.get('/me', async (request, reply) => {
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const session = bearer ? sessions.get(bearer) : undefined;
    if (!session) return reply.code(401).send({ error: { code: 'UNAUTHENTICATED', message: 'no partner session' } });
    return session;
  });

  if (existsSync(join(root, 'partner-demo.html'))) {
    await app.register(fastifyStatic, { root: join(root, 'assets'), prefix: '/assets/', index: false });
    // Every other path is the game page (the landing page frames `/<path>?host=platform`).
    app.setNotFoundHandler((request, reply) => {
      if (request.method !== 'GET') return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'Not found' } });
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').sendFile('partner-demo.html', root);
    });
  }
  // The demo is a convenience: if its port is taken, any free port will do.
  const address = await app.listen({ port: options.port, host: options.host }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EADDRINUSE' || options.port === 0) throw err;
    return app.listen({ port: 0, host: options.host });
  });
  const port = new URL(address).port;
  return { app, origin: `http://127.0.0.1:${port}` };
}
