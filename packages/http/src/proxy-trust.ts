import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type Config, PROXY_SECRET_HEADER } from '@yumina/config';

/**
 * Which hops in front of the server may name the client (docs/OPERATIONS.md, "Client addresses
 * behind proxies"), for the container and the functions alike.
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

/** Whether `presented` is the proof `secret` (by digest, in constant time). */
function proves(presented: unknown, expected: Buffer): boolean {
  return typeof presented === 'string' && timingSafeEqual(digest(presented), expected);
}

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
    const proven = proves(req.headers[PROXY_SECRET_HEADER], expected);
    delete req.headers[PROXY_SECRET_HEADER];
    if (proven) return;
    for (const name of FORWARDED_HEADERS) delete req.headers[name];
  };
}

/** How a deployed function trusts the hops in front of it: TRUST_PROXY and TRUST_PROXY_SECRET of its configuration. */
export interface ProxyTrust {
  trust: number | string[];
  secret: string | undefined;
}

export const proxyTrustOf = (config: Config): ProxyTrust => ({ trust: config.trustProxy, secret: config.trustProxySecret });

/** A Lambda event as far as the proof is concerned: a Function URL's headers, lower case. */
export interface ProvableEvent {
  headers?: Record<string, string | undefined>;
}

/**
 * The Router's proof on a Lambda event: `proven` when it carries `secret`; `event` is the event
 * without the proof header (a copy: the caller's object is left as it is), so no handler or log
 * ever sees it.
 */
export function eventProofCheck(secret: string): <E extends ProvableEvent>(event: E) => { proven: boolean; event: E } {
  const expected = digest(secret);
  return (event) => {
    const { [PROXY_SECRET_HEADER]: presented, ...headers } = event.headers ?? {};
    return { proven: proves(presented, expected), event: { ...event, headers } };
  };
}
