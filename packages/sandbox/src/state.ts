/**
 * The state a custom interface reads (seed 002 §4, "State reads"). The parent owns it and pushes
 * the whole object into the frame whenever it changes; the frame never writes it directly.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface SandboxSwipe {
  content: string;
  stateSnapshot?: Record<string, unknown> | null;
}

/** A chat message as world code sees it (seed 002 §2.9). */
export interface SandboxMessage {
  id: string;
  sessionId: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  /** The text as the model wrote it, directives included (the bubble's `rawContent`); absent: same as content. */
  rawContent?: string;
  status?: 'complete' | 'streaming' | 'failed';
  errorMessage?: string | null;
  /** What the reply changed: the engine's list of {variableId, oldValue, newValue, source}. */
  stateChanges?: Record<string, unknown> | unknown[] | null;
  stateSnapshot?: Record<string, unknown> | null;
  swipes?: SandboxSwipe[];
  activeSwipeIndex?: number;
  model?: string | null;
  tokenCount?: number | null;
  generationTimeMs?: number | null;
  /** True when the message was folded into the session's story summary. */
  compacted?: boolean;
  /**
   * Always empty: players send text only and the platform has no message attachments. Kept for
   * the shape of seed 002 §2.9 (whose attachments would be {type, mimeType, name, url}).
   */
  attachments?: [];
  createdAt: string;
}

export interface SandboxEntry {
  id: string;
  name: string;
  content: string;
  keywords: string[];
  position: number;
  section: string;
  enabled: boolean;
  role: string;
  tags?: string[];
}

export interface SandboxCheckpoint {
  id: string;
  name: string;
  messageCount: number;
  createdAt: string;
}

/** A failed turn, as world code sees it (`turnError`, and the `yumina:turnerror` event's detail). */
export interface SandboxTurnError {
  code: string;
  message: string;
  messageId: string;
  connection: boolean;
}

export interface SandboxCapabilities {
  canSendMessage: boolean;
  canPersistSession: boolean;
  canUseSessionApis: boolean;
  requiresAuth: boolean;
}

/** A member of the room the interface plays in (docs/ROOMS.md): `accountId` is what `setVariable(…, { targetUserId })` takes. */
export interface SandboxPlayer {
  id: string;
  accountId: string | null;
  name: string;
  role: 'host' | 'player' | 'spectator';
  online: boolean;
}

/** The room the interface plays in: its modes, the round's state, whose turn it is (null outside a room). */
export interface SandboxRoom {
  triggerMode: 'manual' | 'timer' | 'round' | 'instant';
  speechMode: 'free' | 'turns';
  roundState: 'waiting' | 'collecting' | 'replying';
  turnParticipantId: string | null;
}

/** A character of the group scene the interface plays in (docs/GROUPS.md). */
export interface SandboxCharacter {
  /** The character's participant id (a reply's `speaker.id`). */
  id: string;
  name: string;
  muted: boolean;
}

export interface SandboxState {
  variables: Record<string, unknown>;
  globalVariables: Record<string, unknown>;
  worldName: string;
  worldId: string;
  sessionId: string | null;
  currentUser: { id: string; name?: string; image?: string | null } | null;
  user: { name: string; avatar?: string | null };
  messages: SandboxMessage[];
  isStreaming: boolean;
  streamingContent: string;
  streamingReasoning: string;
  pendingChoices: string[];
  error: string | null;
  /**
   * The failure of the newest turn (issue 30 A2), kept on the player's message it answered: no
   * reply of the world was kept. `messageId` is that player's message (retry with
   * `regenerateMessage(messageId)`); `connection` is true when the fix is in Settings → AI
   * connection (`navigate('/app/settings#ai-config')`). Null when the newest turn did not fail. The
   * frame also dispatches `yumina:turnerror` on its window when a new one arrives.
   */
  turnError: SandboxTurnError | null;
  readOnly: boolean;
  entries: SandboxEntry[];
  checkpoints: SandboxCheckpoint[];
  greetingContent: string;
  mode: 'session' | 'guest-preview';
  capabilities: SandboxCapabilities;
  canvasMode: 'chat' | 'custom' | 'fullscreen';
  selectedModel: string | null;
  userPlan: string | null;
  preferredProvider: 'official' | 'private';
  language: string;
  bgmVolume: number;
  sfxVolume: number;
  /** The room's members (empty outside a room). */
  players: SandboxPlayer[];
  /** The room's status; null outside a room. */
  room: SandboxRoom | null;
  /** The characters of the group scene (empty outside a scene), in list order. */
  characters: SandboxCharacter[];
  /** The character writing the reply now; null when none is (and outside a scene). */
  speaker: { id: string; name: string } | null;
}

export const STATE_KEYS = [
  'variables',
  'globalVariables',
  'worldName',
  'worldId',
  'sessionId',
  'currentUser',
  'user',
  'messages',
  'isStreaming',
  'streamingContent',
  'streamingReasoning',
  'pendingChoices',
  'error',
  'turnError',
  'readOnly',
  'entries',
  'checkpoints',
  'greetingContent',
  'mode',
  'capabilities',
  'canvasMode',
  'selectedModel',
  'userPlan',
  'preferredProvider',
  'language',
  'bgmVolume',
  'sfxVolume',
  'players',
  'room',
  'characters',
  'speaker',
] as const satisfies readonly (keyof SandboxState)[];

export type StateKey = (typeof STATE_KEYS)[number];

/** A complete state from a partial one: what the parent pushes when it only knows some fields. */
export function completeState(partial: Partial<SandboxState>, world: { id: string; name: string }): SandboxState {
  return {
    variables: {},
    globalVariables: {},
    worldName: world.name,
    worldId: world.id,
    sessionId: null,
    currentUser: null,
    user: { name: 'Player', avatar: null },
    messages: [],
    isStreaming: false,
    streamingContent: '',
    streamingReasoning: '',
    pendingChoices: [],
    error: null,
    turnError: null,
    readOnly: false,
    entries: [],
    checkpoints: [],
    greetingContent: '',
    mode: 'session',
    capabilities: { canSendMessage: true, canPersistSession: true, canUseSessionApis: true, requiresAuth: false },
    canvasMode: 'custom',
    selectedModel: null,
    userPlan: null,
    preferredProvider: 'official',
    language: 'en',
    bgmVolume: 1,
    sfxVolume: 1,
    players: [],
    room: null,
    characters: [],
    speaker: null,
    ...partial,
  };
}

/** The top-level keys whose values differ (by JSON form) between two states. */
export function changedKeys(before: SandboxState | null, after: SandboxState): StateKey[] {
  if (!before) return [...STATE_KEYS];
  return STATE_KEYS.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
}

/** The variable ids whose values differ between two variable records. */
export function changedVariables(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const ids = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...ids].filter((id) => JSON.stringify(before[id]) !== JSON.stringify(after[id]));
}
