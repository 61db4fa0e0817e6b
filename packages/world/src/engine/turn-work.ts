import type { AudioCommand } from './audio-command.ts';
import type { MacroContext } from './macros.ts';
import { deepEqual } from './json-path.ts';
import { applyOperation, isOperation, type Operand } from './operations.ts';
import type { InjectPosition, WorldState } from './state.ts';
import type { EngineAudioTrack, EngineRule, EngineVariable, EngineWorld } from './world-types.ts';

/** An event matched against rules and reactions (§6). Custom types pass through unchanged. */
export type WorldEvent = { readonly type: string; readonly [member: string]: unknown };

export interface StateChange {
  variableId: string;
  /** The JSON path inside the variable, when the change named one. */
  path?: string;
  oldValue: unknown;
  newValue: unknown;
  /** `directive`, `rule:<id>`, `reaction:<id>` or `action`. */
  source: string;
}

export type NotificationStyle = 'info' | 'achievement' | 'warning' | 'danger';

export interface Notification {
  style: NotificationStyle;
  message: string;
  source: string;
}

export interface FiredRule {
  ruleId: string;
  name: string;
  /** The event type that fired it, or `fire-rule` when another rule named it. */
  firedBy: string;
  /** 0 when fired by an event; n when n rules chained to it through fire-rule. */
  chainDepth: number;
}

export interface FiredReaction {
  reactionId: string;
  eventType: string;
}

/** Something the engine could not apply; the turn goes on without it. */
export interface EngineWarning {
  source: string;
  message: string;
}

export interface AiRequest {
  source: string;
  value: unknown;
}

/** The mutable working set of one turn (or one dispatch of interface events). */
export interface TurnWork {
  world: EngineWorld;
  state: WorldState;
  turn: number;
  variables: ReadonlyMap<string, EngineVariable>;
  tracks: ReadonlyMap<string, EngineAudioTrack>;
  rules: ReadonlyMap<string, EngineRule>;
  macros: MacroContext;
  stateChanges: StateChange[];
  notifications: Notification[];
  audioCommands: AudioCommand[];
  firedRules: FiredRule[];
  firedReactions: FiredReaction[];
  aiRequests: AiRequest[];
  warnings: EngineWarning[];
  queue: WorldEvent[];
  firedThisTurn: Set<string>;
}

export const INJECT_POSITIONS: readonly InjectPosition[] = ['top', 'before_char', 'after_char', 'auto', 'depth', 'bottom'];

/**
 * Applies an operation to a variable for a rule or reaction; records the change and queues
 * its state:changed event. Returns false (with a warning) when it does not apply.
 */
export function changeVariable(work: TurnWork, reference: string, operation: string, operand: Operand, source: string): boolean {
  const dot = reference.indexOf('.');
  const variableId = dot < 0 ? reference : reference.slice(0, dot);
  const path = dot < 0 ? [] : reference.slice(dot + 1).split('.');
  const variable = work.variables.get(variableId);
  if (!variable) {
    work.warnings.push({ source, message: `unknown variable "${variableId}"` });
    return false;
  }
  if (!isOperation(operation)) {
    work.warnings.push({ source, message: `unknown operation "${operation}"` });
    return false;
  }
  const oldValue = work.state.variables[variableId];
  const result = applyOperation(variable, oldValue, path, operation, operand);
  if (!result.ok) {
    work.warnings.push({ source, message: `${reference}: ${result.reason}` });
    return false;
  }
  work.state.variables[variableId] = result.value;
  // Only real changes are reported (a clamped `+5` at max, or `set` to the same value, changes nothing).
  if (!deepEqual(oldValue, result.value)) {
    work.stateChanges.push({ variableId, ...(path.length > 0 ? { path: path.join('.') } : {}), oldValue, newValue: result.value, source });
    work.queue.push({ type: 'state:changed', variableId, oldValue, newValue: result.value });
  }
  return true;
}

export function injectDirective(
  work: TurnWork,
  directive: { id: string; content: string; position?: string; depth?: number | null; persistent?: boolean; duration?: number | null },
  source: string,
): void {
  const position = (INJECT_POSITIONS as readonly string[]).includes(directive.position ?? '') ? (directive.position as InjectPosition) : 'auto';
  const duration = typeof directive.duration === 'number' && directive.duration > 0 ? Math.floor(directive.duration) : null;
  const remainingTurns = duration ?? (directive.persistent ? null : 1);
  const next = {
    id: directive.id,
    content: directive.content,
    position,
    depth: Math.max(0, Math.floor(directive.depth ?? 0)),
    remainingTurns,
    source,
  };
  const existing = work.state.directives.findIndex((active) => active.id === directive.id);
  if (existing >= 0) work.state.directives[existing] = next;
  else work.state.directives.push(next);
}

export function removeDirective(work: TurnWork, id: string): void {
  work.state.directives = work.state.directives.filter((directive) => directive.id !== id);
}

export function playTrack(work: TurnWork, trackId: string, action: string, source: string, extra: { volume?: number; seconds?: number } = {}): void {
  const track = work.tracks.get(trackId);
  if (!track) {
    work.warnings.push({ source, message: `unknown audio track "${trackId}"` });
    return;
  }
  switch (action) {
    case 'stop':
      work.audioCommands.push({ action: 'stop', trackId, ...(track.fadeOut ? { fadeOutSeconds: track.fadeOut } : {}), source });
      return;
    case 'crossfade':
      work.audioCommands.push({ action: 'crossfade', trackId, trackType: track.type, seconds: extra.seconds ?? track.fadeIn ?? 2, source });
      return;
    case 'volume':
      work.audioCommands.push({ action: 'volume', trackId, volume: extra.volume ?? track.volume ?? 1, source });
      return;
    default:
      work.audioCommands.push({
        action: 'play',
        trackId,
        trackType: track.type,
        ...(track.volume !== undefined ? { volume: track.volume } : {}),
        ...(track.fadeIn ? { fadeInSeconds: track.fadeIn } : {}),
        source,
      });
  }
}

export function isRuleEnabled(rule: EngineRule, state: WorldState): boolean {
  return state.ruleEnabled[rule.id] ?? rule.enabled ?? true;
}
