/**
 * The Content-Security-Policy of the page that hosts a world's interface frame: the web app's
 * shell (the player, the studio preview, the dev sandbox). The one place this policy is written;
 * the container sends it as a header with the shell (local mode) and the web build puts the same
 * policy into index.html as a meta element (the static site in production).
 *
 * - `frame-src 'none'`: the interface frame is an `about:srcdoc` document built by the page, which
 *   frame-src never blocks; so the only document a frame of this page may hold is that one. If the
 *   world's code navigates its frame anywhere (`location = 'https://elsewhere/?d=…'`), the browser
 *   refuses the navigation, and SandboxHost tears the frame down as a violation.
 * - `webrtc 'block'` (CSP Level 3): no peer connections from the page or the frame, which
 *   inherits this policy. Chromium does not implement the directive yet; there the frame runtime
 *   removes the WebRTC constructors before any world code runs (web/src/sandbox/frame/shims.ts).
 * - `object-src 'none'`, `base-uri 'self'`: no plugins, no base-URL rewriting.
 */
export const HOST_PAGE_POLICY_DIRECTIVES: readonly string[] = ["frame-src 'none'", "webrtc 'block'", "object-src 'none'", "base-uri 'self'"];

export const HOST_PAGE_POLICY = HOST_PAGE_POLICY_DIRECTIVES.join('; ');
