import type { EngineVariable, EngineWorld } from './world-types.ts';

/** Where an injected directive lands in the 13-step prompt (see docs/WORLDS.md). */
export type InjectPosition = 'top' | 'before_char' | 'after_char' | 'auto' | 'depth' | 'bottom';

export interface ActiveDirective {
  id: string;
  content: string;
  position: InjectPosition;
  /** Messages from the end for position `depth`; 0 is right before the latest message. */
  depth: number;
  /** Prompts this directive still appears in; null keeps it until remove-directive. */
  remainingTurns: number | null;
  source: string;
}

export interface PendingContext {
  role: 'system' | 'user';
  content: string;
  source: string;
}

export interface RuleBookkeeping {
  fireCount: number;
  lastFiredTurn: number | null;
}

export interface AudioState {
  /** The BGM track the engine last told the player to play (null: none or the playlist). */
  currentBgm: string | null;
  playlistPlaying: boolean;
  /** The conditional BGM currently in control. */
  activeConditionalId: string | null;
  /** For edge-triggered conditional BGM: the one that latched. */
  latchedConditionalId: string | null;
  /** The BGM before the conditional one took over (fallback `previous`). */
  bgmBeforeConditional: string | null;
}

/** Everything the engine keeps between turns of one session. Plain JSON. */
export interface WorldState {
  variables: Record<string, unknown>;
  /** Completed turns. */
  turnCount: number;
  rules: Record<string, RuleBookkeeping>;
  /** Overrides of `enabled` set by toggle-rule and `@rules.disabled.<id>`. */
  ruleEnabled: Record<string, boolean>;
  /** Overrides of `enabled` set by toggle-entry and `@prompt.entry.<id>`. */
  entryEnabled: Record<string, boolean>;
  directives: ActiveDirective[];
  /** One-shot context for the next prompt (send-context, `@prompt.context`, `@ai.context`). */
  pendingContext: PendingContext[];
  audio: AudioState;
  /** ISO time of the latest player message, for the `idle` macro. */
  lastUserMessageAt: string | null;
  /** Whether startSession ran its session-start rules, reactions and music (else the first turn does). */
  sessionStarted: boolean;
  /**
   * The choices the latest reply offered (`[choices: A | B]`), which the player has not answered
   * yet; each turn replaces them with its reply's own (none: empty). The sandbox's `pendingChoices`.
   */
  pendingChoices: string[];
  /**
   * Per-player values in a room (docs/ROOMS.md): by the player's account id, the variables set for
   * that player alone (`setVariable(id, value, { targetUserId })`). Absent on a single player's
   * session. The interface shows each member the shared values with their own over them; the
   * prompt lists each player's under their name.
   */
  playerVariables?: Record<string, Record<string, unknown>>;
}

export function defaultValueOf(variable: EngineVariable): unknown {
  const value = variable.defaultValue;
  // a copy of an object or array default (no state may share it); a number, string or boolean is its own copy
  if (value !== undefined) return typeof value === 'object' && value !== null ? structuredClone(value) : value;
  switch (variable.type) {
    case 'number':
      return 0;
    case 'string':
      return '';
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/**
 * A fresh session state: every variable at its default. Variables `given` holds get a placeholder
 * instead (normalizeState puts their value there, keeping the world's order): their default,
 * possibly a deep copy, is never made.
 */
export function createInitialState(world: EngineWorld, given?: Record<string, unknown>): WorldState {
  const variables: Record<string, unknown> = {};
  for (const variable of world.variables) variables[variable.id] = given && Object.hasOwn(given, variable.id) ? undefined : defaultValueOf(variable);
  return {
    variables,
    turnCount: 0,
    rules: {},
    ruleEnabled: {},
    entryEnabled: {},
    directives: [],
    pendingContext: [],
    audio: {
      currentBgm: null,
      playlistPlaying: false,
      activeConditionalId: null,
      latchedConditionalId: null,
      bgmBeforeConditional: null,
    },
    lastUserMessageAt: null,
    sessionStarted: false,
    pendingChoices: [],
  };
}

/**
 * Accepts a partial state (as a player page or the CLI may store it: often only
 * `variables`) and fills in everything missing; unknown variable ids are kept.
 */
export function normalizeState(world: EngineWorld, partial?: Partial<WorldState> | null): WorldState {
  const base = createInitialState(world, partial?.variables);
  if (!partial) return base;
  return {
    variables: { ...base.variables, ...(partial.variables ?? {}) },
    turnCount: partial.turnCount ?? 0,
    rules: { ...(partial.rules ?? {}) },
    ruleEnabled: { ...(partial.ruleEnabled ?? {}) },
    entryEnabled: { ...(partial.entryEnabled ?? {}) },
    directives: (partial.directives ?? []).map((directive) => ({ ...directive })),
    pendingContext: (partial.pendingContext ?? []).map((context) => ({ ...context })),
    audio: { ...base.audio, ...(partial.audio ?? {}) },
    lastUserMessageAt: partial.lastUserMessageAt ?? null,
    sessionStarted: partial.sessionStarted ?? false,
    pendingChoices: Array.isArray(partial.pendingChoices) ? partial.pendingChoices.filter((choice) => typeof choice === 'string') : [],
    ...(partial.playerVariables ? { playerVariables: playerVariablesOf(partial.playerVariables) } : {}),
  };
}

/** A copy of per-player values: each player's record on its own (no state shares one). */
function playerVariablesOf(given: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [player, values] of Object.entries(given)) if (values && typeof values === 'object') out[player] = { ...values };
  return out;
}
