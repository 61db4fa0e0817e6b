/**
 * The parent/frame message protocol, defined once. Every message carries `yumina: 1` and the
 * channel id the parent put in the frame document; anything else — a foreign message, a wrong
 * channel, a malformed field, arguments of the wrong shape — is dropped by the validators (null).
 *
 * A `request` whose envelope, id and method are sound but whose arguments are not is not dropped:
 * the parent answers it with an error (`INVALID_ID` for an id or name of the wrong form,
 * `BAD_ARGUMENTS` for anything else), so a call from world code always settles.
 *
 * frame → parent: ready, request (an API method or the fetch shim), storage (shim write), error.
 * parent → frame: state (the whole pushed state), response (to one request), delta (ai.complete stream),
 * assets (the signed token for a private world's assets, renewed before it expires).
 */
import { ASSET_TOKEN_PATTERN } from './asset-url.ts';
import { type AiCompleteOptions, isRemoteMethod, type RemoteMethod, type RemoteMethods } from './members.ts';
import { idExample, type IdKind, isModelId, isPlatformId, isWorldName } from './platform-ids.ts';
import { STATE_KEYS, type SandboxState, type StateKey } from './state.ts';

export const PROTOCOL_VERSION = 1;
/** Largest JSON size of one message the parent accepts from the frame (4 MiB). */
export const MAX_MESSAGE_CHARS = 4 * 1024 * 1024;
const MAX_DEPTH = 32;

export interface FetchRequest {
  /** What world code passed to fetch; the parent forwards only the reads of compat-fetch.ts, built anew. */
  url: string;
  method: string;
  /** Not forwarded (the frame sends none). */
  headers: [string, string][];
  /** Must be null: only GET is forwarded. */
  body: string | null;
}

export interface FetchResult {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: string;
}

export type RequestMethod = RemoteMethod | 'fetch';

interface Envelope {
  yumina: typeof PROTOCOL_VERSION;
  channel: string;
}

export type FrameMessage =
  | (Envelope & { type: 'ready' })
  | (Envelope & { type: 'request'; id: number; method: RequestMethod; args: unknown[] })
  | (Envelope & {
      type: 'storage';
      area: 'local' | 'session';
      op: 'set' | 'remove' | 'clear';
      key?: string;
      value?: string;
    })
  | (Envelope & { type: 'error'; message: string });

export interface ArgumentProblem {
  code: 'INVALID_ID' | 'NAVIGATION_REFUSED' | 'BAD_ARGUMENTS';
  message: string;
}

/** A request the parent refuses for its arguments: answered with `error`, never run. */
export type RefusedRequest = Envelope & { type: 'refused'; id: number; method: RequestMethod; error: ArgumentProblem };

export type ParentMessage =
  | (Envelope & { type: 'state'; state: SandboxState; changed: StateKey[]; changedVariables: string[] })
  | (Envelope & { type: 'response'; id: number; ok: true; value: unknown })
  | (Envelope & { type: 'response'; id: number; ok: false; error: { code: string; message: string } })
  | (Envelope & { type: 'delta'; id: number; text: string })
  | (Envelope & { type: 'assets'; token: string | null });

/* ---------- small structural checks ---------- */

type Check = (value: unknown) => boolean;
const isString: Check = (v) => typeof v === 'string';
const isNumber: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const isBoolean: Check = (v) => typeof v === 'boolean';
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A check that names what an argument must be, and the error code, when it fails (an id or a name of a given form, a path). */
type DescribedCheck = Check & { what: string; code: ArgumentProblem['code'] };
const described = (what: string, check: Check, code: ArgumentProblem['code'] = 'INVALID_ID'): DescribedCheck =>
  Object.assign((v: unknown) => check(v), { what, code });
const idCheck = (what: string, check: Check): DescribedCheck => described(what, check);
const platformId = (kind: IdKind, label: string): DescribedCheck =>
  idCheck(`${label} of this platform (${idExample(kind)})`, (v) => isPlatformId(v, kind));
const messageId = platformId('message', 'a message id');
const sessionId = platformId('session', 'a session id');
const worldId = platformId('world', 'a world id');
const checkpointId = platformId('checkpoint', 'a checkpoint id');
const accountId = platformId('account', 'an account id');
/** Variable, action, event-type, track and storage names: what the server's routes take. */
const worldName = (label: string): DescribedCheck => idCheck(`${label} (letters, digits and . _ : - only, at most 200, not dots only)`, isWorldName);
const modelId = idCheck('a model id (letters, digits and . _ : @ + - in segments joined by /)', isModelId);
/** An in-app path: one leading `/`, no backslash or control character (the host also resolves it on its own origin). */
const appPath = described(
  'a path of this site (one leading /, no backslash or control character)',
  (p) => isString(p) && (p as string).length <= 2048 && (p as string).startsWith('/') && !(p as string).startsWith('//') && !/[\\\p{Cc}]/u.test(p as string),
  'NAVIGATION_REFUSED',
);
/** Absent, or passing `check` (whose description, if any, it keeps). */
const optional = (check: Check): Check => {
  const either: Check = (v) => v === undefined || check(v);
  const { what, code } = check as Partial<DescribedCheck>;
  return what && code ? described(what, either, code) : either;
};
const oneOf =
  (...values: unknown[]): Check =>
  (v) =>
    values.includes(v);
const shape =
  (fields: Record<string, Check>, required: string[] = []): Check =>
  (v) =>
    isRecord(v) &&
    required.every((k) => k in v) &&
    Object.entries(fields).every(([k, check]) => check(v[k]));
const anyValue: Check = () => true;

/** Plain data only: what JSON can carry, bounded in depth (functions, symbols, cycles are refused). */
export function isPlainData(value: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  if (value === null || value === undefined) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      if (Array.isArray(value)) return value.every((item) => isPlainData(item, depth + 1));
      if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return false;
      return Object.values(value as object).every((item) => isPlainData(item, depth + 1));
    default:
      return false;
  }
}

const chatRole = oneOf('system', 'user', 'assistant');
const aiOptions: Check = (v) =>
  shape(
    {
      messages: (m) =>
        Array.isArray(m) && m.length > 0 && m.every(shape({ role: chatRole, content: isString }, ['role', 'content'])),
      model: optional(isString),
      maxTokens: optional((n) => isNumber(n) && (n as number) > 0),
      temperature: optional((n) => isNumber(n) && (n as number) >= 0 && (n as number) <= 2),
      includeLorebook: optional(oneOf(true, false, 'all', 'matched')),
      stream: optional(isBoolean),
    },
    ['messages'],
  )(v);

const headerList: Check = (v) =>
  Array.isArray(v) && v.length <= 100 && v.every((h) => Array.isArray(h) && h.length === 2 && isString(h[0]) && isString(h[1]));
const fetchRequest: Check = shape(
  {
    url: (u) => isString(u) && (u as string).length <= 4096,
    method: (m) => isString(m) && /^[A-Z]{3,7}$/.test(m as string),
    headers: headerList,
    body: (b) => b === null || isString(b),
  },
  ['url', 'method', 'headers', 'body'],
);

/** Positional argument checks per request method; a trailing optional argument may be left out. */
const ARGUMENTS: Record<RequestMethod, Check[]> = {
  sendMessage: [isString],
  editMessage: [messageId, isString],
  deleteMessage: [messageId],
  regenerateMessage: [messageId],
  continueLastMessage: [],
  stopGeneration: [],
  restartChat: [],
  swipeMessage: [messageId, oneOf('left', 'right')],
  setComposerDraft: [isString],
  clearPendingChoices: [],
  revertToMessage: [messageId],
  branchFromMessage: [messageId],
  getBranchContext: [],
  createSession: [worldId],
  deleteSession: [sessionId],
  listSessions: [worldId],
  navigate: [appPath],
  saveCheckpoint: [optional(isString)],
  loadCheckpoints: [],
  restoreCheckpoint: [checkpointId],
  deleteCheckpoint: [checkpointId],
  'ai.complete': [aiOptions],
  setVariable: [
    worldName('a variable id'),
    anyValue,
    optional(shape({ scope: optional(oneOf('session', 'global')), targetUserId: optional(accountId) })),
  ],
  executeAction: [worldName('an action id or event type'), optional(isRecord)],
  injectContext: [isString, optional(shape({ role: optional(oneOf('system', 'user')) }))],
  playAudio: [
    worldName('an audio track id'),
    optional(
      shape({
        volume: optional(isNumber),
        fadeDuration: optional(isNumber),
        chainTo: optional(worldName('an audio track id')),
        maxDuration: optional(isNumber),
        duckBgm: optional(isBoolean),
      }),
    ),
  ],
  stopAudio: [optional(worldName('an audio track id')), optional(isNumber)],
  setAudioVolume: [oneOf('bgm', 'sfx'), (n) => isNumber(n) && (n as number) >= 0 && (n as number) <= 1],
  'storage.get': [worldName('a storage key')],
  'storage.set': [worldName('a storage key'), isString],
  'storage.remove': [worldName('a storage key')],
  toggleImmersive: [],
  switchGreeting: [(n) => Number.isInteger(n) && (n as number) >= 0],
  copyToClipboard: [isString],
  showToast: [isString, optional(oneOf('success', 'error', 'info'))],
  setModel: [modelId],
  getModels: [],
  pinModel: [modelId],
  unpinModel: [modelId],
  setPreferredProvider: [oneOf('official', 'private')],
  fetch: [fetchRequest],
};

const shown = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
};

/** Why `args` do not fit the method's signature (count, shapes, id forms, plain data only), or null when they do. */
export function argumentProblem(method: RequestMethod, args: unknown): ArgumentProblem | null {
  const checks = ARGUMENTS[method];
  const call = `yumina.${method}`;
  if (!checks) return { code: 'BAD_ARGUMENTS', message: `${call} is not a method of the sandbox API.` };
  if (!Array.isArray(args) || args.length > checks.length)
    return { code: 'BAD_ARGUMENTS', message: `${call} takes at most ${checks.length} argument(s).` };
  if (!isPlainData(args)) return { code: 'BAD_ARGUMENTS', message: `${call}: arguments must be plain data.` };
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    if (check(args[i])) continue;
    const { what, code } = check as Partial<DescribedCheck>;
    if (what && code) return { code, message: `${call}: argument ${i + 1} must be ${what}; ${shown(args[i])} is not.` };
    return { code: 'BAD_ARGUMENTS', message: `${call}: argument ${i + 1} (${shown(args[i])}) does not fit (see the sandbox API).` };
  }
  return null;
}

/** True when `args` fit the method's signature (count and shapes, plain data only). */
export function validArguments(method: RequestMethod, args: unknown): args is unknown[] {
  return argumentProblem(method, args) === null;
}

function envelope(data: unknown, channel: string): data is Record<string, unknown> & Envelope {
  return isRecord(data) && data.yumina === PROTOCOL_VERSION && data.channel === channel && typeof data.type === 'string';
}

function roughSize(data: unknown): number {
  try {
    return JSON.stringify(data)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * What the parent accepts from the frame, or null (dropped). A request of a known method whose
 * arguments do not fit comes back as `refused` with the reason, for the parent to answer.
 */
export function parseFrameMessage(data: unknown, channel: string): FrameMessage | RefusedRequest | null {
  if (!envelope(data, channel)) return null;
  if (roughSize(data) > MAX_MESSAGE_CHARS) return null;
  switch (data.type) {
    case 'ready':
      return { yumina: PROTOCOL_VERSION, channel, type: 'ready' };
    case 'request': {
      const { id, method, args } = data;
      if (!Number.isSafeInteger(id) || (id as number) < 0) return null;
      if (method !== 'fetch' && !isRemoteMethod(method)) return null;
      const problem = argumentProblem(method as RequestMethod, args);
      if (problem) return { yumina: PROTOCOL_VERSION, channel, type: 'refused', id: id as number, method: method as RequestMethod, error: problem };
      return { yumina: PROTOCOL_VERSION, channel, type: 'request', id: id as number, method: method as RequestMethod, args: args as unknown[] };
    }
    case 'storage': {
      const { area, op, key, value } = data;
      if (area !== 'local' && area !== 'session') return null;
      if (op === 'clear') return { yumina: PROTOCOL_VERSION, channel, type: 'storage', area, op };
      if (op === 'remove' && isString(key)) return { yumina: PROTOCOL_VERSION, channel, type: 'storage', area, op, key: key as string };
      if (op === 'set' && isString(key) && isString(value))
        return { yumina: PROTOCOL_VERSION, channel, type: 'storage', area, op, key: key as string, value: value as string };
      return null;
    }
    case 'error':
      return isString(data.message)
        ? { yumina: PROTOCOL_VERSION, channel, type: 'error', message: (data.message as string).slice(0, 2000) }
        : null;
    default:
      return null;
  }
}

const stateChecks: Record<StateKey, Check> = {
  variables: isRecord,
  globalVariables: isRecord,
  worldName: isString,
  worldId: isString,
  sessionId: (v) => v === null || isString(v),
  currentUser: (v) => v === null || shape({ id: isString, name: optional(isString) }, ['id'])(v),
  user: shape({ name: isString }, ['name']),
  messages: (v) =>
    Array.isArray(v) &&
    v.every(shape({ id: isString, role: chatRole, content: isString }, ['id', 'role', 'content'])),
  isStreaming: isBoolean,
  streamingContent: isString,
  streamingReasoning: isString,
  pendingChoices: (v) => Array.isArray(v) && v.every(isString),
  error: (v) => v === null || isString(v),
  turnError: (v) =>
    v === null || shape({ code: isString, message: isString, messageId: isString, connection: isBoolean }, ['code', 'message', 'messageId', 'connection'])(v),
  readOnly: isBoolean,
  entries: (v) => Array.isArray(v) && v.every(shape({ id: isString, name: isString }, ['id', 'name'])),
  checkpoints: (v) => Array.isArray(v) && v.every(shape({ id: isString, name: isString }, ['id', 'name'])),
  greetingContent: isString,
  mode: oneOf('session', 'guest-preview'),
  capabilities: shape(
    { canSendMessage: isBoolean, canPersistSession: isBoolean, canUseSessionApis: isBoolean, requiresAuth: isBoolean },
    ['canSendMessage', 'canPersistSession', 'canUseSessionApis', 'requiresAuth'],
  ),
  canvasMode: oneOf('chat', 'custom', 'fullscreen'),
  selectedModel: (v) => v === null || isString(v),
  userPlan: (v) => v === null || isString(v),
  preferredProvider: oneOf('official', 'private'),
  language: isString,
  bgmVolume: isNumber,
  sfxVolume: isNumber,
  players: (v) =>
    Array.isArray(v) &&
    v.every(
      shape(
        { id: isString, accountId: (a) => a === null || isString(a), name: isString, role: oneOf('host', 'player', 'spectator'), online: isBoolean },
        ['id', 'accountId', 'name', 'role', 'online'],
      ),
    ),
  room: (v) =>
    v === null ||
    shape(
      {
        triggerMode: oneOf('manual', 'timer', 'round', 'instant'),
        speechMode: oneOf('free', 'turns'),
        roundState: oneOf('waiting', 'collecting', 'replying'),
        turnParticipantId: (t) => t === null || isString(t),
      },
      ['triggerMode', 'speechMode', 'roundState', 'turnParticipantId'],
    )(v),
  characters: (v) => Array.isArray(v) && v.every(shape({ id: isString, name: isString, muted: isBoolean }, ['id', 'name', 'muted'])),
  speaker: (v) => v === null || shape({ id: isString, name: isString }, ['id', 'name'])(v),
};

export function isSandboxState(value: unknown): value is SandboxState {
  return isRecord(value) && STATE_KEYS.every((key) => stateChecks[key](value[key])) && isPlainData(value);
}

/** What the frame accepts from the parent, or null (dropped). */
export function parseParentMessage(data: unknown, channel: string): ParentMessage | null {
  if (!envelope(data, channel)) return null;
  switch (data.type) {
    case 'state': {
      const { state, changed, changedVariables } = data;
      if (!isSandboxState(state)) return null;
      if (!Array.isArray(changed) || !changed.every((k) => (STATE_KEYS as readonly unknown[]).includes(k))) return null;
      if (!Array.isArray(changedVariables) || !changedVariables.every(isString)) return null;
      return { yumina: PROTOCOL_VERSION, channel, type: 'state', state, changed, changedVariables };
    }
    case 'response': {
      const { id } = data;
      if (!Number.isSafeInteger(id)) return null;
      if (data.ok === true) return { yumina: PROTOCOL_VERSION, channel, type: 'response', id: id as number, ok: true, value: data.value };
      const error = data.error;
      if (data.ok === false && shape({ code: isString, message: isString }, ['code', 'message'])(error))
        return { yumina: PROTOCOL_VERSION, channel, type: 'response', id: id as number, ok: false, error: error as { code: string; message: string } };
      return null;
    }
    case 'delta':
      return Number.isSafeInteger(data.id) && isString(data.text)
        ? { yumina: PROTOCOL_VERSION, channel, type: 'delta', id: data.id as number, text: data.text as string }
        : null;
    case 'assets':
      return data.token === null || (typeof data.token === 'string' && ASSET_TOKEN_PATTERN.test(data.token))
        ? { yumina: PROTOCOL_VERSION, channel, type: 'assets', token: data.token as string | null }
        : null;
    default:
      return null;
  }
}

/* ---------- builders (both sides use these so the shapes stay in one place) ---------- */

type Body<M> = M extends unknown ? Omit<M, 'yumina' | 'channel'> : never;
export type FrameMessageBody = Body<FrameMessage>;
export type ParentMessageBody = Body<ParentMessage>;

export function frameMessage(channel: string, body: FrameMessageBody): FrameMessage {
  return { yumina: PROTOCOL_VERSION, channel, ...body } as FrameMessage;
}

export function parentMessage(channel: string, body: ParentMessageBody): ParentMessage {
  return { yumina: PROTOCOL_VERSION, channel, ...body } as ParentMessage;
}

export type RemoteArgs<M extends RemoteMethod> = RemoteMethods[M]['args'];
export type RemoteResult<M extends RemoteMethod> = RemoteMethods[M]['result'];
export type { AiCompleteOptions };
