import { FRAME_POLICY_INJECTION } from './frame-policy';

/**
 * The one origin of the platform (CloudFront): paths go to the container, a function or the static
 * web app as infra/routes.ts says (routes are added in infra/web.ts). With PLATFORM_DOMAIN set at
 * deploy time the router answers on that domain; otherwise on its CloudFront URL. Every answer
 * passes the viewer-response function of infra/frame-policy.ts: HTML pages say who may frame them.
 */
export const domain = process.env.PLATFORM_DOMAIN || undefined;
const edge = { viewerResponse: { injection: FRAME_POLICY_INJECTION } };
export const router = new sst.aws.Router('Router', domain ? { domain, edge } : { edge });
/** PUBLIC_ORIGIN of the platform: cookies, the cross-site guard, identity token issuers. */
export const publicOrigin = domain ? `https://${domain}` : router.url;
