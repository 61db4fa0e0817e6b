import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchPartnerAccount, type PartnerAccountRepository } from './account-match.ts';
import { createBridgeController, type SessionSnapshot } from './bridge-controller.ts';
import type { PostTarget } from './bridge-dom.ts';
import { FakeEventTarget } from './bridge-test-doubles.ts';
import { createFrameClient } from './frame-client.ts';
import { issueIdentityToken } from './identity-token.ts';
import { buildJwks } from './jwks.ts';
import { type PartnerConfig, parsePartner } from './partner-config.ts';
import { generateSigningKeyMaterial, loadSigningKeys, type SigningKeySet } from './signing-keys.ts';
import { createIdentityVerifier } from './verifier.ts';

/**
 * The whole kit in one process over real loopback HTTP: a platform server (session cookie, token
 * endpoint, JWKS), a partner API built from the kit (verifier + match helper), and the page
 * controller talking to the frame client through a postMessage hub that delivers like a browser
 * (target-origin check, event.origin and event.source set by the hub, asynchronous delivery).
 * The browser test with two real origins is separate (tests/, owned by the platform).
 */

interface HubWindow {
  origin: string;
  target: FakeEventTarget;
  proxyFor(receiver: HubWindow): PostTarget;
}

class Hub {
  window(origin: string): HubWindow {
    const target = new FakeEventTarget();
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the fake windows post through their hub
    const hub = this;
    const self: HubWindow = {
      origin,
      target,
      /** What this window holds to post to `receiver` (like iframe.contentWindow or window.parent). */
      proxyFor(receiver) {
        return {
          postMessage(message: unknown, targetOrigin: string) {
            if (targetOrigin !== '*' && targetOrigin !== receiver.origin) return; // the browser drops it
            const data = structuredClone(message);
            setTimeout(() => receiver.target.dispatch('message', { data, origin: origin, source: hub.proxyOf(receiver, self) }), 0);
          },
        };
      },
    };
    return self;
  }
  private readonly proxies = new Map<string, PostTarget>();
  /** The stable object `holder` uses to post to `target`; it is also `event.source` of target's messages to holder. */
  proxyOf(holder: HubWindow, target: HubWindow): PostTarget {
    const key = `${holder.origin}->${target.origin}`;
    if (!this.proxies.has(key)) this.proxies.set(key, holder.proxyFor(target));
    return this.proxies.get(key)!;
  }
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((error) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

const until = async (check: () => boolean, ms = 3000) => {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

let keys: SigningKeySet;
let platform: { server: Server; origin: string };
let partnerApi: { server: Server; origin: string };
let partner: PartnerConfig;
const clientOrigin = 'http://localhost:47001'; // the partner client: another site than 127.0.0.1
let signedIn: { accountId: string; sessionId: string } | null = null;
const partnerSessions: Array<{ userId: string; sub: string; sid: string }> = [];

beforeAll(async () => {
  keys = await loadSigningKeys({ current: await generateSigningKeyMaterial() });
  platform = await listen(async (req, res) => {
    if (req.url === '/api/auth/jwks') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }).end(JSON.stringify(buildJwks(keys)));
      return;
    }
    if (req.url === '/api/partners/demo/token' && req.method === 'POST') {
      if (!signedIn) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"UNAUTHENTICATED","message":"x"}}');
        return;
      }
      const issued = await issueIdentityToken({
        keys,
        account: {
          id: signedIn.accountId,
          email: `${signedIn.accountId}@example.com`,
          emailVerified: true,
          username: signedIn.accountId,
          displayName: signedIn.accountId.toUpperCase(),
          picture: null,
        },
        sessionId: signedIn.sessionId,
        identities: { google: `g-${signedIn.accountId}` },
        partner,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(issued));
      return;
    }
    res.writeHead(404).end();
  });
  partner = parsePartner({ slug: 'demo', clientOrigin, issuer: platform.origin });

  // The partner API fixture, built from the kit.
  const verifier = createIdentityVerifier({ jwksUrl: partner.jwksUrl, issuer: partner.issuer, audience: partner.audience });
  const users: Array<{ id: string; platformId: string | null; google: string | null; discord: string | null }> = [
    { id: 'legacy-1', platformId: null, google: 'g-alice', discord: null },
  ];
  const repo: PartnerAccountRepository<(typeof users)[number]> = {
    findByPlatformId: async (sub) => users.find((u) => u.platformId === sub) ?? null,
    findLegacyByProvider: async (provider, id) => users.find((u) => u.platformId === null && u[provider] === id) ?? null,
    accountId: (u) => u.id,
    create: async (identity) => {
      const user = { id: `p-${users.length + 1}`, platformId: identity.sub, google: null, discord: null };
      users.push(user);
      return user;
    },
    attachPlatformId: async (u, sub) => Object.assign(u, { platformId: sub }),
    snapshot: async () => {},
    merge: async (kept) => kept,
    log: () => {},
  };
  partnerApi = await listen(async (req, res) => {
    if (req.url !== '/auth/platform/session' || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    try {
      const identity = await verifier.verify(String(body.token));
      const { account } = await matchPartnerAccount(repo, identity);
      partnerSessions.push({ userId: account.id, sub: identity.sub, sid: identity.sid });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: `partner:${account.id}:${identity.sid}` }));
    } catch {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid token"}');
    }
  });
});

afterAll(async () => {
  await Promise.all([platform, partnerApi].map(({ server }) => new Promise((resolve) => server.close(resolve))));
});

describe('identity handoff end to end (in process, real HTTP)', () => {
  it('boots, exchanges, announces logout and another tab’s login, and ignores a third origin', async () => {
    signedIn = { accountId: 'alice', sessionId: 'sess-a' };
    const hub = new Hub();
    const page = hub.window(platform.origin);
    const frame = hub.window(clientOrigin);
    const evil = hub.window('http://127.0.0.1:1');

    const log: string[] = [];
    const controller = createBridgeController({
      window: page.target,
      frame: () => hub.proxyOf(page, frame),
      clientOrigin,
      tokenUrl: `${platform.origin}/api/partners/demo/token`,
      fetch: (url, init) => fetch(url, init),
      loadSession: async (): Promise<SessionSnapshot> =>
        signedIn ? { signedIn: true, accountId: signedIn.accountId, sessionId: signedIn.sessionId } : { signedIn: false },
      login: () => log.push('login'),
      logout: async () => {
        signedIn = null;
      },
      revalidateIntervalMs: 200,
    });
    const client = createFrameClient<string>({
      window: Object.assign(frame.target, {
        location: { href: `${clientOrigin}/play?host=platform` },
        document: { referrer: `${platform.origin}/demo` },
        parent: hub.proxyOf(frame, page),
      }),
      platformOrigin: platform.origin,
      exchangeToken: async (token) => {
        const res = await fetch(`${partnerApi.origin}/auth/platform/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token }),
        });
        if (!res.ok) throw new Error(`exchange ${res.status}`);
        return ((await res.json()) as { token: string }).token;
      },
      onSession: (s) => log.push(`session:${s}`),
      onUnauthenticated: () => log.push('guest'),
      onChanged: () => log.push('changed'),
      onUnavailable: () => log.push('unavailable'),
    });

    // Boot: token → partner API verifies through the JWKS URL → its own session; legacy Google account attached.
    await until(() => log.includes('session:partner:legacy-1:sess-a'));
    expect(partnerSessions).toEqual([{ userId: 'legacy-1', sub: 'alice', sid: 'sess-a' }]);

    // A third origin cannot make the frame act.
    const fromEvil = hub.proxyOf(evil, frame);
    fromEvil.postMessage({ type: 'platform:auth:changed' }, clientOrigin);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(log).not.toContain('changed');

    // Logout from the frame: changed, then unauthenticated.
    client.logout();
    await until(() => log.includes('guest'));
    expect(log.slice(log.indexOf('changed'))).toEqual(['changed', 'guest']);

    // Login in another tab: the page notices within its revalidation interval and the frame re-exchanges.
    const before = Date.now();
    signedIn = { accountId: 'bob', sessionId: 'sess-b' };
    await until(() => log.some((entry) => entry.startsWith('session:partner:p-')));
    expect(Date.now() - before).toBeLessThan(5000);
    expect(partnerSessions.at(-1)).toMatchObject({ sub: 'bob', sid: 'sess-b' });
    expect(log).not.toContain('unavailable');

    client.dispose();
    controller.dispose();
  });
});
