/**
 * Companion panel rules (seed §3.3.3): opening pauses solo play, closing resumes only the pause the
 * panel owns; availability; generation cancellation on navigation or level change.
 */

export type PauseOwner = 'player' | 'companion-panel' | 'modal' | 'system';

/** The board is paused while any owner holds a pause. */
export interface PauseState {
  owners: readonly PauseOwner[];
}

export const RUNNING: PauseState = { owners: [] };

export function isPaused(state: PauseState): boolean {
  return state.owners.length > 0;
}

export function holdPause(state: PauseState, owner: PauseOwner): PauseState {
  return state.owners.includes(owner) ? state : { owners: [...state.owners, owner] };
}

export function releasePause(state: PauseState, owner: PauseOwner): PauseState {
  return state.owners.includes(owner) ? { owners: state.owners.filter((o) => o !== owner) } : state;
}

/** Opening the companion pauses solo play (the panel owns that pause). */
export function openPanel(state: PauseState): PauseState {
  return holdPause(state, 'companion-panel');
}

/** Closing releases only the panel's own pause: a player pause taken before or during stays. */
export function closePanel(state: PauseState): PauseState {
  return releasePause(state, 'companion-panel');
}

export interface CompanionSituation {
  /** GAME_COMPANION_DISABLED or the config route said so. */
  disabled: boolean;
  mode: 'adventure' | 'versus';
  modalOpen: boolean;
  scriptedSequence: boolean;
  vasePuzzle: boolean;
  finalBoss: boolean;
  transition: boolean;
  /** The current attempt was lost natively. */
  nativeLoss: boolean;
}

export type PanelUnavailable =
  | 'disabled'
  | 'not-adventure'
  | 'modal'
  | 'scripted-sequence'
  | 'vase-puzzle'
  | 'final-boss'
  | 'transition';

/** Whether the companion can be opened at all (conversation). */
export function panelUnavailable(s: CompanionSituation): PanelUnavailable | null {
  if (s.disabled) return 'disabled';
  if (s.mode !== 'adventure') return 'not-adventure';
  if (s.transition) return 'transition';
  if (s.modalOpen) return 'modal';
  if (s.scriptedSequence) return 'scripted-sequence';
  if (s.vasePuzzle) return 'vase-puzzle';
  if (s.finalBoss) return 'final-boss';
  return null;
}

/** Companion actions (offers, tin, gifts) additionally stop after a native loss. */
export function actionsUnavailable(s: CompanionSituation): PanelUnavailable | 'native-loss' | null {
  return panelUnavailable(s) ?? (s.nativeLoss ? 'native-loss' : null);
}

/** The identifiers that make a generation current. Request ids are transient and never saved. */
export interface GenerationScope {
  runId: string;
  boardId: string;
  level: number;
}

export interface PendingGeneration extends GenerationScope {
  requestId: string;
}

/** Navigation or a level change cancels a generation: it is current only within its own scope. */
export function generationCurrent(pending: PendingGeneration | null, scope: GenerationScope | null): boolean {
  return (
    pending !== null &&
    scope !== null &&
    pending.runId === scope.runId &&
    pending.boardId === scope.boardId &&
    pending.level === scope.level
  );
}

/** A reply is applied only if it answers the pending request in the current scope. */
export function replyAcceptable(
  reply: { requestId: string; runId: string; boardId: string },
  pending: PendingGeneration | null,
  scope: GenerationScope | null,
): boolean {
  return (
    generationCurrent(pending, scope) &&
    pending!.requestId === reply.requestId &&
    pending!.runId === reply.runId &&
    pending!.boardId === reply.boardId
  );
}
