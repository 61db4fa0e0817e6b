/**
 * The forms of the ids and names that reach the platform's routes, defined once for the server
 * (which makes the ids: @yumina/accounts, packages/accounts/src/ids.ts) and the browser (which checks what a
 * world's interface sends before it becomes part of a request path).
 *
 * - A **platform id** is `<kind prefix>_<letters, digits, _ and ->`: the server issues a prefix and
 *   16 random bytes in base64url (22 characters); the shipped sample worlds have readable ids of the
 *   same form (`wld_sample_willow_street`).
 * - A **world name** is an id a world's author chose: a variable, action, event type, audio track or
 *   storage key. The server's routes take letters, digits and `. _ : -` (at most 200); a name made of
 *   dots only is refused, since `.` and `..` are path segments a browser resolves.
 * - A **model id** is a provider's model name: segments of letters, digits and `. _ : @ + -`
 *   joined by `/` (`deepseek/deepseek-r1:free`, `hf.co/org/model:Q4_K_M`), none of them dots only.
 */

/** The prefix of each kind of id the server issues. */
export const ID_PREFIXES = {
  account: 'acc',
  login: 'ses',
  persona: 'per',
  world: 'wld',
  update: 'upd',
  asset: 'ast',
  message: 'msg',
  session: 'cnv',
  checkpoint: 'chk',
  notification: 'ntf',
  participant: 'ptc',
  queued: 'rqm',
  invite: 'inv',
  assistantCard: 'asc',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type IdPrefix = (typeof ID_PREFIXES)[IdKind];

const PREFIX_OF = new Map<string, IdKind>(Object.entries(ID_PREFIXES).map(([kind, prefix]) => [prefix, kind as IdKind]));

/** Any platform id: a known prefix, `_`, then 1 to 64 letters, digits, `_` or `-`. */
export const PLATFORM_ID_PATTERN = /^([a-z]{3})_[A-Za-z0-9_-]{1,64}$/;

/** True when `value` has the form of a platform id (of `kind`, when given). */
export function isPlatformId(value: unknown, kind?: IdKind): value is string {
  if (typeof value !== 'string') return false;
  const prefix = PLATFORM_ID_PATTERN.exec(value)?.[1];
  if (!prefix || !PREFIX_OF.has(prefix)) return false;
  return kind === undefined || ID_PREFIXES[kind] === prefix;
}

/** What an id of `kind` looks like, for error messages. */
export function idExample(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_ followed by letters, digits, _ and -`;
}

const DOTS_ONLY = /^\.+$/;

/** Names a world's author chose (variables, actions, event types, tracks, storage keys), as the server's routes take them. */
export const WORLD_NAME_PATTERN = /^[\w.:-]{1,200}$/;

export function isWorldName(value: unknown): value is string {
  return typeof value === 'string' && WORLD_NAME_PATTERN.test(value) && !DOTS_ONLY.test(value);
}

const MODEL_SEGMENT = /^[\w.:@+-]+$/;

/** A model id: `/`-separated segments of letters, digits and `. _ : @ + -`, none dots only, at most 200 characters. */
export function isModelId(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) return false;
  return value.split('/').every((segment) => MODEL_SEGMENT.test(segment) && !DOTS_ONLY.test(segment));
}
