/**
 * The compatibility fetch (seed 002 §4): an older world's interface calls `fetch('/api/…')`, and the
 * page performs the call with the player's credentials. A world's code is hostile, so the page never
 * passes its URL on. It forwards only the reads listed in COMPAT_ROUTES, each scoped the way the
 * bridge's members are (docs/SANDBOX.md, "Ids, paths and scope"):
 *
 * - GET only: nothing a world fetches changes anything (changes go through the yumina API);
 * - only the open world's routes and the open session's; every id is checked against the platform's
 *   id form (platform-ids.ts), and the path is rebuilt from the checked segments with `apiPath`;
 *   the query string keeps only the parameters the route takes, each checked and re-encoded;
 * - the answer holds only the fields the route documents (below), picked from the server's answer,
 *   never the server's body itself.
 *
 * `planCompatFetch` decides and builds the request; `compatAnswer` turns the server's answer into
 * what the frame gets. Both run in the parent page (web/src/sandbox/SandboxHost.tsx).
 */
import { apiPath } from './api-path.ts';
import { idExample, type IdKind, isPlatformId } from './platform-ids.ts';

/** What the proxy knows about the frame it serves. */
export interface CompatFetchScope {
  /** The platform's origin (the page's). */
  origin: string;
  /** The world whose interface runs. */
  worldId: string;
  /** The session open in the player; null (or anything not a session id, such as a preview's) when none is. */
  sessionId: string | null;
}

/**
 * The documented shape of an answer: `string`, `number`, `boolean`, `data` (any JSON value the
 * route documents as a whole: variables, a world definition), an array of one shape, or an object
 * whose listed keys are kept (every other key is dropped). `null` passes for any shape; a value of
 * another type becomes null; an absent key stays absent.
 */
export type AnswerShape = 'string' | 'number' | 'boolean' | 'data' | readonly [AnswerShape] | { readonly [key: string]: AnswerShape };

type RouteParam = 'world' | 'session' | 'message';

interface QueryParam {
  what: string;
  check: (value: string) => boolean;
}

export interface CompatRoute {
  /** Path segments after `/api/`: literals, or `:world` (the open world), `:session` (the open session), `:message` (a message id). */
  path: readonly string[];
  query: Readonly<Record<string, QueryParam>>;
  /** The fields of a successful answer. */
  answer: AnswerShape;
  /** What the route is, for the docs and error messages. */
  what: string;
}

const integer = (min: number, max: number): QueryParam => ({
  what: `an integer from ${min} to ${max}`,
  check: (v) => /^\d{1,10}$/.test(v) && Number(v) >= min && Number(v) <= max,
});
/** The server's page cursors are base64url text. */
const cursor: QueryParam = { what: 'a page cursor from a previous answer', check: (v) => /^[A-Za-z0-9_-]{1,400}$/.test(v) };

const SESSION_SUMMARY = { id: 'string', worldId: 'string', title: 'string', createdAt: 'string', updatedAt: 'string', messageCount: 'number' } as const;
const VARIABLES = { variables: 'data' } as const;
const MESSAGE = {
  id: 'string',
  position: 'number',
  role: 'string',
  content: 'string',
  rawContent: 'string',
  status: 'string',
  errorMessage: 'string',
  stateChanges: 'data',
  stateSnapshot: VARIABLES,
  swipes: [{ content: 'string', snapshot: VARIABLES }],
  activeSwipeIndex: 'number',
  swipeCount: 'number',
  swipesLoaded: 'boolean',
  model: 'string',
  tokenCount: 'number',
  generationTimeMs: 'number',
  compacted: 'boolean',
  attachments: 'data',
  createdAt: 'string',
} as const;

/** Every read the compatibility fetch forwards (GET `/api/<path>`); nothing else is. */
export const COMPAT_ROUTES: readonly CompatRoute[] = [
  { path: ['version'], query: {}, what: 'the platform version', answer: { version: 'string' } },
  {
    path: ['worlds', ':world'],
    query: {},
    what: 'this world (the version the player plays)',
    answer: { id: 'string', revision: 'number', createdAt: 'string', updatedAt: 'string', publishedAt: 'string', coverUrl: 'string', world: 'data' },
  },
  {
    path: ['library', ':world'],
    query: {},
    what: "this world's library record",
    answer: {
      id: 'string',
      name: 'string',
      description: 'string',
      tags: ['string'],
      language: 'string',
      author: 'string',
      publishedAt: 'string',
      updatedAt: 'string',
      coverUrl: 'string',
      plays: 'number',
      world: 'data',
    },
  },
  {
    path: ['worlds', ':world', 'updates'],
    query: { cursor, limit: integer(1, 200) },
    what: "this world's update records",
    answer: {
      worldId: 'string',
      updates: [{ id: 'string', worldId: 'string', title: 'string', content: 'string', isMajor: 'boolean', timestamp: 'string', language: 'string' }],
      nextCursor: 'string',
    },
  },
  {
    path: ['worlds', ':world', 'sessions'],
    query: { cursor, limit: integer(1, 100) },
    what: "the player's sessions of this world (listSessions)",
    answer: { sessions: [SESSION_SUMMARY], nextCursor: 'string' },
  },
  {
    path: ['worlds', ':world', 'storage'],
    query: {},
    what: "this world's storage of the player (storage.get)",
    answer: { entries: 'data' },
  },
  {
    path: ['worlds', ':world', 'player'],
    query: {},
    what: "the player's settings for this world (globalVariables, selectedModel, preferredProvider, userPlan)",
    answer: { globalVariables: 'data', selectedModel: 'string', preferredProvider: 'string', userPlan: 'string' },
  },
  {
    path: ['sessions', ':session'],
    query: { before: integer(0, 2_147_483_647), limit: integer(1, 200) },
    what: 'the open session and a page of its messages',
    answer: {
      session: { ...SESSION_SUMMARY, branchedFrom: 'string', state: { variables: 'data', pendingChoices: ['string'] } },
      messages: [MESSAGE],
      history: { earlierCursor: 'string', limit: 'number' },
    },
  },
  {
    path: ['sessions', ':session', 'messages', ':message'],
    query: {},
    what: 'a message of the open session, with its alternatives',
    answer: { message: MESSAGE },
  },
  {
    path: ['sessions', ':session', 'checkpoints'],
    query: {},
    what: "the open session's checkpoints (loadCheckpoints)",
    answer: { checkpoints: [{ id: 'string', name: 'string', messageCount: 'number', createdAt: 'string' }] },
  },
  {
    path: ['models'],
    query: {},
    what: "the player's models (getModels)",
    answer: { models: [{ id: 'string', name: 'string', provider: 'string', contextLength: 'number' }], pinned: ['string'], recent: ['string'] },
  },
];

/** The answer of a refused or failed call: the server's `{ error: { code, message } }`, nothing else. */
const ERROR_ANSWER: AnswerShape = { error: { code: 'string', message: 'string' } };

export type CompatFetchPlan =
  | { ok: true; route: CompatRoute; /** The path to request, rebuilt from checked parts. */ path: string }
  | { ok: false; reason: string };

const refuse = (reason: string): CompatFetchPlan => ({ ok: false, reason });
const shown = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
/** A literal segment or an id of the platform's form: letters, digits, `_`, `-` (never `.`, `%` or anything a browser would resolve). */
const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;
const PARAM_KIND: Record<RouteParam, IdKind> = { world: 'world', session: 'session', message: 'message' };

/**
 * Whether the page forwards `method url` for the frame of `scope`, and the request it makes.
 * The url must be a path on the platform's origin (`/api/…`, or the origin followed by it) in
 * normal form; its route, ids and query parameters are checked, and the path is built anew.
 */
export function planCompatFetch(method: string, url: string, scope: CompatFetchScope): CompatFetchPlan {
  const verb = String(method).toUpperCase();
  if (verb !== 'GET')
    return refuse(`${verb} is not forwarded: a world's interface only reads through fetch (GET); it changes things through the yumina API (storage.set, createSession, sendMessage, …)`);
  if (typeof url !== 'string' || url.length > 2048) return refuse('the URL must be a path of at most 2048 characters');
  if (/[\\\s\p{Cc}]/u.test(url)) return refuse('backslashes, spaces and control characters are not allowed in the URL');
  const base = new URL(scope.origin).origin;
  const absolute = url.startsWith(`${base}/`);
  if (!absolute && !(url.startsWith('/') && !url.startsWith('//'))) return refuse(`only paths of this site are forwarded (/api/…); ${shown(url)} is not one`);
  let parsed: URL;
  try {
    parsed = new URL(url, `${base}/`);
  } catch {
    return refuse(`${shown(url)} is not a URL`);
  }
  if (parsed.origin !== base || parsed.username || parsed.password) return refuse('only paths of this site are forwarded');
  // The path as written must be the path the browser would send: no dot segments, nothing encoded.
  const rawPath = (absolute ? url.slice(base.length) : url).split(/[?#]/)[0] ?? '';
  if (rawPath.includes('%')) return refuse(`percent-encoded characters are not allowed in the path (${shown(rawPath)})`);
  if (rawPath !== parsed.pathname) return refuse(`the path ${shown(rawPath)} is not in normal form (dot segments)`);
  const segments = parsed.pathname.split('/').slice(1);
  if (segments[0] !== 'api') return refuse(`only /api/ paths are forwarded; ${shown(parsed.pathname)} is not one`);
  const parts = segments.slice(1);
  if (parts.some((s) => !PLAIN_SEGMENT.test(s))) return refuse(`the path ${shown(parsed.pathname)} has an empty segment or a character no route takes`);

  const route = COMPAT_ROUTES.find((r) => r.path.length === parts.length && r.path.every((p, i) => p.startsWith(':') || p === parts[i]));
  if (!route)
    return refuse(
      `GET ${parsed.pathname} is not forwarded: a world's interface reads only its own world, the open session and the player's models (the routes of docs/SANDBOX.md)`,
    );
  for (let i = 0; i < route.path.length; i++) {
    const pattern = route.path[i]!;
    if (!pattern.startsWith(':')) continue;
    const problem = paramProblem(pattern.slice(1) as RouteParam, parts[i]!, scope);
    if (problem) return refuse(problem);
  }

  const query = new URLSearchParams();
  const seen = new Set<string>();
  for (const [name, value] of parsed.searchParams) {
    const param = Object.hasOwn(route.query, name) ? route.query[name] : undefined;
    const takes = Object.keys(route.query);
    if (!param)
      return refuse(`the query parameter ${shown(name)} is not forwarded for ${route.what} (${takes.length ? `it takes ${takes.join(', ')}` : 'it takes none'})`);
    if (seen.has(name)) return refuse(`the query parameter ${shown(name)} is given twice`);
    seen.add(name);
    if (!param.check(value)) return refuse(`the query parameter ${name} must be ${param.what}; ${shown(value)} is not`);
    query.set(name, value);
  }
  const search = query.toString();
  return { ok: true, route, path: `${apiPath(...parts)}${search ? `?${search}` : ''}` };
}

function paramProblem(param: RouteParam, value: string, scope: CompatFetchScope): string | null {
  const kind = PARAM_KIND[param];
  if (!isPlatformId(value, kind)) return `${shown(value)} is not a ${kind} id of this platform (${idExample(kind)})`;
  if (param === 'world' && value !== scope.worldId)
    return `only this world's routes are forwarded (yumina.worldId, ${scope.worldId}); ${value} is another world`;
  if (param === 'session') {
    if (!isPlatformId(scope.sessionId, 'session')) return 'no session is open, so no session route is forwarded';
    if (value !== scope.sessionId) return `only the open session's routes are forwarded (yumina.sessionId, ${scope.sessionId}); ${value} is another session`;
  }
  return null;
}

/** `value` cut down to `shape` (see AnswerShape): only the documented fields, of the documented types. */
export function pickAnswer(value: unknown, shape: AnswerShape): unknown {
  if (value === null || value === undefined) return null;
  if (shape === 'data') return plainData(value);
  if (shape === 'string' || shape === 'number' || shape === 'boolean') return typeof value === shape && (shape !== 'number' || Number.isFinite(value)) ? value : null;
  if (Array.isArray(shape)) return Array.isArray(value) ? value.map((item) => pickAnswer(item, shape[0] as AnswerShape)) : null;
  if (typeof value !== 'object' || Array.isArray(value)) return null;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(shape as Record<string, AnswerShape>)) {
    if (Object.hasOwn(value, key) && (value as Record<string, unknown>)[key] !== undefined) out[key] = pickAnswer((value as Record<string, unknown>)[key], inner);
  }
  return out;
}

/** A JSON value as JSON would carry it (a copy; anything else null). */
function plainData(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return null;
  }
}

/**
 * What the frame receives for the server's answer `body` (parsed JSON, or undefined when it was not
 * JSON) with `status`: the route's documented fields for a success, the error's code and message for
 * a failure, and a 502 with UNREADABLE_ANSWER when the server's answer was not JSON.
 */
export function compatAnswer(route: CompatRoute, status: number, body: unknown): { status: number; body: unknown } {
  if (body === undefined || body === null || typeof body !== 'object')
    return { status: status >= 400 ? status : 502, body: { error: { code: 'UNREADABLE_ANSWER', message: `The platform's answer (${status}) was not JSON.` } } };
  return { status, body: pickAnswer(body, status >= 200 && status < 300 ? route.answer : ERROR_ANSWER) };
}
