import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import { createIdentityVerifier, type IdentityVerifier, matchPartnerAccount, type PartnerAccountRepository, type PartnerRegistry, type VerifiedIdentity } from '@yumina/identity';
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

/** The demo partner's own player account, keyed by the platform's `sub` (docs/PARTNERS.md §6). */
interface DemoUser {
  id: string;
  platformId: string | null;
  displayName: string;
  picture: string | null;
}

/** A partner session (an authorization lease), scoped to the platform login it came from: (iss, sub, sid). */
interface DemoLease {
  userId: string;
  iss: string;
  sub: string;
  sid: string;
}

/**
 * The demo partner of the embedded default, on its own loopback port (a different origin and
 * site from the platform): a tiny game page built with the partner kit's frame client, and a
 * partner API whose POST /auth/platform/session verifies the identity token through the JWKS
 * URL and answers its own session token. It stands for a partner's code, not the platform's, and
 * follows the partner-side rules of docs/PARTNERS.md: the player's account is matched by `sub`
 * (§6), the name and picture are synced from the token at every session start (§7), and every
 * lease is scoped to (iss, sub, sid): ending one ends every lease of that platform login (§7).
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
  const users = new Map<string, DemoUser>();
  const leases = new Map<string, DemoLease>();
  let verifier: IdentityVerifier | undefined;

  const repo: PartnerAccountRepository<DemoUser> = {
    findByPlatformId: async (sub) => [...users.values()].find((u) => u.platformId === sub) ?? null,
    findLegacyByProvider: async () => null, // the demo has no accounts from before the platform
    accountId: (u) => u.id,
    create: async (identity) => {
      const user: DemoUser = { id: `demo-${users.size + 1}`, platformId: identity.sub, displayName: '', picture: null };
      users.set(user.id, user);
      return user;
    },
    attachPlatformId: async (u, sub) => Object.assign(u, { platformId: sub }),
    snapshot: async () => {},
    merge: async (kept) => kept,
    log: () => {},
  };
  /** §7: the platform's name and picture win at every session start (they change there at any time). */
  const syncProfile = (user: DemoUser, identity: VerifiedIdentity) => {
    user.displayName = identity.displayName;
    user.picture = identity.picture;
  };
  const view = (token: string) => {
    const lease = leases.get(token)!;
    const user = users.get(lease.userId)!;
    return { player: { id: user.id, sub: lease.sub, displayName: user.displayName, picture: user.picture }, lease: { iss: lease.iss, sub: lease.sub, sid: lease.sid } };
  };
  const leaseOf = (authorization: string | undefined) => {
    const bearer = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    return bearer && leases.has(bearer) ? bearer : undefined;
  };

  // The platform answers on localhost and on 127.0.0.1 alike: the game accepts whichever frames it.
  app.get('/partner-config.json', async () => ({ platformOrigin: options.platformOrigin, platformOrigins: loopbackTwins(options.platformOrigin) }));

  app.post<{ Body: { token?: unknown } }>('/auth/platform/session', async (request, reply) => {
    const partner = options.partners().get('demo');
    if (!partner) return reply.code(404).send({ error: { code: 'PARTNER_NOT_FOUND', message: 'demo partner not configured' } });
    verifier ??= createIdentityVerifier({ jwksUrl: partner.jwksUrl, issuer: partner.issuer, audience: partner.audience });
    const token = request.body?.token;
    if (typeof token !== 'string') return reply.code(400).send({ error: { code: 'INVALID_REQUEST', message: 'token required' } });
    let identity: VerifiedIdentity;
    try {
      identity = await verifier.verify(token);
    } catch (err) {
      return reply.code(401).send({ error: { code: 'INVALID_IDENTITY_TOKEN', message: (err as Error).message } });
    }
    const { account } = await matchPartnerAccount(repo, identity);
    syncProfile(account, identity);
    const own = randomBytes(24).toString('base64url');
    leases.set(own, { userId: account.id, iss: identity.iss, sub: identity.sub, sid: identity.sid });
    return { token: own, ...view(own) };
  });

  app.get('/me', async (request, reply) => {
    const token = leaseOf(request.headers.authorization);
    if (!token) return reply.code(401).send({ error: { code: 'UNAUTHENTICATED', message: 'no partner session' } });
    return view(token);
  });

  // The platform login behind a lease ended (the frame heard `changed`): every lease of that
  // (iss, sub, sid) ends with it, not only the one presented.
  app.post('/auth/platform/end', async (request, reply) => {
    const token = leaseOf(request.headers.authorization);
    if (!token) return reply.code(401).send({ error: { code: 'UNAUTHENTICATED', message: 'no partner session' } });
    const { iss, sub, sid } = leases.get(token)!;
    let ended = 0;
    for (const [key, lease] of leases) {
      if (lease.iss === iss && lease.sub === sub && lease.sid === sid) {
        leases.delete(key);
        ended++;
      }
    }
    return { ended };
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
