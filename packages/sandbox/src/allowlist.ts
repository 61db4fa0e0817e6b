/**
 * The fetch compatibility shim's allowlist: which `/api/` requests the parent performs for world
 * code (with the viewer's credentials). Anything not matched is refused before it leaves the parent.
 *
 * Default rules (`:world` is the id of the world whose interface is running):
 *   GET/HEAD  /api/worlds/:world            the world itself
 *   GET/HEAD  /api/worlds/:world/**         the world's own read routes (updates, sessions, …)
 *   GET/HEAD  /api/library/:world           its public library record
 *   GET/HEAD  /api/version                  platform version
 *   PUT/DELETE /api/worlds/:world/storage/*  the world's own key/value storage
 *   POST      /api/worlds/:world/sessions   a new session of this world
 * No other write is proxied: the world document itself, publishing, update records, accounts and
 * settings stay out of reach. The host may add rules (for example the current session's routes).
 */

export interface AllowRule {
  methods: readonly string[];
  /** A path pattern: literal segments, `:world` (the current world id), `*` (one segment), `**` (zero or more, last only). */
  pattern: string;
}

const READ = ['GET', 'HEAD'] as const;

export const DEFAULT_API_ALLOWLIST: readonly AllowRule[] = [
  { methods: READ, pattern: '/api/worlds/:world' },
  { methods: READ, pattern: '/api/worlds/:world/**' },
  { methods: READ, pattern: '/api/library/:world' },
  { methods: READ, pattern: '/api/version' },
  { methods: ['PUT', 'DELETE'], pattern: '/api/worlds/:world/storage/*' },
  { methods: ['POST'], pattern: '/api/worlds/:world/sessions' },
];

export type ProxyDecision = { ok: true; path: string } | { ok: false; reason: string };

const SEGMENT = /^[A-Za-z0-9._~-]+$/;

/**
 * Decides whether the shim may proxy `method url` for `worldId`. The url must be a same-origin
 * path (relative, or absolute on `origin`) under /api/ with plain segments: no dot segments,
 * encoded slashes or dots, backslashes, empty segments or credentials.
 */
export function decideApiProxy(
  method: string,
  url: string,
  worldId: string,
  origin: string,
  rules: readonly AllowRule[] = DEFAULT_API_ALLOWLIST,
): ProxyDecision {
  const verb = method.toUpperCase();
  if (/[\\\s]/.test(url) || /%2e|%2f|%5c/i.test(url)) return { ok: false, reason: 'unsafe characters in the path' };
  const base = new URL(origin).origin;
  const absolute = url.startsWith(`${base}/`);
  if (!absolute && !(url.startsWith('/') && !url.startsWith('//'))) return { ok: false, reason: 'only absolute paths on the platform origin' };
  let parsed: URL;
  try {
    parsed = new URL(url, origin.endsWith('/') ? origin : `${origin}/`);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (parsed.origin !== base) return { ok: false, reason: 'only the platform origin is proxied' };
  if (parsed.username || parsed.password) return { ok: false, reason: 'credentials in the URL' };
  // A raw path with dot segments is refused even though URL would normalise it.
  const rawPath = (absolute ? url.slice(base.length) : url).split(/[?#]/)[0] ?? '';
  if (rawPath !== parsed.pathname) return { ok: false, reason: 'the path is not in normal form' };
  const segments = parsed.pathname.split('/').slice(1);
  if (segments[0] !== 'api') return { ok: false, reason: 'only /api/ paths are proxied' };
  if (!segments.every((s) => SEGMENT.test(s)) || segments.some((s) => s === '.' || s === '..'))
    return { ok: false, reason: 'unsafe path segment' };
  for (const rule of rules) {
    if (!rule.methods.includes(verb)) continue;
    if (matches(rule.pattern, segments, worldId)) return { ok: true, path: parsed.pathname + parsed.search };
  }
  return { ok: false, reason: `${verb} ${parsed.pathname} is not on the sandbox allowlist` };
}

function matches(pattern: string, segments: string[], worldId: string): boolean {
  const parts = pattern.split('/').slice(1);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === '**') return i === parts.length - 1 && segments.length > i;
    const segment = segments[i];
    if (segment === undefined) return false;
    if (part === ':world') {
      if (segment !== worldId) return false;
    } else if (part !== '*' && part !== segment) return false;
  }
  return segments.length === parts.length;
}
