import { FRAME_POLICY_INJECTION } from './frame-policy';
import { PROXY_SECRET_HEADER, proofInjection } from './proxy-proof';
import { edgeRouting, routeTable } from './routes';
import { secrets } from './secrets';

export { PROXY_SECRET_HEADER };

/**
 * The one origin of the platform (CloudFront): paths go to the container, a function or the static
 * web app as infra/routes.ts says (routes are added in infra/web.ts). With PLATFORM_DOMAIN set at
 * deploy time the router answers on that domain; otherwise on its CloudFront URL.
 *
 * Its viewer-request function does two things, in this order: it adds the Router's proof
 * (infra/proxy-proof.ts: the TrustProxySecret as a header, overwriting a viewer's own), then sends
 * the paths of patterns with a `:name` segment to their marker routes (infra/routes.ts
 * edgeRouting; a path naming a marker route itself is answered 404 there). Every answer passes the
 * viewer-response function of infra/frame-policy.ts: HTML pages say who may frame them.
 * tests/infra.test.ts runs both as CloudFront does.
 */
export const domain = process.env.PLATFORM_DOMAIN || undefined;

const viewerRequest = secrets.trustProxySecret.value.apply((secret) => `${proofInjection(secret)}\n${edgeRouting(routeTable()).injection}`);

const edge = { viewerRequest: { injection: viewerRequest }, viewerResponse: { injection: FRAME_POLICY_INJECTION } };

/**
 * Every behaviour of the distribution compresses what it sends (brotli or gzip, as the viewer
 * accepts) and keys its cache on the encoding: the static site's files are stored plain and
 * compressed at the edge, the container's answers arrive compressed already (@fastify/compress).
 * SST's defaults say the same today; written here so a change of defaults cannot turn it off.
 * The viewer-response function (frame policy) changes only headers, so a page compressed at the
 * edge carries them too.
 */
export const routerTransform = {
  cachePolicy: (args: { parametersInCacheKeyAndForwardedToOrigin: object }): undefined => {
    Object.assign(args.parametersInCacheKeyAndForwardedToOrigin, { enableAcceptEncodingBrotli: true, enableAcceptEncodingGzip: true });
    return undefined;
  },
  cdn: (args: { defaultCacheBehavior: object }): undefined => {
    Object.assign(args.defaultCacheBehavior, { compress: true });
    return undefined;
  },
};
export const router = new sst.aws.Router('Router', { ...(domain ? { domain } : {}), edge, transform: routerTransform });
/** PUBLIC_ORIGIN of the platform: cookies, the cross-site guard, identity token issuers. */
export const publicOrigin = domain ? `https://${domain}` : router.url;
