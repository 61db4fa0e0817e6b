export type { AudioCommand } from './audio-command.ts';
export { conditionHolds, conditionsHold, readVariable } from './conditions.ts';
export {
  CHOICES_DIRECTIVE,
  type DirectiveScan,
  displayedText,
  MAX_CHOICE_LENGTH,
  MAX_CHOICES,
  type MalformedDirective,
  type ParsedDirective,
  parseDirectives,
} from './directives.ts';
export { type ActivatedEntry, type EntrySelection, type EntrySkipReason, isEntryEnabled, scanWindow, type SkippedEntry, selectEntries } from './entries.ts';
export { type ExampleMessage, parseExampleChat } from './example-chat.ts';
export { dynamicBlockForPlayer, dynamicFormatBlock, staticFormatBlock } from './format-blocks.ts';
export { deepEqual, deleteAtPath, getAtPath, hasPrototypeSegment, JsonPathError, setAtPath } from './json-path.ts';
export { containsKeyword, matchesAnyKeyword, normalizeForMatch } from './keywords.ts';
export { expandMacros, humanizeDuration, MAX_MACRO_DEPTH, type MacroContext, type Persona, resolveUserName } from './macros.ts';
export { PLAYLIST_MARK, playlistStart, resolveMusic } from './music.ts';
export { applyOperation, isOperation, type Operand, type Operation, OPERATIONS, type OperationResult } from './operations.ts';
export { OFFICIAL_PRESET_IDS, officialPresets, type PresetEntry } from './presets.ts';
export {
  type AssembledPrompt,
  assemblePrompt,
  defaultCountTokens,
  EXAMPLE_CHAT_MARKER,
  type FiredEntry,
  type HistoryMessage,
  type MessageRole,
  NEW_CHAT_MARKER,
  type PromptMessage,
  type PromptOptions,
  toCacheMarkedMessages,
  toProviderMessages,
} from './prompt.ts';
export { estimatePromptCaching, type PromptCacheEstimate } from './prompt-cache-estimate.ts';
export { createRandom, hashString } from './random.ts';
export { reactionMatches } from './reactions.ts';
export { MAX_RULE_CHAIN_DEPTH, orderRules, triggerMatches } from './rules.ts';
export { buildMacroContext, type PartyMember, type SessionOptions } from './session-context.ts';
export {
  type ActiveDirective,
  type AudioState,
  createInitialState,
  type InjectPosition,
  normalizeState,
  type PendingContext,
  type RuleBookkeeping,
  type WorldState,
} from './state.ts';
export {
  type DispatchResult,
  dispatchEvents,
  MAX_EVENTS_PER_TURN,
  runTurn,
  type SessionStart,
  startSession,
  type TurnOptions,
  type TurnResult,
} from './turn.ts';
export type {
  AiRequest,
  EngineWarning,
  FiredReaction,
  FiredRule,
  Notification,
  NotificationStyle,
  StateChange,
  WorldEvent,
} from './turn-work.ts';
export type * from './world-types.ts';
