import type { AudioCommand } from './audio-command.ts';
import { type MalformedDirective, parseDirectives } from './directives.ts';
import { type SkippedEntry, scanWindow, selectEntries } from './entries.ts';
import { deepEqual } from './json-path.ts';
import { expandMacros } from './macros.ts';
import { resolveMusic } from './music.ts';
import { applyOperation } from './operations.ts';
import { reactionsForEvent, runReactionsForEvent } from './reactions.ts';
import { fireRulesForEvent, orderRules, rulesForEvent } from './rules.ts';
import { buildMacroContext, type SessionOptions, sessionSeedOf, toDate } from './session-context.ts';
import { normalizeState, type PendingContext, type WorldState } from './state.ts';
import type {
  AiRequest,
  EngineWarning,
  FiredReaction,
  FiredRule,
  Notification,
  StateChange,
  TurnWork,
  WorldEvent,
} from './turn-work.ts';
import type { EngineWorld } from './world-types.ts';

/** More events than this in one turn (rules and reactions emitting each other) are dropped with a warning. */
export const MAX_EVENTS_PER_TURN = 256;

export interface TurnOptions extends SessionOptions {
  userMessage: string;
  aiReply: string;
  /**
   * Entries the prompt of this turn could not include (from assemblePrompt's `skippedEntries`).
   * When absent, runTurn works them out from `history` the same way assemblePrompt does, without
   * the budget (it does not know the prompt's size).
   */
  skippedEntries?: readonly SkippedEntry[];
  /** Messages before this turn's user message, for the skipped-entry report when not given. */
  history?: readonly { role: string; content: string }[];
}

export interface TurnResult {
  /** The next state: variables, rule bookkeeping, directives, pending context, audio. */
  state: WorldState;
  /** The reply as the player sees it: directives naming known variables (and audio, choices) removed. */
  displayText: string;
  /** The choices the reply offers (`[choices: A | B]`); also the next state's `pendingChoices`. */
  choices: string[];
  stateChanges: StateChange[];
  notifications: Notification[];
  audioCommands: AudioCommand[];
  /** One-shot context the next prompt will carry (step 11). */
  pendingContext: PendingContext[];
  firedRules: FiredRule[];
  firedReactions: FiredReaction[];
  /** Entries that would have applied to this turn's prompt but did not, and why. */
  skippedEntries: SkippedEntry[];
  /** Directives that named a known variable but could not be applied; they changed nothing. */
  malformedDirectives: MalformedDirective[];
  aiRequests: AiRequest[];
  warnings: EngineWarning[];
  events: WorldEvent[];
}

function cloneState(world: EngineWorld, state: WorldState | Partial<WorldState> | null | undefined): WorldState {
  return structuredClone(normalizeState(world, state));
}

function newWork(world: EngineWorld, state: WorldState, turn: number, options: SessionOptions, recent: { user: string; ai: string }): TurnWork {
  const macros = buildMacroContext(world, state, options, turn, {
    lastMessage: recent.ai,
    lastUserMessage: recent.user,
    lastCharMessage: recent.ai,
  });
  macros.turnCount = turn;
  return {
    world,
    state,
    turn,
    variables: new Map(world.variables.map((variable) => [variable.id, variable])),
    tracks: new Map((world.audioTracks ?? []).map((track) => [track.id, track])),
    rules: new Map((world.rules ?? []).map((rule) => [rule.id, rule])),
    macros,
    stateChanges: [],
    notifications: [],
    audioCommands: [],
    firedRules: [],
    firedReactions: [],
    aiRequests: [],
    warnings: [],
    queue: [],
    firedThisTurn: new Set(),
  };
}

/**
 * Runs the queue: each event against rules (priority order) then reactions (definition order).
 * Which of them fire is decided first, against the variables as they were before any of them
 * acted (so either/or rules fire one branch); then their actions apply in that order, and the
 * next event sees the result.
 */
function drain(work: TurnWork): WorldEvent[] {
  const ordered = orderRules(work.world.rules ?? []);
  const reactions = work.world.reactions ?? [];
  const processed: WorldEvent[] = [];
  while (work.queue.length > 0) {
    const event = work.queue.shift() as WorldEvent;
    if (processed.length >= MAX_EVENTS_PER_TURN) {
      work.warnings.push({ source: 'engine', message: `more than ${MAX_EVENTS_PER_TURN} events in one turn; the rest were dropped` });
      work.queue.length = 0;
      break;
    }
    processed.push(event);
    // Values are replaced, never mutated, so a shallow copy keeps the state before this event.
    const before = { ...work.state.variables };
    const firing = rulesForEvent(work, ordered, event, before);
    const reacting = reactionsForEvent(reactions, event, before);
    fireRulesForEvent(work, firing, event);
    runReactionsForEvent(work, reacting, event);
  }
  return processed;
}

function scanTexts(world: EngineWorld, history: readonly { role?: string; content: string }[], latest: string): string[] {
  return scanWindow([...history, { role: 'user', content: latest }], Math.max(0, world.settings?.lorebookScanDepth ?? 2));
}

/**
 * One turn after the AI replied: applies the reply's directives, then emits message:user,
 * message:ai, turn:complete and one state:changed per changed variable, matched against rules
 * and reactions; expires directives; resolves music. Pure: the input state is not modified.
 */
export function runTurn(world: EngineWorld, state: WorldState | Partial<WorldState> | null | undefined, options: TurnOptions): TurnResult {
  const next = cloneState(world, state);
  const before = normalizeState(world, state);
  const turn = next.turnCount + 1;
  const now = toDate(options.now);

  const skippedEntries = options.skippedEntries
    ? [...options.skippedEntries]
    : selectEntries(world, before, scanTexts(world, options.history ?? [], options.userMessage)).skipped;

  // The prompt of this turn consumed the pending context and one turn of each directive.
  next.pendingContext = [];
  next.directives = next.directives
    .map((directive) => ({ ...directive, remainingTurns: directive.remainingTurns === null ? null : directive.remainingTurns - 1 }))
    .filter((directive) => directive.remainingTurns === null || directive.remainingTurns > 0);

  const work = newWork(world, next, turn, options, { user: options.userMessage, ai: options.aiReply });
  const scan = parseDirectives(options.aiReply, work.variables, work.tracks);
  const malformed = [...scan.malformed];
  const valuesBefore = { ...next.variables };
  for (const directive of scan.directives) {
    const variable = work.variables.get(directive.variableId);
    if (!variable) continue;
    const oldValue = next.variables[directive.variableId];
    const result = applyOperation(variable, oldValue, directive.path, directive.operation, { raw: directive.raw });
    if (!result.ok) {
      malformed.push({ text: directive.text, variableId: directive.variableId, reason: result.reason });
      continue;
    }
    next.variables[directive.variableId] = result.value;
    if (deepEqual(oldValue, result.value)) continue;
    work.stateChanges.push({
      variableId: directive.variableId,
      ...(directive.path.length > 0 ? { path: directive.path.join('.') } : {}),
      oldValue,
      newValue: result.value,
      source: 'directive',
    });
  }
  work.audioCommands.push(...scan.audio);
  // The reply's own choices replace whatever the previous reply offered (answered by this turn).
  next.pendingChoices = [...scan.choices];

  // session-start rules and reactions fire here only when startSession did not run them.
  const sessionStartPending = !next.sessionStarted;
  if (sessionStartPending) work.queue.push({ type: 'session:start' });
  next.sessionStarted = true;
  work.queue.push({ type: 'message:user', content: options.userMessage });
  work.queue.push({ type: 'message:ai', content: scan.displayText });
  work.queue.push({ type: 'turn:complete', turnCount: turn });
  for (const variable of world.variables) {
    const oldValue = valuesBefore[variable.id];
    const newValue = next.variables[variable.id];
    if (JSON.stringify(oldValue) !== JSON.stringify(newValue)) {
      work.queue.push({ type: 'state:changed', variableId: variable.id, oldValue, newValue });
    }
  }
  const events = drain(work);

  const music = resolveMusic(
    world,
    next.audio,
    { turn, userMessage: options.userMessage, aiReply: scan.displayText, variables: next.variables, sessionSeed: sessionSeedOf(options), sessionStartPending },
    work.audioCommands,
  );
  work.audioCommands.push(...music);

  next.turnCount = turn;
  next.lastUserMessageAt = now.toISOString();
  return {
    state: next,
    displayText: scan.displayText,
    choices: [...scan.choices],
    stateChanges: work.stateChanges,
    notifications: work.notifications,
    audioCommands: work.audioCommands,
    pendingContext: next.pendingContext,
    firedRules: work.firedRules,
    firedReactions: work.firedReactions,
    skippedEntries,
    malformedDirectives: malformed,
    aiRequests: work.aiRequests,
    warnings: work.warnings,
    events,
  };
}

export type DispatchResult = Omit<TurnResult, 'displayText' | 'choices' | 'skippedEntries' | 'malformedDirectives'>;

/**
 * Events between turns: an interface button's action (`{type: 'action', actionId}`) or a custom
 * event such as `{type: 'spatial:zone-enter', zone: 'forest'}`. Matched against rules and
 * reactions like turn events; the turn count does not advance (cooldowns count turns).
 */
export function dispatchEvents(
  world: EngineWorld,
  state: WorldState | Partial<WorldState> | null | undefined,
  events: readonly WorldEvent[],
  options: SessionOptions,
): DispatchResult {
  const next = cloneState(world, state);
  const work = newWork(world, next, next.turnCount, options, { user: '', ai: '' });
  work.queue.push(...events);
  const processed = drain(work);
  const music = resolveMusic(
    world,
    next.audio,
    { turn: next.turnCount, userMessage: '', aiReply: '', variables: next.variables, sessionSeed: sessionSeedOf(options), levelOnly: true },
    work.audioCommands,
  );
  work.audioCommands.push(...music);
  return {
    state: next,
    stateChanges: work.stateChanges,
    notifications: work.notifications,
    audioCommands: work.audioCommands,
    pendingContext: next.pendingContext,
    firedRules: work.firedRules,
    firedReactions: work.firedReactions,
    aiRequests: work.aiRequests,
    warnings: work.warnings,
    events: processed,
  };
}

export interface SessionStart extends DispatchResult {
  /** Enabled `greeting` entries by position, macros expanded: the first opens the chat. */
  greetings: string[];
}

/**
 * A new session: variables at their defaults; the `session:start` event run against rules
 * (`session-start` triggers) and reactions, so their context, directives and audio apply from
 * the first prompt; session-start music and the playlist (unless it waits for the first
 * message); and the greetings (enabled `greeting` entries by position, macros expanded): the
 * first opens the chat as the assistant's message, the others are alternatives.
 */
export function startSession(world: EngineWorld, options: SessionOptions): SessionStart {
  const state = normalizeState(world, null);
  const work = newWork(world, state, 0, options, { user: '', ai: '' });
  const greetings = world.entries
    .filter((entry) => entry.role === 'greeting' && entry.enabled !== false)
    .sort((left, right) => (left.position ?? 0) - (right.position ?? 0))
    .map((entry) => expandMacros(entry.content, work.macros).trim())
    .filter((text) => text !== '');
  work.queue.push({ type: 'session:start' });
  state.sessionStarted = true;
  const processed = drain(work);
  const music = resolveMusic(
    world,
    state.audio,
    { turn: 0, userMessage: '', aiReply: '', variables: state.variables, sessionSeed: sessionSeedOf(options), sessionStart: true },
    work.audioCommands,
  );
  work.audioCommands.push(...music);
  return {
    state,
    stateChanges: work.stateChanges,
    notifications: work.notifications,
    audioCommands: work.audioCommands,
    pendingContext: state.pendingContext,
    firedRules: work.firedRules,
    firedReactions: work.firedReactions,
    aiRequests: work.aiRequests,
    warnings: work.warnings,
    events: processed,
    greetings,
  };
}
