/** What the player page reads from the platform API (sessions, messages, checkpoints, the world). */
import type { AudioTrackDef } from './audio.ts';

export interface PlayerMessage {
  id: string;
  position: number;
  role: 'user' | 'assistant' | 'system';
  content: string;
  rawContent?: string;
  status: 'complete' | 'streaming' | 'failed';
  errorMessage: string | null;
  /** A player's message whose turn failed (issue 30 A2): shown beside it with a retry; no reply was kept. */
  failure?: { code: string; message: string } | null;
  /** Cut at the platform's reply length limit. */
  truncated?: boolean;
  stateChanges: unknown[];
  swipes: { content: string; snapshot?: { variables?: Record<string, unknown> } | null }[];
  activeSwipeIndex: number;
  stateSnapshot: { variables?: Record<string, unknown> } | null;
  model: string | null;
  tokenCount: number | null;
  /** The prompt's tokens (absent or null for replies written before they were kept). */
  promptTokens?: number | null;
  /** Platform credits the reply cost; null on the player's own connection. */
  creditsCharged?: number | null;
  /** Of promptTokens: read from the provider's prompt cache, and written to it (null when the provider did not say). */
  cachedTokens?: number | null;
  cacheWriteTokens?: number | null;
  /** On the player's own connection: the reply at the platform's price of its model, when the platform prices it. */
  creditsEstimate?: number | null;
  generationTimeMs: number | null;
  /** Folded into the session's story summary. */
  compacted: boolean;
  /** Always empty: the platform has no message attachments (docs/CONVERSATIONS.md). */
  attachments: [];
  createdAt: string;
}

export interface PlayerWorldState {
  variables: Record<string, unknown>;
  turnCount?: number;
  audio?: { currentBgm: string | null; playlistPlaying: boolean };
  pendingContext?: { role: string; content: string }[];
  /** The choices the latest reply offered (`[choices: A | B]`), not answered yet. */
  pendingChoices?: string[];
}

export interface SessionSpent {
  replies: number;
  tokensIn: number;
  cachedTokens: number;
  tokensOut: number;
  credits: number;
  creditsEstimate: number;
}

export interface PlayerSession {
  id: string;
  worldId: string;
  title: string;
  messageCount: number;
  branchedFrom: string | null;
  memory: string;
  /** What the session's replies used and cost (every reply written in it, regenerated ones too). */
  spent?: SessionSpent;
  state: PlayerWorldState;
  createdAt: string;
  updatedAt: string;
}

export interface SessionData {
  session: PlayerSession;
  /** The newest page of messages (GET /api/sessions/:id); earlier pages load by `history.earlierCursor`. */
  messages: PlayerMessage[];
  history?: { earlierCursor: string | null };
}

export interface Checkpoint {
  id: string;
  name: string;
  messageCount: number;
  createdAt: string;
}

export interface WorldVariable {
  id: string;
  name?: string;
  type?: string;
  min?: number | null;
  max?: number | null;
}

export interface WorldEntryDef {
  id: string;
  name: string;
  content: string;
  keywords?: string[];
  position?: number;
  section?: string;
  enabled?: boolean;
  role?: string;
  tags?: string[];
}

export interface WorldData {
  id: string;
  /** The world's cover and the character's portrait (GET /api/worlds/:id, the guest preview): the character's bubbles show the portrait, else the cover. */
  coverUrl?: string | null;
  avatarUrl?: string | null;
  world: {
    name: string;
    language?: string;
    variables?: WorldVariable[];
    entries?: WorldEntryDef[];
    rootComponent?: { id?: string; name?: string; entryFile: string; files: Record<string, string>; updatedAt?: string } | null;
    audioTracks?: AudioTrackDef[];
    bgmPlaylist?: { tracks: string[]; playMode: string; gapSeconds?: number; autoPlay?: boolean; waitForFirstMessage?: boolean } | null;
    settings?: { playerName?: string; maxContext?: number };
    avatar?: string | null;
    /** The chat's background: a colour or `asset:<id>` (issue 50). */
    chatBackground?: string;
    /** The character's voice as the author set it (issue 50). */
    voice?: { browserVoice?: string; language?: string; providerVoice?: string; rate?: number; pitch?: number };
    coverImage?: string | null;
  };
}

export interface PlayerPreferences {
  globalVariables: Record<string, unknown>;
  selectedModel: string | null;
  preferredProvider: 'official' | 'private';
  userPlan: string | null;
}

export interface Toast {
  id: number;
  message: string;
  kind: 'success' | 'error' | 'info' | 'warning' | 'danger' | 'achievement';
}

/** What the engine said should happen after a turn, an action or an event. */
export interface EngineEffects {
  notifications?: ({ message?: string; text?: string; style?: string } | string)[];
  audioCommands?: unknown[];
  aiRequests?: { source: string; value: unknown }[];
}
