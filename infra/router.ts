import { FRAME_POLICY_INJECTION } from './frame-policy';
import { secrets } from './secrets';

/**
 * The one origin of the platform (CloudFront): paths go to the container, a function or the static
 * web app as infra/routes.ts says (routes are added in infra/web.ts). With PLATFORM_DOMAIN set at
 * deploy time the router answers on that domain; otherwise on its CloudFront URL. Every answer
 * passes the viewer-response function of infra/frame-policy.ts: HTML pages say who may frame them.
 */
export const domain = process.env.PLATFORM_DOMAIN || undefined;

/** The header that carries the TrustProxySecret (packages/config PROXY_SECRET_HEADER; tests/infra.test.ts checks they agree). */
export const PROXY_SECRET_HEADER = 'x-yumina-proxy-secret';

/**
 * The Router's viewer-request function adds the proof to every request before it is routed (a
 * viewer's own header of that name is overwritten). The load balancer forwards only requests that
 * carry it (infra/api.ts), and the container trusts the forwarded client address only with it.
 */
const proof = secrets.trustProxySecret.value.apply(
  (secret) => `event.request.headers[${JSON.stringify(PROXY_SECRET_HEADER)}] = { value: ${JSON.stringify(secret)} };`,
);

const edge = { viewerRequest: { injection: proof }, viewerResponse: { injection: FRAME_POLICY_INJECTION } };
export const router = new sst.aws.Router('Router', { ...(domain ? { domain } : {}), edge });
/** PUBLIC_ORIGIN of the platform: cookies, the cross-site guard, identity token issuers. */
export const publicOrigin = domain ? `https://${domain}` : router.url;
