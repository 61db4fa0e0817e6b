/**
 * Who may frame the platform's pages, at the CDN: the router's viewer-response function (a
 * CloudFront Function, infra/router.ts) gives every HTML answer the framing headers the container
 * gives its own (containers/api/src/web.ts, installFramePolicy). The static site's pages (the app
 * shell, from object storage) carry no header of their own, so they get the shell's whole header
 * policy (@yumina/sandbox host-policy.ts: the meta element in index.html cannot carry
 * `frame-ancestors`). An HTML answer that has a policy keeps it, with `frame-ancestors 'self'` added
 * only when it names none (the container's pages already do; the partner landing page says 'none').
 *
 * No SST globals here: plain data and functions, run by the local topology (scripts/topology-router.ts)
 * and by tests/infra.test.ts exactly as CloudFront runs them.
 */
import { FRAME_ANCESTORS_SELF, FRAME_OPTIONS_SAMEORIGIN, HOST_PAGE_HEADER_POLICY } from '../packages/sandbox/src/host-policy';

/** The body of the viewer-response function (cloudfront-js-2.0; `event.response` is returned after it). */
export const FRAME_POLICY_INJECTION = `
var headers = event.response.headers;
var type = headers['content-type'] ? headers['content-type'].value : '';
if (/^text\\/html/i.test(type)) {
  var policy = headers['content-security-policy'] ? headers['content-security-policy'].value : '';
  if (!policy) policy = ${JSON.stringify(HOST_PAGE_HEADER_POLICY)};
  else if (!/(^|;)\\s*frame-ancestors\\s/i.test(policy)) policy = policy + '; ' + ${JSON.stringify(FRAME_ANCESTORS_SELF)};
  headers['content-security-policy'] = { value: policy };
  if (!headers['x-frame-options']) headers['x-frame-options'] = { value: /frame-ancestors\\s+'none'/i.test(policy) ? 'DENY' : ${JSON.stringify(FRAME_OPTIONS_SAMEORIGIN)} };
}
`;

type HeaderValue = string | string[] | number | undefined;

/**
 * Runs the viewer-response function on one answer's headers, as CloudFront does (lower-case names,
 * `{ value }` objects; a header given several times is joined with a comma), and returns them.
 */
export function viewerResponse(uri: string, statusCode: number, headers: Record<string, HeaderValue>): Record<string, string | string[]> {
  const cf: Record<string, { value: string }> = {};
  const many: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) many[name.toLowerCase()] = value;
    else cf[name.toLowerCase()] = { value: String(value) };
  }
  const event = { request: { uri, method: 'GET', headers: {} }, response: { statusCode, headers: cf } };
  // The same code CloudFront runs, in a function of its own.
  new Function('event', FRAME_POLICY_INJECTION)(event);
  const out: Record<string, string | string[]> = { ...many };
  for (const [name, { value }] of Object.entries(event.response.headers)) out[name] = value;
  return out;
}
