import { conditionsHold } from './conditions.ts';
import { containsKeyword, type Haystack, prepareHaystack } from './keywords.ts';
import type { WorldState } from './state.ts';
import type { EngineEntry, EngineWorld } from './world-types.ts';

export type EntrySkipReason = 'conditions' | 'secondary-keywords' | 'budget';

/** An entry that would have applied this turn but did not, and why. */
export interface SkippedEntry {
  entryId: string;
  name: string;
  reason: EntrySkipReason;
  message: string;
}

export interface ActivatedEntry {
  entry: EngineEntry;
  /** `keyword` (recent messages), `conditions` (no keywords, conditions hold) or `recursion`. */
  via: 'keyword' | 'conditions' | 'recursion';
  /** 0 for recent messages; n for the n-th level of entries triggering entries. */
  level: number;
  /** The keyword that matched (keyword and recursion activations). */
  keyword?: string;
}

export interface EntrySelection {
  systemPresets: EngineEntry[];
  examples: EngineEntry[];
  postHistory: EngineEntry[];
  /** Chat-history entries that apply, in ascending position. */
  activated: ActivatedEntry[];
  /** Every keyword or condition activation, system-presets entries triggered in place included (for "what was sent"). */
  activations: ActivatedEntry[];
  skipped: SkippedEntry[];
}

/**
 * The texts scanned for keywords (seed 002 §2.2: `lorebookScanDepth` counts recent turns): the
 * latest message (the last of `messages`) plus the `depth` exchanges before it, an exchange being
 * a player message with the replies after it. Messages before the first player message (a
 * greeting) belong to the first exchange. Depth 0 scans the latest message alone.
 */
export function scanWindow(messages: readonly { role?: string; content: string }[], depth: number): string[] {
  if (messages.length === 0) return [];
  let start = messages.length - 1;
  let exchanges = 0;
  for (let index = messages.length - 2; index >= 0 && exchanges < depth; index--) {
    start = index;
    if (messages[index]?.role === 'user') exchanges++;
  }
  if (exchanges < depth) start = 0;
  return messages.slice(start).map((message) => message.content);
}

export function isEntryEnabled(entry: EngineEntry, state: WorldState): boolean {
  return state.entryEnabled[entry.id] ?? entry.enabled ?? true;
}

function byPosition(left: EngineEntry, right: EngineEntry): number {
  return (left.position ?? 0) - (right.position ?? 0);
}

function secondaryHolds(entry: EngineEntry, haystack: Haystack, wholeWords: boolean): boolean {
  const secondary = entry.secondaryKeywords?.filter((keyword) => keyword.trim() !== '') ?? [];
  if (secondary.length === 0) return true;
  const matches = secondary.filter((keyword) => containsKeyword(haystack, keyword, wholeWords)).length;
  switch (entry.secondaryKeywordLogic ?? 'AND_ANY') {
    case 'AND_ANY':
      return matches > 0;
    case 'AND_ALL':
      return matches === secondary.length;
    case 'NOT_ANY':
      return matches === 0;
    case 'NOT_ALL':
      return matches < secondary.length;
  }
}

function label(entry: EngineEntry): string {
  return entry.name || entry.id;
}

/**
 * Decides which entries apply to the next prompt. `scanMessages` are the recent message texts
 * (the caller passes the last `lorebookScanDepth` of them). Sections system-presets, examples
 * and post-history always apply when enabled and their conditions hold, except a system-presets
 * entry with keywords: it applies like a chat-history entry (keywords, secondary keywords,
 * conditions, recursion) and then sits at its position in step 1. A chat-history entry
 * applies when a keyword matches the scanned text (then secondary keywords and conditions must
 * also hold), or, when it has no keywords but has conditions, when those conditions hold.
 * Entries whose content mentions keywords of others trigger them for up to
 * `lorebookRecursionDepth` levels, except content of `preventRecursion` entries and targets
 * marked `excludeRecursion`.
 */
export function selectEntries(world: EngineWorld, state: WorldState, scanMessages: readonly string[]): EntrySelection {
  const selection: EntrySelection = { systemPresets: [], examples: [], postHistory: [], activated: [], activations: [], skipped: [] };
  const variables = state.variables;
  const candidates: EngineEntry[] = [];
  for (const entry of world.entries) {
    // Greetings open the chat as the first assistant message (startSession), not prompt text.
    if (!isEntryEnabled(entry, state) || entry.role === 'greeting') continue;
    // A system-presets entry with keywords is keyword-triggered too, and sent in its place in step 1
    // (SillyTavern's "before/after character" lorebook entries keep their place that way).
    if (entry.section === 'chat-history' || (entry.section === 'system-presets' && (entry.keywords ?? []).some((keyword) => keyword.trim() !== ''))) {
      candidates.push(entry);
      continue;
    }
    if (!conditionsHold(entry.conditions, entry.conditionLogic, variables)) {
      selection.skipped.push({ entryId: entry.id, name: label(entry), reason: 'conditions', message: `${label(entry)}: its variable conditions do not hold` });
      continue;
    }
    if (entry.section === 'system-presets') selection.systemPresets.push(entry);
    else if (entry.section === 'examples') selection.examples.push(entry);
    else selection.postHistory.push(entry);
  }
  selection.systemPresets.sort(byPosition);
  selection.examples.sort(byPosition);
  selection.postHistory.sort(byPosition);

  const scanned = prepareHaystack(scanMessages.join('\n'));
  const active = new Set<EngineEntry>();
  let lastLevel: EngineEntry[] = [];
  const tryActivate = (entry: EngineEntry, haystack: Haystack, level: number, primaryHaystack: Haystack): boolean => {
    const keywords = entry.keywords ?? [];
    const wholeWords = entry.matchWholeWords ?? false;
    if (!keywords.some((keyword) => keyword.trim() !== '')) {
      if (level > 0 || !entry.conditions || entry.conditions.length === 0) return false;
      if (!conditionsHold(entry.conditions, entry.conditionLogic, variables)) return false;
      selection.activated.push({ entry, via: 'conditions', level });
      return true;
    }
    const matched = keywords.find((keyword) => containsKeyword(primaryHaystack, keyword, wholeWords));
    if (matched === undefined) return false;
    if (!secondaryHolds(entry, haystack, wholeWords)) {
      selection.skipped.push({
        entryId: entry.id,
        name: label(entry),
        reason: 'secondary-keywords',
        message: `${label(entry)}: a keyword matched but the secondary keywords (${entry.secondaryKeywordLogic ?? 'AND_ANY'}) did not`,
      });
      return true;
    }
    if (!conditionsHold(entry.conditions, entry.conditionLogic, variables)) {
      selection.skipped.push({ entryId: entry.id, name: label(entry), reason: 'conditions', message: `${label(entry)}: a keyword matched but its variable conditions do not hold` });
      return true;
    }
    selection.activated.push({ entry, via: level === 0 ? 'keyword' : 'recursion', level, keyword: matched });
    return true;
  };

  for (const entry of candidates) {
    if (tryActivate(entry, scanned, 0, scanned)) {
      active.add(entry);
      if (selection.activated.at(-1)?.entry === entry) lastLevel.push(entry);
    }
  }
  const depth = Math.max(0, world.settings?.lorebookRecursionDepth ?? 0);
  for (let level = 1; level <= depth && lastLevel.length > 0; level++) {
    const recursionSource = lastLevel
      .filter((entry) => !entry.preventRecursion)
      .map((entry) => entry.content)
      .join('\n');
    lastLevel = [];
    if (recursionSource === '') break;
    const recursionText = prepareHaystack(recursionSource);
    const combined = prepareHaystack(`${scanMessages.join('\n')}\n${recursionSource}`);
    for (const entry of candidates) {
      if (active.has(entry) || entry.excludeRecursion) continue;
      if (tryActivate(entry, combined, level, recursionText)) {
        active.add(entry);
        if (selection.activated.at(-1)?.entry === entry) lastLevel.push(entry);
      }
    }
  }
  selection.activations = [...selection.activated];
  const inPlace = selection.activated.filter((activation) => activation.entry.section === 'system-presets');
  if (inPlace.length > 0) {
    selection.activated = selection.activated.filter((activation) => activation.entry.section !== 'system-presets');
    selection.systemPresets.push(...inPlace.map((activation) => activation.entry));
    selection.systemPresets.sort(byPosition);
  }
  selection.activated.sort((left, right) => byPosition(left.entry, right.entry));
  return selection;
}
