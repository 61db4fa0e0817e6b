import { edgeRouting, routeTable } from './routes';

/**
 * The one origin of the platform (CloudFront): paths go to the container, a function or the static
 * web app as infra/routes.ts says (routes are added in infra/web.ts; the viewer-request code sends
 * the paths of patterns with a `:name` segment to their marker routes). With PLATFORM_DOMAIN set
 * at deploy time the router answers on that domain; otherwise on its CloudFront URL.
 */
export const domain = process.env.PLATFORM_DOMAIN || undefined;
export const router = new sst.aws.Router('Router', {
  ...(domain ? { domain } : {}),
  edge: { viewerRequest: { injection: edgeRouting(routeTable()).injection } },
});
/** PUBLIC_ORIGIN of the platform: cookies, the cross-site guard, identity token issuers. */
export const publicOrigin = domain ? `https://${domain}` : router.url;
