/**
 * The one origin of the platform (CloudFront): paths go to the container, a function or the static
 * web app as infra/routes.ts says (routes are added in infra/web.ts). With PLATFORM_DOMAIN set at
 * deploy time the router answers on that domain; otherwise on its CloudFront URL.
 */
export const domain = process.env.PLATFORM_DOMAIN || undefined;
/**
 * Every behaviour of the distribution compresses what it sends (brotli or gzip, as the viewer
 * accepts) and keys its cache on the encoding: the static site's files are stored plain and
 * compressed at the edge, the container's answers arrive compressed already (@fastify/compress).
 * SST's defaults say the same today; written here so a change of defaults cannot turn it off.
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
export const router = new sst.aws.Router('Router', { ...(domain ? { domain } : {}), transform: routerTransform });
/** PUBLIC_ORIGIN of the platform: cookies, the cross-site guard, identity token issuers. */
export const publicOrigin = domain ? `https://${domain}` : router.url;
