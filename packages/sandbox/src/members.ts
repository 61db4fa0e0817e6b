/**
 * Every member of the sandbox API (seed 002 §4), defined once. The frame builds `useYumina()` and
 * `window.yumina` from this list; the parent answers the `remote` methods through its handlers.
 *
 * - `state`: a read of the pushed state (see state.ts).
 * - `remote`: a request to the parent over the message protocol; always returns a promise in the frame.
 * - `local`: computed inside the frame from pushed state or boot data (no round trip).
 * - `event`: subscription plumbing (onChange, offChange).
 */
import type { SandboxCheckpoint, StateKey } from './state.ts';
import { STATE_KEYS } from './state.ts';

export interface AiCompleteOptions {
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
  model?: string;
  maxTokens?: number;
  temperature?: number;
  includeLorebook?: boolean | 'all' | 'matched';
  /** Set by the frame when world code passed an onDelta callback; the parent then streams deltas. */
  stream?: boolean;
}

export interface ModelInfo {
  id: string;
  name: string;
  provider: string;
  contextLength: number;
}

export interface ModelsResult {
  models: ModelInfo[];
  pinnedModels: string[];
  recentlyUsed: string[];
}

export interface SessionSummary {
  id: string;
  worldId: string;
  createdAt: string;
  updatedAt?: string;
  messageCount?: number;
  [key: string]: unknown;
}

export interface ToastKind {
  kind: 'success' | 'error' | 'info';
}

/** Arguments and result of every remote method; the parent's handlers take exactly these. */
export interface RemoteMethods {
  // Chat actions
  sendMessage: { args: [text: string]; result: undefined };
  editMessage: { args: [id: string, content: string]; result: undefined };
  deleteMessage: { args: [id: string]; result: undefined };
  regenerateMessage: { args: [id: string]; result: undefined };
  continueLastMessage: { args: []; result: undefined };
  stopGeneration: { args: []; result: undefined };
  restartChat: { args: []; result: undefined };
  swipeMessage: { args: [id: string, direction: 'left' | 'right']; result: undefined };
  setComposerDraft: { args: [text: string]; result: undefined };
  clearPendingChoices: { args: []; result: undefined };
  // Sessions
  revertToMessage: { args: [id: string]; result: undefined };
  branchFromMessage: { args: [id: string]; result: { sessionId: string } | undefined };
  getBranchContext: { args: []; result: unknown };
  createSession: { args: [worldId: string]; result: SessionSummary | { id: string } };
  deleteSession: { args: [sessionId: string]; result: undefined };
  listSessions: { args: [worldId: string]; result: SessionSummary[] };
  navigate: { args: [path: string]; result: undefined };
  // Checkpoints
  saveCheckpoint: { args: [name?: string]; result: SandboxCheckpoint };
  loadCheckpoints: { args: []; result: SandboxCheckpoint[] };
  restoreCheckpoint: { args: [id: string]; result: undefined };
  deleteCheckpoint: { args: [id: string]; result: undefined };
  // AI completion (streams `delta` messages while running when options.stream is set)
  'ai.complete': { args: [options: AiCompleteOptions]; result: string };
  // Game actions
  setVariable: {
    args: [id: string, value: unknown, options?: { scope?: 'session' | 'global'; targetUserId?: string }];
    result: undefined;
  };
  /** An id with a colon (`spatial:zone-enter`) is a custom reaction event carrying the payload's members. */
  executeAction: { args: [actionId: string, payload?: Record<string, unknown>]; result: undefined };
  injectContext: { args: [message: string, options?: { role?: 'system' | 'user' }]; result: undefined };
  // Audio
  playAudio: {
    args: [
      trackId: string,
      options?: { volume?: number; fadeDuration?: number; chainTo?: string; maxDuration?: number; duckBgm?: boolean },
    ];
    result: undefined;
  };
  stopAudio: { args: [trackId?: string, fadeDuration?: number]; result: undefined };
  setAudioVolume: { args: [type: 'bgm' | 'sfx', volume: number]; result: undefined };
  // Storage (world-scoped, persistent, string values)
  'storage.get': { args: [key: string]; result: string | null };
  'storage.set': { args: [key: string, value: string]; result: undefined };
  'storage.remove': { args: [key: string]; result: undefined };
  // UI
  toggleImmersive: { args: []; result: undefined };
  switchGreeting: { args: [index: number]; result: undefined };
  copyToClipboard: { args: [text: string]; result: undefined };
  showToast: { args: [message: string, kind?: 'success' | 'error' | 'info']; result: undefined };
  // Models
  setModel: { args: [id: string]; result: undefined };
  getModels: { args: []; result: ModelsResult };
  pinModel: { args: [id: string]; result: undefined };
  unpinModel: { args: [id: string]; result: undefined };
  setPreferredProvider: {
    args: [provider: 'official' | 'private'];
    result: { ok: boolean; provider?: 'official' | 'private'; error?: string };
  };
}

export type RemoteMethod = keyof RemoteMethods;

export const REMOTE_METHODS = [
  'sendMessage',
  'editMessage',
  'deleteMessage',
  'regenerateMessage',
  'continueLastMessage',
  'stopGeneration',
  'restartChat',
  'swipeMessage',
  'setComposerDraft',
  'clearPendingChoices',
  'revertToMessage',
  'branchFromMessage',
  'getBranchContext',
  'createSession',
  'deleteSession',
  'listSessions',
  'navigate',
  'saveCheckpoint',
  'loadCheckpoints',
  'restoreCheckpoint',
  'deleteCheckpoint',
  'ai.complete',
  'setVariable',
  'executeAction',
  'injectContext',
  'playAudio',
  'stopAudio',
  'setAudioVolume',
  'storage.get',
  'storage.set',
  'storage.remove',
  'toggleImmersive',
  'switchGreeting',
  'copyToClipboard',
  'showToast',
  'setModel',
  'getModels',
  'pinModel',
  'unpinModel',
  'setPreferredProvider',
] as const satisfies readonly RemoteMethod[];

/** Members answered inside the frame without a round trip. */
export const LOCAL_MEMBERS = ['getEntry', 'getAudioVolume', 'resolveAssetUrl', 'renderMarkdown'] as const;
export const EVENT_MEMBERS = ['onChange', 'offChange'] as const;

export type MemberGroup =
  | 'state'
  | 'chat'
  | 'sessions'
  | 'checkpoints'
  | 'ai'
  | 'game'
  | 'audio'
  | 'storage'
  | 'ui'
  | 'models'
  | 'events';

export interface MemberInfo {
  name: string;
  group: MemberGroup;
  transport: 'state' | 'remote' | 'local' | 'event';
}

const GROUP_OF: Record<string, MemberGroup> = {
  sendMessage: 'chat',
  editMessage: 'chat',
  deleteMessage: 'chat',
  regenerateMessage: 'chat',
  continueLastMessage: 'chat',
  stopGeneration: 'chat',
  restartChat: 'chat',
  swipeMessage: 'chat',
  setComposerDraft: 'chat',
  clearPendingChoices: 'chat',
  revertToMessage: 'sessions',
  branchFromMessage: 'sessions',
  getBranchContext: 'sessions',
  createSession: 'sessions',
  deleteSession: 'sessions',
  listSessions: 'sessions',
  navigate: 'sessions',
  saveCheckpoint: 'checkpoints',
  loadCheckpoints: 'checkpoints',
  restoreCheckpoint: 'checkpoints',
  deleteCheckpoint: 'checkpoints',
  'ai.complete': 'ai',
  setVariable: 'game',
  executeAction: 'game',
  injectContext: 'game',
  playAudio: 'audio',
  stopAudio: 'audio',
  setAudioVolume: 'audio',
  getAudioVolume: 'audio',
  'storage.get': 'storage',
  'storage.set': 'storage',
  'storage.remove': 'storage',
  toggleImmersive: 'ui',
  switchGreeting: 'ui',
  copyToClipboard: 'ui',
  showToast: 'ui',
  resolveAssetUrl: 'ui',
  renderMarkdown: 'ui',
  setModel: 'models',
  getModels: 'models',
  pinModel: 'models',
  unpinModel: 'models',
  setPreferredProvider: 'models',
  getEntry: 'state',
  onChange: 'events',
  offChange: 'events',
};

/** The full list of API members, in seed order: what `useYumina()` and `window.yumina` expose. */
export const API_MEMBERS: readonly MemberInfo[] = [
  ...STATE_KEYS.map((name: StateKey): MemberInfo => ({ name, group: 'state', transport: 'state' })),
  ...REMOTE_METHODS.map((name): MemberInfo => ({ name, group: GROUP_OF[name]!, transport: 'remote' })),
  ...LOCAL_MEMBERS.map((name): MemberInfo => ({ name, group: GROUP_OF[name]!, transport: 'local' })),
  ...EVENT_MEMBERS.map((name): MemberInfo => ({ name, group: 'events', transport: 'event' })),
];

export function isRemoteMethod(name: unknown): name is RemoteMethod {
  return typeof name === 'string' && (REMOTE_METHODS as readonly string[]).includes(name);
}
