/**
 * The narrow view of a world that the engine reads. The schema package's normalized
 * `WorldDefinition` is assignable to `EngineWorld`; tests build small worlds inline against it.
 * Every list is readonly so both parsed worlds and literal fixtures fit.
 */

export type ConditionOperator = 'eq' | 'neq' | 'gt' | 'lt' | 'gte' | 'lte' | 'contains';
export type ConditionLogic = 'all' | 'any';

export interface EngineCondition {
  readonly variableId: string;
  readonly operator: ConditionOperator;
  readonly value?: unknown;
}

export type EntrySection = 'system-presets' | 'examples' | 'chat-history' | 'post-history';
export type ApiRole = 'system' | 'user' | 'assistant';
export type SecondaryKeywordLogic = 'AND_ANY' | 'AND_ALL' | 'NOT_ANY' | 'NOT_ALL';

export interface EngineEntry {
  readonly id: string;
  readonly name?: string;
  readonly content: string;
  readonly role?: string;
  readonly apiRole?: ApiRole;
  readonly section: EntrySection;
  readonly position?: number;
  readonly enabled?: boolean;
  readonly keywords?: readonly string[];
  readonly conditions?: readonly EngineCondition[];
  readonly conditionLogic?: ConditionLogic;
  readonly depth?: number | null;
  readonly matchWholeWords?: boolean;
  readonly secondaryKeywords?: readonly string[];
  readonly secondaryKeywordLogic?: SecondaryKeywordLogic;
  readonly preventRecursion?: boolean;
  readonly excludeRecursion?: boolean;
}

export type VariableType = 'number' | 'string' | 'boolean' | 'json';

export interface EngineVariable {
  readonly id: string;
  readonly name?: string;
  readonly type: VariableType;
  readonly defaultValue?: unknown;
  readonly min?: number | null;
  readonly max?: number | null;
  readonly description?: string;
  readonly behaviorRules?: string;
}

export interface EngineRuleTrigger {
  readonly type: string;
  readonly variableId?: string | null;
  readonly direction?: string;
  readonly threshold?: number;
  readonly atTurn?: number | null;
  readonly everyNTurns?: number | null;
  readonly keywords?: readonly string[];
  readonly matchWholeWords?: boolean;
  readonly actionId?: string;
}

export interface EngineRuleAction {
  readonly type: string;
  readonly variableId?: string;
  readonly operation?: string;
  readonly value?: unknown;
  readonly directiveId?: string;
  readonly content?: string;
  readonly position?: string;
  readonly depth?: number | null;
  readonly persistent?: boolean;
  readonly duration?: number | null;
  readonly style?: string;
  readonly message?: string;
  readonly trackId?: string;
  readonly action?: string;
  readonly entryId?: string;
  readonly enabled?: boolean;
  readonly ruleId?: string;
  readonly role?: string;
}

export interface EngineRule {
  readonly id: string;
  readonly name?: string;
  readonly trigger: EngineRuleTrigger;
  readonly conditions?: readonly EngineCondition[];
  readonly conditionLogic?: ConditionLogic;
  readonly actions: readonly EngineRuleAction[];
  readonly priority?: number;
  readonly enabled?: boolean;
  readonly cooldownTurns?: number | null;
  readonly maxFireCount?: number | null;
}

export type EngineEventPayload = { readonly type: string } & { readonly [member: string]: unknown };

export interface EngineReactionEffect {
  readonly type: string;
  readonly path?: string;
  readonly value?: unknown;
  readonly operation?: string;
  readonly event?: { readonly type: string; readonly [member: string]: unknown };
}

export interface EngineReaction {
  readonly id: string;
  readonly name?: string;
  readonly when: { readonly eventType: string; readonly [member: string]: unknown };
  readonly conditions?: readonly EngineCondition[];
  readonly conditionLogic?: ConditionLogic;
  readonly then: readonly EngineReactionEffect[];
  readonly enabled?: boolean;
}

export interface EngineAudioTrack {
  readonly id: string;
  readonly name?: string;
  readonly type: 'bgm' | 'sfx' | 'ambient';
  readonly url?: string;
  readonly loop?: boolean;
  readonly volume?: number;
  readonly fadeIn?: number | null;
  readonly fadeOut?: number | null;
  readonly maxDuration?: number | null;
}

export interface EngineBgmPlaylist {
  readonly tracks: readonly string[];
  readonly playMode: 'loop' | 'shuffle' | 'sequential';
  readonly gapSeconds?: number;
  readonly autoPlay?: boolean;
  readonly waitForFirstMessage?: boolean;
}

export interface EngineConditionalBgm {
  readonly id: string;
  readonly name?: string;
  readonly targetTrackId: string;
  readonly triggerType: 'variable' | 'ai-keyword' | 'keyword' | 'turn-count' | 'session-start';
  readonly conditions?: readonly EngineCondition[];
  readonly conditionLogic?: ConditionLogic;
  readonly keywords?: readonly string[];
  readonly matchWholeWords?: boolean;
  readonly atTurn?: number | null;
  readonly everyNTurns?: number | null;
  readonly priority?: number;
  readonly fadeInDuration?: number | null;
  readonly fadeOutDuration?: number | null;
  readonly stopPreviousBGM?: boolean;
  readonly fallback?: string | null;
}

export interface EngineSettings {
  readonly maxTokens?: number;
  readonly maxContext?: number;
  readonly playerName?: string;
  readonly lorebookScanDepth?: number;
  readonly lorebookRecursionDepth?: number;
  /** Fired entries and depth insertions after the latest message (prompt.ts, docs/WORLDS.md). */
  readonly cacheFriendlyPlacement?: boolean;
}

export interface EngineWorld {
  readonly name: string;
  readonly entries: readonly EngineEntry[];
  readonly variables: readonly EngineVariable[];
  readonly rules?: readonly EngineRule[];
  readonly reactions?: readonly EngineReaction[] | null;
  readonly audioTracks?: readonly EngineAudioTrack[];
  readonly bgmPlaylist?: EngineBgmPlaylist | null;
  readonly conditionalBGM?: readonly EngineConditionalBgm[];
  readonly settings?: EngineSettings;
}
