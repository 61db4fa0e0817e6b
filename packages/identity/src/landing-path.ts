/**
 * §2.6: the landing page's `path` query parameter. Browser-safe.
 *
 * The value is the original partner path plus query. It must start with `/`, not start with `//`,
 * be at most 512 characters, and hold no control characters and no backslashes; anything else
 * falls back to `/`. Percent-encoded forms of the forbidden characters (`/%5cevil`, `/%2f%2fevil`,
 * `/%09/evil`, double encodings) are refused too, because a server or router on the partner side
 * may decode them before routing.
 */

export const LANDING_PATH_MAX_LENGTH = 512;
export const LANDING_PATH_FALLBACK = '/';

// C0 controls, DEL, and C1 controls; also the Unicode line/paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const MAX_DECODE_LAYERS = 4;

function acceptableLayer(value: string): boolean {
  if (!value.startsWith('/')) return false;
  if (value.startsWith('//')) return false;
  if (value.includes('\\')) return false;
  if (CONTROL.test(value)) return false;
  return true;
}

/** Decodes every run of well-formed %XX escapes that is valid UTF-8; leaves anything else as it is. */
function decodeEscapes(value: string): string {
  return value.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** Returns `raw` when it is a safe landing path, otherwise `/`. Accepts anything a query parser yields. */
export function safeLandingPath(raw: unknown): string {
  if (typeof raw !== 'string') return LANDING_PATH_FALLBACK;
  if (raw.length === 0 || raw.length > LANDING_PATH_MAX_LENGTH) return LANDING_PATH_FALLBACK;
  if (!acceptableLayer(raw)) return LANDING_PATH_FALLBACK;

  // Check every percent-decoding layer the same way: the path part (before ? or #) must keep a
  // single leading slash; the whole value must stay free of control characters and backslashes.
  let layer = raw;
  for (let i = 0; layer.includes('%'); i++) {
    // Only well-formed escapes decode; a `%` that starts none (`/search?q=100%25` decoded once) is
    // plain text, which §2.6 does not refuse.
    const decoded = decodeEscapes(layer);
    if (decoded === layer) break;
    if (i === MAX_DECODE_LAYERS) return LANDING_PATH_FALLBACK; // encoded deeper than anyone legitimately does
    const pathPart = decoded.split(/[?#]/, 1)[0] ?? '';
    if (!pathPart.startsWith('/') || pathPart.startsWith('//')) return LANDING_PATH_FALLBACK;
    if (decoded.includes('\\') || CONTROL.test(decoded)) return LANDING_PATH_FALLBACK;
    layer = decoded;
  }

  // Resolve against a placeholder origin: the result must stay on that origin with a single leading slash.
  let resolved: URL;
  try {
    resolved = new URL(raw, 'https://landing.invalid');
  } catch {
    return LANDING_PATH_FALLBACK;
  }
  if (resolved.origin !== 'https://landing.invalid') return LANDING_PATH_FALLBACK;
  if (resolved.pathname.startsWith('//')) return LANDING_PATH_FALLBACK;
  return raw;
}

/**
 * The frame URL of the landing page: `{clientOrigin}{path}` with `host=platform` added to its
 * query. The path is re-checked here, and the result is a serialised URL (quotes and angle
 * brackets percent-encoded), so it cannot carry markup; still HTML-escape it when writing an attribute.
 */
export function landingFrameUrl(clientOrigin: string, rawPath: unknown): string {
  const origin = new URL(clientOrigin).origin;
  const url = new URL(safeLandingPath(rawPath), `${origin}/`);
  if (url.origin !== origin) return `${origin}/?host=platform`;
  // Keep the partner's own query untouched (no re-encoding); replace any `host` parameter.
  const kept = url.search
    .slice(1)
    .split('&')
    .filter((part) => part !== '' && decodeQueryName(part) !== 'host');
  kept.push('host=platform');
  url.search = `?${kept.join('&')}`;
  return url.href.replace(/'/g, '%27'); // the URL serialiser leaves ' in fragments

}

function decodeQueryName(part: string): string {
  const name = part.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
