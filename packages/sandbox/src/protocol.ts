/**
 * The parent/frame message protocol, defined once. Every message carries `yumina: 1` and the
 * channel id the parent put in the frame document; anything else — a foreign message, a wrong
 * channel, a malformed field, arguments of the wrong shape — is dropped by the validators (null).
 *
 * frame → parent: ready, request (an API method or the fetch shim), storage (shim write), error.
 * parent → frame: state (the whole pushed state), response (to one request), delta (ai.complete stream),
 * assets (the signed token for a private world's assets, renewed before it expires).
 */
import { ASSET_TOKEN_PATTERN } from './asset-url.ts';
import { type AiCompleteOptions, isRemoteMethod, type RemoteMethod, type RemoteMethods } from './members.ts';
import { STATE_KEYS, type SandboxState, type StateKey } from './state.ts';

export const PROTOCOL_VERSION = 1;
/** Largest JSON size of one message the parent accepts from the frame (4 MiB). */
export const MAX_MESSAGE_CHARS = 4 * 1024 * 1024;
const MAX_DEPTH = 32;

export interface FetchRequest {
  /** A same-origin path starting with /api/ (the allowlist decides). */
  url: string;
  method: string;
  headers: [string, string][];
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
const isId: Check = (v) => typeof v === 'string' && v.length > 0 && v.length <= 200;
const optional =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);
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
  editMessage: [isId, isString],
  deleteMessage: [isId],
  regenerateMessage: [isId],
  continueLastMessage: [],
  stopGeneration: [],
  restartChat: [],
  swipeMessage: [isId, oneOf('left', 'right')],
  setComposerDraft: [isString],
  clearPendingChoices: [],
  revertToMessage: [isId],
  branchFromMessage: [isId],
  getBranchContext: [],
  createSession: [isId],
  deleteSession: [isId],
  listSessions: [isId],
  navigate: [(p) => isString(p) && (p as string).startsWith('/') && !(p as string).startsWith('//')],
  saveCheckpoint: [optional(isString)],
  loadCheckpoints: [],
  restoreCheckpoint: [isId],
  deleteCheckpoint: [isId],
  'ai.complete': [aiOptions],
  setVariable: [
    isId,
    anyValue,
    optional(shape({ scope: optional(oneOf('session', 'global')), targetUserId: optional(isId) })),
  ],
  executeAction: [isId, optional(isRecord)],
  injectContext: [isString, optional(shape({ role: optional(oneOf('system', 'user')) }))],
  playAudio: [
    isId,
    optional(
      shape({
        volume: optional(isNumber),
        fadeDuration: optional(isNumber),
        chainTo: optional(isId),
        maxDuration: optional(isNumber),
        duckBgm: optional(isBoolean),
      }),
    ),
  ],
  stopAudio: [optional(isId), optional(isNumber)],
  setAudioVolume: [oneOf('bgm', 'sfx'), (n) => isNumber(n) && (n as number) >= 0 && (n as number) <= 1],
  'storage.get': [isId],
  'storage.set': [isId, isString],
  'storage.remove': [isId],
  toggleImmersive: [],
  switchGreeting: [(n) => Number.isInteger(n) && (n as number) >= 0],
  copyToClipboard: [isString],
  showToast: [isString, optional(oneOf('success', 'error', 'info'))],
  setModel: [isId],
  getModels: [],
  pinModel: [isId],
  unpinModel: [isId],
  setPreferredProvider: [oneOf('official', 'private')],
  fetch: [fetchRequest],
};

/** True when `args` fit the method's signature (count and shapes, plain data only). */
export function validArguments(method: RequestMethod, args: unknown): args is unknown[] {
  const checks = ARGUMENTS[method];
  if (!checks || !Array.isArray(args) || args.length > checks.length) return false;
  if (!isPlainData(args)) return false;
  return checks.every((check, i) => check(args[i]));
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

/** What the parent accepts from the frame, or null (dropped). */
export function parseFrameMessage(data: unknown, channel: string): FrameMessage | null {
  if (!envelope(data, channel)) return null;
  if (roughSize(data) > MAX_MESSAGE_CHARS) return null;
  switch (data.type) {
    case 'ready':
      return { yumina: PROTOCOL_VERSION, channel, type: 'ready' };
    case 'request': {
      const { id, method, args } = data;
      if (!Number.isSafeInteger(id) || (id as number) < 0) return null;
      if (method !== 'fetch' && !isRemoteMethod(method)) return null;
      if (!validArguments(method as RequestMethod, args)) return null;
      return { yumina: PROTOCOL_VERSION, channel, type: 'request', id: id as number, method: method as RequestMethod, args };
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
