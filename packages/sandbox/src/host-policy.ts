/**
 * The Content-Security-Policy of the page that hosts a world's interface frame: the web app's
 * shell (the player, the studio preview, the dev sandbox). The one place this policy is written;
 * the container sends it as a header with the shell (local mode), the web build puts the
 * meta-safe part into index.html as a meta element, and in production the CDN adds the header to
 * the static site's pages (infra/frame-policy.ts).
 *
 * - `frame-src 'none'`: the interface frame is an `about:srcdoc` document built by the page, which
 *   frame-src never blocks; so the only document a frame of this page may hold is that one. If the
 *   world's code navigates its frame anywhere (`location = 'https://elsewhere/?d=…'`), the browser
 *   refuses the navigation, and SandboxHost tears the frame down as a violation.
 * - `object-src 'none'`, `base-uri 'self'`: no plugins, no base-URL rewriting.
 * - `frame-ancestors 'self'` (header only): no other site may frame the platform's pages
 *   (clickjacking). A meta element cannot carry it (the browser ignores it there and logs an error),
 *   so it is in the header policy only, with `X-Frame-Options: SAMEORIGIN` for older browsers.
 *
 * No WebRTC directive: CSP's proposed `webrtc 'block'` is not implemented by Chromium, which logs
 * "Unrecognized Content-Security-Policy directive" on every page; the frame runtime removes the
 * WebRTC constructors before any world code runs instead (web/src/sandbox/frame/shims.ts).
 */
export const HOST_PAGE_POLICY_DIRECTIVES: readonly string[] = ["frame-src 'none'", "object-src 'none'", "base-uri 'self'"];

/** The policy both a header and a meta element may carry. */
export const HOST_PAGE_POLICY = HOST_PAGE_POLICY_DIRECTIVES.join('; ');

/** Who may frame the platform's pages: its own origin only. Header only. */
export const FRAME_ANCESTORS_SELF = "frame-ancestors 'self'";

/** The shell's header policy: the host page policy and who may frame it. */
export const HOST_PAGE_HEADER_POLICY = `${HOST_PAGE_POLICY}; ${FRAME_ANCESTORS_SELF}`;

/** X-Frame-Options for browsers without CSP frame-ancestors. */
export const FRAME_OPTIONS_SAMEORIGIN = 'SAMEORIGIN';

/**
 * The framing headers of any other HTML page of the platform's origin: a page without a policy
 * gets `frame-ancestors 'self'`; a page with its own policy keeps it, with `frame-ancestors 'self'`
 * added only when it names no frame-ancestors of its own (the partner landing page says `'none'`).
 */
export function pageFramingHeaders(existingPolicy: string | undefined): { policy: string; frameOptions: 'SAMEORIGIN' | 'DENY' } {
  const policy = !existingPolicy ? FRAME_ANCESTORS_SELF : /(^|;)\s*frame-ancestors\s/i.test(existingPolicy) ? existingPolicy : `${existingPolicy}; ${FRAME_ANCESTORS_SELF}`;
  return { policy, frameOptions: /frame-ancestors\s+'none'/i.test(policy) ? 'DENY' : FRAME_OPTIONS_SAMEORIGIN };
}
