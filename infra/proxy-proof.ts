/**
 * The Router's proof (issue 28, point 5): the Router's viewer-request code adds the TrustProxySecret
 * to every request as a header before it is routed (a viewer's own header of that name is
 * overwritten). The load balancer forwards only requests that carry it (infra/api.ts); the
 * container trusts X-Forwarded-For only with it; a function refuses a request without it (its
 * Function URL is public; @yumina/http lambdaHandler).
 *
 * No SST globals here: plain data and functions, run by the local topology
 * (scripts/topology-router.ts) and by tests/infra.test.ts exactly as CloudFront runs them.
 */

/** The header that carries the TrustProxySecret (packages/config PROXY_SECRET_HEADER; tests/infra.test.ts checks they agree). */
export const PROXY_SECRET_HEADER = 'x-yumina-proxy-secret';

/**
 * TRUST_PROXY of a function: the one hop in front of its Function URL is CloudFront, which appends
 * the viewer's address to X-Forwarded-For. (The container's is 2: CloudFront, then the load balancer.)
 */
export const FUNCTION_TRUST_PROXY = '1';

/** The viewer-request code (cloudfront-js-2.0) that adds the proof with `secret`. */
export const proofInjection = (secret: string) => `event.request.headers[${JSON.stringify(PROXY_SECRET_HEADER)}] = { value: ${JSON.stringify(secret)} };`;

/**
 * Runs the proof's viewer-request code on a request's headers as CloudFront does (lower-case names,
 * `{ value }` objects) and writes what it set into `headers`, overwriting a viewer's own value.
 */
export function addProof(headers: Record<string, string | string[] | undefined>, secret: string): void {
  const event = { request: { headers: {} as Record<string, { value: string }> } };
  // The same code CloudFront runs, in a function of its own.
  new Function('event', proofInjection(secret))(event);
  for (const [name, { value }] of Object.entries(event.request.headers)) headers[name] = value;
}
