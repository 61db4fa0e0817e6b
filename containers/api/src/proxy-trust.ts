import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PROXY_SECRET_HEADER } from '@yumina/config';

/**
 * Which hops in front of the server may name the client (docs/OPERATIONS.md, "Client addresses
 * behind proxies").
 *
 * TRUST_PROXY as Fastify's trustProxy: 0 trusts nothing; a hop count trusts that many hops nearest
 * the server (Fastify's own number handling trusts none, so it is a function here); a list is
 * compiled by proxy-addr. The client address (`request.ip`) is the first untrusted one.
 */
export function trustProxyOption(trust: number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (Array.isArray(trust)) return trust;
  if (trust === 0) return false;
  return (_address, hop) => hop < trust;
}

/** What a hop in front of the server says about the client, dropped from a request that did not come through the trusted hops. */
const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'forwarded'] as const;

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * With TRUST_PROXY_SECRET set, the proof that a request came through the hops TRUST_PROXY names
 * (the CDN adds PROXY_SECRET_HEADER with the secret; infra/router.ts). Runs on the raw request
 * before Fastify sees it: a request without the proof (or with a wrong one) loses its forwarded
 * headers, so it is treated as coming from its direct peer, whatever it wrote into
 * X-Forwarded-For; the proof header itself is always removed, so no handler or log ever sees it.
 * Without a secret, nothing is changed. Compared by digest in constant time.
 */
export function proxyProofCheck(secret: string | undefined): (req: IncomingMessage) => void {
  if (!secret) return () => {};
  const expected = digest(secret);
  return (req) => {
    const presented = req.headers[PROXY_SECRET_HEADER];
    const proven = typeof presented === 'string' && timingSafeEqual(digest(presented), expected);
    delete req.headers[PROXY_SECRET_HEADER];
    if (proven) return;
    for (const name of FORWARDED_HEADERS) delete req.headers[name];
  };
}
