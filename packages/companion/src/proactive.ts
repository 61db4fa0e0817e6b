import { PROACTIVE } from './limits.ts';

/** Player preferences. Proactive comments are off by default; visits are a separate switch. */
export interface CompanionPreferences {
  proactiveComments: boolean;
  occasionalVisits: boolean;
}

export const DEFAULT_PREFERENCES: CompanionPreferences = { proactiveComments: false, occasionalVisits: true };

/** Per-level proactive state. `count` and `lastAtSimMs` are saved (chunk 21); the silenced board is not. */
export interface ProactiveState {
  count: number;
  lastAtSimMs: number | null;
  /** Board on which the player dismissed a comment; transient. */
  silencedBoardId: string | null;
}

export const NO_PROACTIVE: ProactiveState = { count: 0, lastAtSimMs: null, silencedBoardId: null };

export type ProactiveRefusal = 'disabled' | 'limit' | 'too-soon' | 'paused' | 'silenced';

/** Whether a proactive comment may be requested now (≤ 2 per level, ≥ 90 s of simulation apart, never paused). */
export function proactiveRefusal(
  state: ProactiveState,
  prefs: CompanionPreferences,
  now: { simMs: number; paused: boolean; boardId: string },
): ProactiveRefusal | null {
  if (!prefs.proactiveComments) return 'disabled';
  if (state.silencedBoardId === now.boardId) return 'silenced';
  if (now.paused) return 'paused';
  if (state.count >= PROACTIVE.maxPerLevel) return 'limit';
  if (state.lastAtSimMs !== null && now.simMs - state.lastAtSimMs < PROACTIVE.minGapSimMs) return 'too-soon';
  return null;
}

/** Count a proactive call at the moment it is sent. */
export function recordProactiveCall(state: ProactiveState, simMs: number): ProactiveState {
  return { ...state, count: state.count + 1, lastAtSimMs: simMs };
}

/** Dismissing a comment silences proactive comments for the rest of this board. */
export function dismissProactive(state: ProactiveState, boardId: string): ProactiveState {
  return { ...state, silencedBoardId: boardId };
}
