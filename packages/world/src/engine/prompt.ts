import { conditionsHold } from './conditions.ts';
import { type ActivatedEntry, type EntrySelection, isEntryEnabled, type SkippedEntry, scanWindow, selectEntries } from './entries.ts';
import { parseExampleChat } from './example-chat.ts';
import { dynamicFormatBlock, staticFormatBlock } from './format-blocks.ts';
import { describePersona, expandMacros, type MacroContext } from './macros.ts';
import { buildMacroContext, type SessionOptions } from './session-context.ts';
import { type ActiveDirective, normalizeState, type WorldState } from './state.ts';
import type { ApiRole, EngineEntry, EngineWorld } from './world-types.ts';

export type MessageRole = 'system' | 'user' | 'assistant';

export interface HistoryMessage {
  role: MessageRole;
  content: string;
}

/** One provider message, labelled with the §2.3 step (1–13) it belongs to. */
export interface PromptMessage {
  role: MessageRole;
  content: string;
  step: number;
  /** `entry:<id>`, `directive:<id>`, `history`, `persona`, `format:static`, ... */
  source: string;
  /** The last message before step 5: providers that cache prefixes cache up to here. */
  cacheBreakpoint?: true;
  /**
   * The latest history message (the player's): the rolling cache breakpoint. Everything before it
   * and it repeat in the next turn's prompt, so a provider that caches to here (Anthropic's
   * `cache_control`) reads it back next turn; what follows it (steps 11–13, and with
   * cache-friendly placement the fired entries) changes turn to turn.
   */
  historyBreakpoint?: true;
  marker?: 'example-chat' | 'new-chat';
}

export const EXAMPLE_CHAT_MARKER = '[Example Chat]';
export const NEW_CHAT_MARKER = '[Start a new Chat]';

export interface PromptOptions extends SessionOptions {
  /** The conversation so far, oldest first, ending with the player's latest message. */
  history: readonly HistoryMessage[];
  /** Step 8. */
  summary?: string | null;
  /** Step 9. */
  memory?: string | readonly string[] | null;
  /** Token counter for the budget; default ceil(characters / 4). */
  countTokens?: (text: string) => number;
  /** Tokens the prompt may use; default settings.maxContext − settings.maxTokens. */
  budgetTokens?: number;
}

export interface AssembledPrompt {
  messages: PromptMessage[];
  /** Index in `messages` of the cache breakpoint, or -1 when steps 1–4 are empty. */
  cacheBreakpointIndex: number;
  /** Keyword-triggered entries left out because the budget ran out. */
  droppedEntries: SkippedEntry[];
  /** Every entry that would have applied but did not (budget, conditions, secondary keywords). */
  skippedEntries: SkippedEntry[];
  /** Oldest history messages left out for the budget. */
  droppedHistory: number;
  tokenCount: number;
  /** Every entry that went into the prompt, and why (for "what was sent" and `world -- prompt`). */
  firedEntries: FiredEntry[];
}

/** An entry sent this turn: `always` (no keywords: sent whenever its conditions, if any, hold), or triggered by a keyword, its conditions or recursion. */
export interface FiredEntry {
  entryId: string;
  name: string;
  via: 'always' | 'keyword' | 'conditions' | 'recursion';
  /** The keyword that matched (keyword and recursion). */
  keyword?: string;
  /** The §2.3 step its text went to. */
  step: number;
}

export function defaultCountTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function roleOf(entry: EngineEntry): MessageRole {
  const role: ApiRole | undefined = entry.apiRole;
  return role === 'user' || role === 'assistant' ? role : 'system';
}

function entryMessage(entry: EngineEntry, step: number, macros: MacroContext): PromptMessage | null {
  const content = expandMacros(entry.content, macros).trim();
  return content === '' ? null : { role: roleOf(entry), content, step, source: `entry:${entry.id}` };
}

function directiveMessage(directive: ActiveDirective, step: number, macros: MacroContext): PromptMessage | null {
  const content = expandMacros(directive.content, macros).trim();
  return content === '' ? null : { role: 'system', content, step, source: `directive:${directive.id}` };
}

function compact<T>(items: readonly (T | null)[]): T[] {
  return items.filter((item): item is T => item !== null);
}

/**
 * Builds the provider messages in the 13-step order of §2.3:
 *  1 system-presets by position (with `top`, `before_char`, `after_char` directives),
 *  2 persona, 3 static format block, 4 examples under the example-chat marker,
 *  5 cache breakpoint (flag on the last message of 1–4), 6 keyword-triggered entries without a depth,
 *  7 new-chat marker, 8 summary, 9 session memory, 10 history with depth-injected entries and
 *  `depth` directives, 11 pending context, 12 dynamic format block with `auto` directives,
 *  13 post-history by position, then `bottom` directives.
 */
export function assemblePrompt(world: EngineWorld, state: WorldState | Partial<WorldState> | null | undefined, options: PromptOptions): AssembledPrompt {
  const current = normalizeState(world, state);
  const history = options.history;
  const lastOf = (role: MessageRole) => {
    for (let index = history.length - 1; index >= 0; index--) if (history[index]?.role === role) return history[index]?.content ?? '';
    return '';
  };
  const macros = buildMacroContext(world, current, options, current.turnCount + 1, {
    lastMessage: history.at(-1)?.content ?? '',
    lastUserMessage: lastOf('user'),
    lastCharMessage: lastOf('assistant'),
  });
  const countTokens = options.countTokens ?? defaultCountTokens;
  const settings = world.settings ?? {};
  const budget = options.budgetTokens ?? (settings.maxContext ?? 200_000) - (settings.maxTokens ?? 12_000);

  const selection = selectEntries(world, current, scanWindow(history, Math.max(0, settings.lorebookScanDepth ?? 2)));
  const directivesAt = (position: ActiveDirective['position']) => current.directives.filter((directive) => directive.position === position);

  // Step 1, with top / before_char / after_char directives.
  // Cache-friendly placement (settings.cacheFriendlyPlacement): nothing that fires sits above the
  // history; see storyPlacements.
  const cacheFriendly = settings.cacheFriendlyPlacement === true;
  const firedInPlace = new Set(selection.activations.filter((activation) => activation.entry.section === 'system-presets').map((activation) => activation.entry));
  const presets = cacheFriendly ? selection.systemPresets.filter((entry) => !firedInPlace.has(entry)) : selection.systemPresets;
  const placed = cacheFriendly ? storyPlacements(world, current, history, selection, Math.max(0, settings.lorebookScanDepth ?? 2)) : null;
  const firstChar = presets.findIndex((entry) => entry.role === 'character');
  let lastChar = -1;
  presets.forEach((entry, index) => {
    if (entry.role === 'character') lastChar = index;
  });
  const step1: (PromptMessage | null)[] = directivesAt('top').map((directive) => directiveMessage(directive, 1, macros));
  const beforeChar = directivesAt('before_char').map((directive) => directiveMessage(directive, 1, macros));
  const afterChar = directivesAt('after_char').map((directive) => directiveMessage(directive, 1, macros));
  presets.forEach((entry, index) => {
    if (index === firstChar) step1.push(...beforeChar);
    step1.push(entryMessage(entry, 1, macros));
    if (index === lastChar) step1.push(...afterChar);
  });
  if (firstChar < 0) step1.push(...beforeChar, ...afterChar);

  const step2: PromptMessage[] = personaMessages(options, macros.userName);
  const staticBlock = staticFormatBlock(world);
  const step3: PromptMessage[] = staticBlock ? [{ role: 'system', content: staticBlock, step: 3, source: 'format:static' }] : [];

  const step4: PromptMessage[] = [];
  for (const entry of selection.examples) {
    for (const block of parseExampleChat(entry.content, macros.charName, macros.userName)) {
      step4.push({ role: 'system', content: EXAMPLE_CHAT_MARKER, step: 4, source: `entry:${entry.id}`, marker: 'example-chat' });
      for (const message of block) {
        const content = expandMacros(message.content, macros);
        if (content.trim() !== '') step4.push({ role: message.role, content, step: 4, source: `entry:${entry.id}` });
      }
    }
  }

  const step7: PromptMessage[] = [{ role: 'system', content: NEW_CHAT_MARKER, step: 7, source: 'new-chat', marker: 'new-chat' }];
  const step8: PromptMessage[] = options.summary?.trim() ? [{ role: 'system', content: options.summary.trim(), step: 8, source: 'summary' }] : [];
  const memoryList = typeof options.memory === 'string' ? [options.memory] : [...(options.memory ?? [])];
  const memoryText = memoryList.map((item) => item.trim()).filter((item) => item !== '').join('\n');
  const step9: PromptMessage[] = memoryText ? [{ role: 'system', content: memoryText, step: 9, source: 'memory' }] : [];
  const step11: PromptMessage[] = current.pendingContext
    .filter((context) => context.content.trim() !== '')
    .map((context) => ({ role: context.role, content: context.content, step: 11, source: context.source }));
  const dynamicBlock = dynamicFormatBlock(
    world,
    current.variables,
    options.party?.map((member) => ({ name: member.name, values: current.playerVariables?.[member.id] ?? {} })),
  );
  const step12: PromptMessage[] = compact([
    dynamicBlock ? { role: 'system' as const, content: dynamicBlock, step: 12, source: 'format:dynamic' } : null,
    ...directivesAt('auto').map((directive) => directiveMessage(directive, 12, macros)),
  ]);
  const step13 = compact([
    ...selection.postHistory.map((entry) => entryMessage(entry, 13, macros)),
    ...directivesAt('bottom').map((directive) => directiveMessage(directive, 13, macros)),
  ]);
  const depthDirectives = compact(
    directivesAt('depth').map((directive) => {
      const message = directiveMessage(directive, 10, macros);
      return message ? { message, depth: directive.depth } : null;
    }),
  );

  // Budget: fixed parts and the latest message always; then triggered entries by position; then older history, newest first.
  const fixed = [...compact(step1), ...step2, ...step3, ...step4, ...step7, ...step8, ...step9, ...step11, ...step12, ...step13];
  let used = 0;
  for (const message of fixed) used += countTokens(message.content);
  for (const { message } of depthDirectives) used += countTokens(message.content);
  const latest = history.at(-1);
  if (latest) used += countTokens(latest.content);

  const droppedEntries: SkippedEntry[] = [];
  const step6: PromptMessage[] = [];
  const depthEntries: { message: PromptMessage; depth: number }[] = [];
  const anchored: { message: PromptMessage; at: number }[] = [];
  const late: PromptMessage[] = [];
  for (const { entry, at } of placed ?? selection.activated.map(({ entry }) => ({ entry, at: null }))) {
    const atDepth = typeof entry.depth === 'number';
    const message = entryMessage(entry, placed || atDepth ? 10 : 6, macros);
    if (!message) continue;
    const tokens = countTokens(message.content);
    if (used + tokens > budget) {
      droppedEntries.push({
        entryId: entry.id,
        name: entry.name || entry.id,
        reason: 'budget',
        message: `${entry.name || entry.id}: left out, the context budget (${budget} tokens) was full`,
      });
      continue;
    }
    used += tokens;
    if (placed) {
      if (at === null) late.push(message);
      else anchored.push({ message, at });
    } else if (atDepth) depthEntries.push({ message, depth: Math.max(0, Math.floor(entry.depth as number)) });
    else step6.push(message);
  }

  let keptFrom = history.length === 0 ? 0 : history.length - 1;
  for (let index = history.length - 2; index >= 0; index--) {
    const tokens = countTokens(history[index]?.content ?? '');
    if (used + tokens > budget) break;
    used += tokens;
    keptFrom = index;
  }
  const keptHistory = history.slice(keptFrom);

  // Step 10: history with depth insertions (depth 0 sits right before the latest message).
  // With cache-friendly placement, a fired entry sits before the message it first fired at and a
  // depth directive after the latest message (late), so no insertion moves from turn to turn.
  const insertions = placed ? [] : [...depthEntries, ...depthDirectives];
  if (placed) late.push(...depthDirectives.map(({ message }) => message));
  const step10: PromptMessage[] = [];
  const count = keptHistory.length;
  const byIndex = new Map<number, PromptMessage[]>();
  for (const { message, at: index } of anchored) {
    const at = Math.max(0, index - keptFrom);
    const list = byIndex.get(at) ?? [];
    list.push(message);
    byIndex.set(at, list);
  }
  for (const { message, depth } of insertions) {
    const at = Math.max(0, count - 1 - depth);
    const list = byIndex.get(at) ?? [];
    list.push(message);
    byIndex.set(at, list);
  }
  for (let index = 0; index < count; index++) {
    const inserted = byIndex.get(index);
    if (inserted) step10.push(...inserted);
    const message = keptHistory[index] as HistoryMessage;
    step10.push({ role: message.role, content: message.content, step: 10, source: 'history' });
  }
  if (count === 0) step10.push(...(byIndex.get(0) ?? []));
  const latestIndex = step10.findLastIndex((message) => message.source === 'history');
  // The rolling breakpoint only where the prompt above the latest message can repeat next turn:
  // with cache-friendly placement, or when nothing fired above the history or sits at a depth this
  // turn (otherwise it would be a cache write, at 1.25x the input price, that is never read).
  const stableAbove = placed !== null || (selection.activated.length === 0 && firedInPlace.size === 0 && depthDirectives.length === 0);
  if (latestIndex >= 0 && stableAbove) step10[latestIndex] = { ...(step10[latestIndex] as PromptMessage), historyBreakpoint: true };

  const head = [...compact(step1), ...step2, ...step3, ...step4];
  const cacheBreakpointIndex = head.length - 1;
  if (cacheBreakpointIndex >= 0) head[cacheBreakpointIndex] = { ...(head[cacheBreakpointIndex] as PromptMessage), cacheBreakpoint: true };
  const messages = [...head, ...step6, ...step7, ...step8, ...step9, ...step10, ...late, ...step11, ...step12, ...step13];
  const triggered = new Map([...(placed ?? []).flatMap(({ activation }) => (activation ? [activation] : [])), ...selection.activations].map((activation) => [activation.entry.id, activation]));
  const dropped = new Set(droppedEntries.map((entry) => entry.entryId));
  const firedEntries: FiredEntry[] = [];
  const seen = new Set<string>();
  for (const message of messages) {
    if (!message.source.startsWith('entry:')) continue;
    const entryId = message.source.slice('entry:'.length);
    if (seen.has(entryId) || dropped.has(entryId)) continue;
    seen.add(entryId);
    const entry = world.entries.find((candidate) => candidate.id === entryId);
    const activation = triggered.get(entryId);
    firedEntries.push({
      entryId,
      name: entry?.name || entryId,
      via: activation?.via ?? 'always',
      ...(activation?.keyword !== undefined ? { keyword: activation.keyword } : {}),
      step: message.step,
    });
  }
  return {
    messages,
    cacheBreakpointIndex,
    firedEntries,
    droppedEntries,
    skippedEntries: [...selection.skipped, ...droppedEntries],
    droppedHistory: keptFrom,
    tokenCount: used,
  };
}

/** Where an entry goes with cache-friendly placement: before history message `at`, or after the latest message (`null`). */
interface StoryPlacement {
  entry: EngineEntry;
  at: number | null;
  activation?: ActivatedEntry;
}

/** scanWindow(history.slice(0, end + 1), depth) without copying the history before `end`. */
function windowEndingAt(history: readonly HistoryMessage[], end: number, depth: number): string[] {
  let start = end;
  let exchanges = 0;
  for (let index = end - 1; index >= 0 && exchanges < depth; index--) {
    start = index;
    if (history[index]?.role === 'user') exchanges++;
  }
  if (exchanges < depth) start = 0;
  return history.slice(start, end + 1).map((message) => message.content);
}

/**
 * The keyword activations of past turns' scan windows (conditions left out: the caller checks
 * them with today's variables), remembered per world object and switched entries: a session's
 * turns scan the same past windows again every turn, so each is scanned once. Bounded: cleared
 * past 4,000 windows.
 */
const PAST_WINDOWS_MAX = 4000;
const pastWindows = new WeakMap<EngineWorld, { keywordWorld: EngineWorld; enabled: string; windows: Map<string, ActivatedEntry[]> }>();
function pastSelections(world: EngineWorld, state: WorldState): (window: string[]) => ActivatedEntry[] {
  const enabled = JSON.stringify(state.entryEnabled);
  let cached = pastWindows.get(world);
  if (!cached || cached.enabled !== enabled) {
    const keywordWorld = { ...world, entries: world.entries.map((entry) => (entry.conditions?.length ? { ...entry, conditions: [] } : entry)) };
    cached = { keywordWorld, enabled, windows: new Map() };
    pastWindows.set(world, cached);
  }
  const { keywordWorld, windows } = cached;
  const byId = new Map(world.entries.map((entry) => [entry.id, entry]));
  return (window) => {
    const key = window.join('\u0000');
    let activations = windows.get(key);
    if (!activations) {
      if (windows.size >= PAST_WINDOWS_MAX) windows.clear();
      // the world's own entry objects, not the condition-free copies
      activations = selectEntries(keywordWorld, state, window).activations.map((activation) => ({ ...activation, entry: byId.get(activation.entry.id) ?? activation.entry }));
      windows.set(key, activations);
    }
    return activations;
  };
}

/**
 * Cache-friendly placement (settings.cacheFriendlyPlacement, issue 47): an entry that fires by a
 * keyword (or recursion), in any section, is written into the story right before the message it
 * first fired at in this history, and stays there on later turns while it is enabled and its
 * conditions hold, whether or not its keyword is still in the scanned messages; the prompt
 * before the latest message then only grows at its end, and a provider reads it back from its
 * prompt cache. Entries that apply by their conditions alone go after the latest message. The
 * first firings are found by scanning each player message's window as that turn scanned it
 * (with today's variables). Ordered by place, then by position.
 */
function storyPlacements(world: EngineWorld, state: WorldState, history: readonly HistoryMessage[], selection: EntrySelection, scanDepth: number): StoryPlacement[] {
  const first = new Map<EngineEntry, { at: number; activation: ActivatedEntry }>();
  const last = history.length - 1;
  const memo = pastSelections(world, state);
  for (let index = 0; index <= last; index++) {
    if (index < last && history[index]?.role !== 'user') continue;
    const activations = index === last ? selection.activations : memo(windowEndingAt(history, index, scanDepth));
    for (const activation of activations) {
      if (activation.via !== 'conditions' && !first.has(activation.entry)) first.set(activation.entry, { at: index, activation });
    }
  }
  const out: StoryPlacement[] = [];
  for (const [entry, { at, activation }] of first) {
    if (isEntryEnabled(entry, state) && conditionsHold(entry.conditions, entry.conditionLogic, state.variables)) out.push({ entry, at, activation });
  }
  for (const activation of selection.activated) if (activation.via === 'conditions') out.push({ entry: activation.entry, at: null });
  const rank = (placement: StoryPlacement) => placement.at ?? Number.MAX_SAFE_INTEGER;
  return out.sort((left, right) => rank(left) - rank(right) || (left.entry.position ?? 0) - (right.entry.position ?? 0));
}

/**
 * Step 2: the active persona under the player's name; in a room (`party`), every player who has
 * one, each under the name their messages carry, in one block that says who plays.
 */
function personaMessages(options: PromptOptions, userName: string): PromptMessage[] {
  if (!options.party?.length) {
    const personaText = describePersona(options.persona ?? null);
    return personaText ? [{ role: 'system', content: `## ${userName}\n${personaText}`, step: 2, source: 'persona' }] : [];
  }
  const lines = [`## Players\n${options.party.map((member) => member.name).join(', ')} play together; each of their messages starts with its writer's name.`];
  for (const member of options.party) {
    const text = describePersona(member.persona);
    if (text) lines.push(`### ${member.name}\n${text}`);
  }
  return [{ role: 'system', content: lines.join('\n\n'), step: 2, source: 'persona' }];
}

/**
 * The provider messages with the prompt-cache breakpoints (the end of the stable head and the
 * latest history message) marked `cache: true`: the AI client turns them into Anthropic's
 * `cache_control` (and OpenRouter's for Claude models) and leaves them out for everyone else.
 */
export function toCacheMarkedMessages(messages: readonly PromptMessage[]): { role: MessageRole; content: string; cache?: true }[] {
  return messages.map(({ role, content, cacheBreakpoint, historyBreakpoint }) => (cacheBreakpoint || historyBreakpoint ? { role, content, cache: true as const } : { role, content }));
}

/** Strips the engine's labels: what an OpenAI-compatible provider receives. */
export function toProviderMessages(messages: readonly PromptMessage[]): { role: MessageRole; content: string }[] {
  return messages.map(({ role, content }) => ({ role, content }));
}
