import { z } from 'zod';

/**
 * The zod schema of WorldDefinition 20.0.0 (seed 002 §2.1–§2.10, §8).
 *
 * Structure and bounds live here; cross-field checks (unique ids, references, reserved variable
 * ids, defaults that match their type) live in world-references.ts because they need the whole
 * world. Parsing fills every default, so the parsed world is the normalized world.
 *
 * Unknown fields: plain objects strip them (validateWorld reports each stripped field as a
 * warning, except a variable's `category`, which authoring tools send and the seed says to drop).
 * Folders, components, custom UI (legacy), the rootComponent, reaction triggers (`when`) and
 * emitted events are loose: their unknown fields are kept.
 */

export const WORLD_SCHEMA_VERSION = '20.0.0';

export const KEBAB_CASE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/**
 * Variable, entry and audio ids: kebab-case (seed 002) or snake_case (the public format's own
 * documentation uses it, and interface code reads variables by those ids), or a mix of the two.
 */
export const WORLD_ID_PATTERN = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;
/** Path segments that would reach an object's prototype: never written, never read. */
export const PROTOTYPE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];
/** Variable ids double as macro names; these would shadow a built-in macro. */
export const RESERVED_VARIABLE_IDS = ['audio', 'user', 'char', 'time', 'date'] as const;

export const CONDITION_OPERATORS = ['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'contains'] as const;
export const CONDITION_LOGICS = ['all', 'any'] as const;
export const ENTRY_ROLES = [
  'system',
  'character',
  'personality',
  'scenario',
  'lore',
  'plot',
  'style',
  'example',
  'greeting',
  'custom',
] as const;
export const ENTRY_API_ROLES = ['system', 'user', 'assistant'] as const;
export const ENTRY_SECTIONS = ['system-presets', 'examples', 'chat-history', 'post-history'] as const;
export const SECONDARY_KEYWORD_LOGICS = ['AND_ANY', 'AND_ALL', 'NOT_ANY', 'NOT_ALL'] as const;
export const VARIABLE_TYPES = ['number', 'string', 'boolean', 'json'] as const;
/** Directive operations of §2.5, also the `operation` of a modify-variable action. */
export const VARIABLE_OPERATIONS = ['set', 'add', 'subtract', 'multiply', 'toggle', 'append', 'merge', 'push', 'delete'] as const;
/** Which variable types each operation applies to. */
export const OPERATION_TYPES: Readonly<Record<(typeof VARIABLE_OPERATIONS)[number], readonly (typeof VARIABLE_TYPES)[number][]>> = {
  set: ['number', 'string', 'boolean', 'json'],
  add: ['number'],
  subtract: ['number'],
  multiply: ['number'],
  toggle: ['boolean'],
  append: ['string'],
  merge: ['json'],
  push: ['json'],
  delete: ['json'],
};
export const RULE_TRIGGER_TYPES = [
  'variable-crossed',
  'state-change',
  'turn-count',
  'session-start',
  'keyword',
  'ai-keyword',
  'every-turn',
  'action',
  'manual',
] as const;
/** `fire-rule` is this platform's extension: it fires a (manual) rule by id. */
export const RULE_ACTION_TYPES = [
  'modify-variable',
  'inject-directive',
  'remove-directive',
  'notify-player',
  'play-audio',
  'toggle-entry',
  'toggle-rule',
  'send-context',
  'fire-rule',
] as const;
export const INJECT_POSITIONS = ['top', 'before_char', 'after_char', 'auto', 'depth', 'bottom'] as const;
export const NOTIFY_STYLES = ['info', 'achievement', 'warning', 'danger'] as const;
export const PLAY_AUDIO_ACTIONS = ['play', 'stop', 'crossfade', 'volume'] as const;
export const AUDIO_TRACK_TYPES = ['bgm', 'sfx', 'ambient'] as const;
export const PLAYLIST_MODES = ['loop', 'shuffle', 'sequential'] as const;
export const CONDITIONAL_BGM_TRIGGERS = ['variable', 'ai-keyword', 'keyword', 'turn-count', 'session-start'] as const;
export const EDITOR_MODES = ['simple', 'advanced'] as const;

const itemId = z.string().regex(WORLD_ID_PATTERN, {
  message: 'must be a kebab-case or snake_case id: lowercase letters and digits in words joined by single hyphens or underscores, such as "iron-key" or "iron_key"',
});
/** Rule, reaction and conditional-music ids: any non-empty string (seed 002 §2.6 says only "string"), unique in its list. */
const freeId = z
  .string()
  .min(1)
  .refine((id) => !PROTOTYPE_KEYS.includes(id), { message: 'must not be "__proto__", "constructor" or "prototype"' });
const nonEmpty = z.string().min(1);
const count = z.number().int().min(0);
const seconds = z.number().min(0);
const stringList = z.array(z.string()).default(() => []);

export const conditionSchema = z.object({
  variableId: nonEmpty,
  operator: z.enum(CONDITION_OPERATORS),
  value: z.unknown().optional(),
});
const conditions = z.array(conditionSchema).default(() => []);
const conditionLogic = z.enum(CONDITION_LOGICS).default('all');

/** Seed 002 §2.2's defaults of the sampling settings (topK and minP have none). */
export const SAMPLING_DEFAULTS = { temperature: 1, topP: 1, frequencyPenalty: 0, presencePenalty: 0 } as const;

export const settingsSchema = z.object({
  maxTokens: z.number().int().min(1).default(12000),
  maxContext: z.number().int().min(1).default(200000),
  // Seed 002 §2.2's defaults: a validated definition carries them and every turn sends them.
  // topK and minP have none (seed: optional); unset, the request leaves them out.
  temperature: z.number().min(0).max(2).default(SAMPLING_DEFAULTS.temperature),
  topP: z.number().min(0).max(1).default(SAMPLING_DEFAULTS.topP),
  frequencyPenalty: z.number().min(-2).max(2).default(SAMPLING_DEFAULTS.frequencyPenalty),
  presencePenalty: z.number().min(-2).max(2).default(SAMPLING_DEFAULTS.presencePenalty),
  playerName: z.string().max(200).default('User'),
  lorebookScanDepth: count.default(2),
  lorebookRecursionDepth: count.default(0),
  topK: count.optional(),
  minP: z.number().min(0).max(1).optional(),
  structuredOutput: z.boolean().default(false),
  /**
   * Cache-friendly placement (issue 47): entries that fire this turn (by keyword, conditions or
   * recursion, in any section) and texts placed at a depth of the history are sent after the
   * latest message instead of at their place, so the prompt before them repeats turn to turn
   * and providers read it from their prompt cache. Optional: absent is off (20.0.0 stays readable both ways).
   */
  cacheFriendlyPlacement: z.boolean().optional(),
});

export const entrySchema = z.object({
  id: itemId,
  name: z.string().max(200),
  content: z.string(),
  role: z.enum(ENTRY_ROLES).default('custom'),
  apiRole: z.enum(ENTRY_API_ROLES).default('system'),
  section: z.enum(ENTRY_SECTIONS),
  position: z.number().default(0),
  enabled: z.boolean().default(true),
  keywords: stringList,
  conditions,
  conditionLogic,
  depth: count.nullable().default(null),
  matchWholeWords: z.boolean().default(false),
  secondaryKeywords: stringList,
  secondaryKeywordLogic: z.enum(SECONDARY_KEYWORD_LOGICS).default('AND_ANY'),
  preventRecursion: z.boolean().default(false),
  excludeRecursion: z.boolean().default(false),
  tags: stringList,
  folderId: z.string().nullable().default(null),
});

export const variableSchema = z.object({
  id: itemId,
  name: z.string().max(200),
  type: z.enum(VARIABLE_TYPES),
  defaultValue: z.unknown().optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  description: z.string().default(''),
  behaviorRules: z.string().default(''),
});

const variableCrossedTrigger = z.object({
  type: z.literal('variable-crossed'),
  variableId: nonEmpty,
  direction: z.enum(['rises-above', 'drops-below']),
  threshold: z.number(),
});
const stateChangeTrigger = z.object({ type: z.literal('state-change'), variableId: z.string().nullable().optional() });
const turnCountTrigger = z.object({
  type: z.literal('turn-count'),
  atTurn: z.number().int().min(1).nullable().optional(),
  everyNTurns: z.number().int().min(1).nullable().optional(),
});
const sessionStartTrigger = z.object({ type: z.literal('session-start') });
const keywordTrigger = z.object({
  type: z.literal('keyword'),
  keywords: z.array(nonEmpty).min(1),
  matchWholeWords: z.boolean().optional(),
});
const aiKeywordTrigger = z.object({
  type: z.literal('ai-keyword'),
  keywords: z.array(nonEmpty).min(1),
  matchWholeWords: z.boolean().optional(),
});
const everyTurnTrigger = z.object({ type: z.literal('every-turn') });
const actionTrigger = z.object({ type: z.literal('action'), actionId: nonEmpty });
const manualTrigger = z.object({ type: z.literal('manual') });

export const ruleTriggerSchema = z.discriminatedUnion('type', [
  variableCrossedTrigger,
  stateChangeTrigger,
  turnCountTrigger,
  sessionStartTrigger,
  keywordTrigger,
  aiKeywordTrigger,
  everyTurnTrigger,
  actionTrigger,
  manualTrigger,
]);

const modifyVariableAction = z.object({
  type: z.literal('modify-variable'),
  variableId: nonEmpty,
  operation: z.enum(VARIABLE_OPERATIONS),
  value: z.unknown().optional(),
});
const injectDirectiveAction = z.object({
  type: z.literal('inject-directive'),
  directiveId: nonEmpty,
  content: z.string(),
  position: z.enum(INJECT_POSITIONS).default('auto'),
  /** Messages from the end when position is `depth` (this platform's addition). */
  depth: count.nullable().optional(),
  persistent: z.boolean().default(false),
  duration: z.number().int().min(1).nullable().optional(),
});
const removeDirectiveAction = z.object({ type: z.literal('remove-directive'), directiveId: nonEmpty });
const notifyPlayerAction = z.object({
  type: z.literal('notify-player'),
  style: z.enum(NOTIFY_STYLES).default('info'),
  message: z.string(),
});
const playAudioAction = z.object({
  type: z.literal('play-audio'),
  trackId: nonEmpty,
  action: z.enum(PLAY_AUDIO_ACTIONS).default('play'),
});
const toggleEntryAction = z.object({ type: z.literal('toggle-entry'), entryId: nonEmpty, enabled: z.boolean().optional() });
const toggleRuleAction = z.object({ type: z.literal('toggle-rule'), ruleId: nonEmpty, enabled: z.boolean().optional() });
const sendContextAction = z.object({
  type: z.literal('send-context'),
  message: z.string(),
  role: z.enum(['system', 'user']).default('system'),
});
const fireRuleAction = z.object({ type: z.literal('fire-rule'), ruleId: nonEmpty });

export const ruleActionSchema = z.discriminatedUnion('type', [
  modifyVariableAction,
  injectDirectiveAction,
  removeDirectiveAction,
  notifyPlayerAction,
  playAudioAction,
  toggleEntryAction,
  toggleRuleAction,
  sendContextAction,
  fireRuleAction,
]);

export const ruleSchema = z.object({
  id: freeId,
  name: z.string().max(200),
  description: z.string().default(''),
  trigger: ruleTriggerSchema,
  conditions,
  conditionLogic,
  actions: z.array(ruleActionSchema),
  priority: z.number().default(0),
  enabled: z.boolean().default(true),
  cooldownTurns: count.nullable().default(null),
  maxFireCount: count.nullable().default(null),
});

const setEffect = z.object({
  type: z.literal('set'),
  path: nonEmpty,
  value: z.unknown().optional(),
  operation: z.enum(VARIABLE_OPERATIONS).optional(),
});
const emitEffect = z.object({
  type: z.literal('emit'),
  event: z.looseObject({ type: nonEmpty }),
});
export const reactionEffectSchema = z.discriminatedUnion('type', [setEffect, emitEffect]);

export const reactionSchema = z.object({
  id: freeId,
  name: z.string().max(200),
  when: z.looseObject({ eventType: nonEmpty }),
  conditions,
  conditionLogic,
  // Note: the seed (§2.7) names a reaction's effect list `then`
  then: z.array(reactionEffectSchema),
  enabled: z.boolean().optional(),
});

export const audioTrackSchema = z.object({
  id: itemId,
  name: z.string().max(200),
  type: z.enum(AUDIO_TRACK_TYPES),
  url: nonEmpty,
  loop: z.boolean().default(false),
  volume: z.number().min(0).max(1).default(1),
  fadeIn: seconds.nullable().default(null),
  fadeOut: seconds.nullable().default(null),
  maxDuration: z.number().gt(0).nullable().default(null),
});

export const bgmPlaylistSchema = z.object({
  tracks: z.array(nonEmpty),
  playMode: z.enum(PLAYLIST_MODES).default('loop'),
  gapSeconds: z.number().min(0).max(30).default(0),
  autoPlay: z.boolean().default(true),
  waitForFirstMessage: z.boolean().default(false),
});

export const conditionalBgmSchema = z.object({
  id: freeId,
  name: z.string().max(200),
  targetTrackId: nonEmpty,
  triggerType: z.enum(CONDITIONAL_BGM_TRIGGERS),
  conditions,
  conditionLogic,
  keywords: stringList,
  matchWholeWords: z.boolean().default(false),
  atTurn: z.number().int().min(1).nullable().default(null),
  everyNTurns: z.number().int().min(1).nullable().default(null),
  priority: z.number().default(0),
  fadeInDuration: seconds.nullable().default(null),
  fadeOutDuration: seconds.nullable().default(null),
  stopPreviousBGM: z.boolean().default(false),
  /** `default` (back to the playlist), `previous` (the track playing before), or a track id. */
  fallback: nonEmpty.default('default'),
});

/** §2.9. Unknown fields are kept. */
export const rootComponentSchema = z.looseObject({
  id: z.uuid({ message: 'must be a UUID' }),
  name: z.string(),
  entryFile: nonEmpty,
  files: z.record(z.string(), z.string()),
  updatedAt: z.union([z.string().min(1), z.number()]),
});

/** Fields of folders, components and custom UI are not specified; only an id is required, the rest is kept. */
export const entryFolderSchema = z.looseObject({ id: nonEmpty, name: z.string().optional() });
export const gameComponentSchema = z.looseObject({ id: nonEmpty.optional() });
export const customUIComponentSchema = z.looseObject({ id: nonEmpty.optional() });

/** A BCP 47 tag in its common shape: a 2–3 letter language, then subtags of 1–8 letters or digits. */
const BCP47 = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;

/**
 * The chat's background (issue 50): a colour (`#rgb` or `#rrggbb`) or an image among the world's
 * assets (`asset:<id>`); the player's bubbles keep their own colours over it.
 */
export const chatBackgroundSchema = z
  .string()
  .trim()
  .max(200)
  .regex(/^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|asset:[\w-]{1,100})$/, { message: 'must be a colour such as "#1e293b" or a world asset such as "asset:<id>"' });

/**
 * The character's voice as the author sets it (issue 50): the browser voice to prefer (by name, or
 * the first of a language), the provider's voice name for an OpenAI-compatible /audio/speech,
 * and the rate and pitch. The player may choose another; this is the default.
 */
export const characterVoiceSchema = z.object({
  browserVoice: z.string().trim().min(1).max(200).optional(),
  language: z.string().regex(BCP47, { message: 'must be a BCP 47 language tag such as "en-GB"' }).optional(),
  providerVoice: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[\w.:-]+$/, { message: 'letters, digits and . _ : - only' })
    .optional(),
  rate: z.number().min(0.5).max(2).optional(),
  pitch: z.number().min(0).max(2).optional(),
});

export const worldDefinitionSchema = z.object({
  /** Seed 002 §2.1: a UUID, generated when absent. */
  id: z.uuid({ message: 'must be a UUID' }).default(() => globalThis.crypto.randomUUID()),
  version: z.literal(WORLD_SCHEMA_VERSION),
  name: z.string().max(200).refine((name) => name.trim().length > 0, { message: 'must not be empty or blank' }),
  description: z.string().max(10000).default(''),
  author: z.string().max(200).default(''),
  language: z.string().regex(BCP47, { message: 'must be a BCP 47 language tag such as "en", "zh-Hans" or "pt-BR"' }).optional(),
  entries: z.array(entrySchema).default(() => []),
  variables: z.array(variableSchema).default(() => []),
  rules: z.array(ruleSchema).default(() => []),
  reactions: z.array(reactionSchema).optional(),
  rootComponent: rootComponentSchema.nullable().default(null),
  components: z.array(gameComponentSchema).default(() => []),
  audioTracks: z.array(audioTrackSchema).default(() => []),
  bgmPlaylist: bgmPlaylistSchema.nullable().default(null),
  conditionalBGM: z.array(conditionalBgmSchema).default(() => []),
  customUI: z.array(customUIComponentSchema).default(() => []),
  entryFolders: z.array(entryFolderSchema).default(() => []),
  customTags: stringList,
  customTagColors: z.record(z.string(), z.string()).default(() => ({})),
  editorMode: z.enum(EDITOR_MODES).default('simple'),
  settings: settingsSchema.prefault({}),
  /** Optional (issue 50): absent in older worlds, which keep the theme's own background and the player's voice. */
  chatBackground: chatBackgroundSchema.optional(),
  voice: characterVoiceSchema.optional(),
});

export type WorldDefinition = z.output<typeof worldDefinitionSchema>;
/** What an author may write: every defaulted field optional. */
export type WorldDefinitionInput = z.input<typeof worldDefinitionSchema>;
export type WorldSettings = z.output<typeof settingsSchema>;
export type CharacterVoice = z.output<typeof characterVoiceSchema>;
export type WorldCondition = z.output<typeof conditionSchema>;
export type WorldConditionOperator = (typeof CONDITION_OPERATORS)[number];
export type WorldConditionLogic = (typeof CONDITION_LOGICS)[number];
export type WorldEntry = z.output<typeof entrySchema>;
export type WorldEntryRole = (typeof ENTRY_ROLES)[number];
export type WorldEntrySection = (typeof ENTRY_SECTIONS)[number];
export type WorldVariable = z.output<typeof variableSchema>;
export type WorldVariableType = (typeof VARIABLE_TYPES)[number];
export type VariableOperation = (typeof VARIABLE_OPERATIONS)[number];
export type WorldRule = z.output<typeof ruleSchema>;
export type RuleTrigger = z.output<typeof ruleTriggerSchema>;
export type RuleTriggerType = RuleTrigger['type'];
export type RuleAction = z.output<typeof ruleActionSchema>;
export type RuleActionType = RuleAction['type'];
export type InjectDirectivePosition = (typeof INJECT_POSITIONS)[number];
export type WorldReaction = z.output<typeof reactionSchema>;
export type ReactionEffect = z.output<typeof reactionEffectSchema>;
export type AudioTrack = z.output<typeof audioTrackSchema>;
export type AudioTrackType = (typeof AUDIO_TRACK_TYPES)[number];
export type BgmPlaylist = z.output<typeof bgmPlaylistSchema>;
export type ConditionalBgm = z.output<typeof conditionalBgmSchema>;
export type RootComponent = z.output<typeof rootComponentSchema>;
export type EntryFolder = z.output<typeof entryFolderSchema>;
export type GameComponent = z.output<typeof gameComponentSchema>;
export type CustomUIComponent = z.output<typeof customUIComponentSchema>;
