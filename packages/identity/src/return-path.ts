/**
 * Where a login, sign-up or OAuth flow may send the browser afterwards (`returnTo`): a path on the
 * platform's own origin, and nothing else. The one check, used by the web app (AuthPage) and the
 * server (the OAuth start route). Browser-safe: no Node built-ins.
 *
 * Refused (the fallback is returned): anything not a string, longer than 512 characters, not
 * starting with a single `/`; a backslash, tab, CR, LF or any other control character; and the
 * percent-encoded forms of all of these (`/%5Cevil`, `/%09/evil`, `/%2F%2Fevil`, double encodings),
 * because browsers strip tabs and newlines and treat `\` as `/`, so `/\evil.example` and
 * `/<TAB>/evil.example` both become `//evil.example`. What is left is resolved with
 * `new URL(value, publicOrigin)` and must keep that origin.
 */

export const RETURN_TO_MAX_LENGTH = 512;

// C0 controls (tab, CR, LF among them), DEL, C1 controls, and the Unicode line/paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const MAX_DECODE_LAYERS = 4;

function acceptableLayer(value: string): boolean {
  const path = value.split(/[?#]/, 1)[0] ?? '';
  return path.startsWith('/') && !path.startsWith('//') && !value.includes('\\') && !CONTROL.test(value);
}

/** `raw` as a same-origin path (path, query and hash), or `fallback` when it is anything else. */
export function safeReturnTo(raw: unknown, publicOrigin: string, fallback = '/'): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > RETURN_TO_MAX_LENGTH) return fallback;
  if (!raw.startsWith('/') || !acceptableLayer(raw)) return fallback;
  // Every percent-decoding layer must pass the same checks (a server or router may decode before use).
  let layer = raw;
  for (let i = 0; layer.includes('%'); i++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(layer);
    } catch {
      return fallback;
    }
    if (decoded === layer) break;
    if (i === MAX_DECODE_LAYERS || !acceptableLayer(decoded)) return fallback;
    layer = decoded;
  }
  let base: URL;
  let resolved: URL;
  try {
    base = new URL(publicOrigin);
    resolved = new URL(raw, base.origin);
  } catch {
    return fallback;
  }
  if (resolved.origin !== base.origin || resolved.pathname.startsWith('//')) return fallback;
  return `${resolved.pathname}${resolved.search}${resolved.hash}`;
}
