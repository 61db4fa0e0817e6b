import type { PathSegment } from '../schema/issue-path.ts';
import type { ReportBuilder } from './import-report.ts';

/**
 * SillyTavern lorebooks → chat-history entries (and always-sent entries for `constant` ones).
 * Two layouts exist: a World Info file (`entries` keyed by uid, `key`/`keysecondary`/`disable`,
 * numeric `position` and `selectiveLogic`) and a card's embedded `character_book` (`entries` list,
 * `keys`/`secondary_keys`/`enabled`, its SillyTavern details under `extensions`).
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.trim() !== '') : []);

/** SillyTavern's world_info_logic: 0 AND_ANY, 1 NOT_ALL, 2 NOT_ANY, 3 AND_ALL. */
const LOGIC = ['AND_ANY', 'NOT_ALL', 'NOT_ANY', 'AND_ALL'] as const;
/** SillyTavern's world_info_position numbers. */
const POSITION_NAMES = ['before character', 'after character', "top of author's note", "bottom of author's note", 'at depth', 'top of example messages', 'bottom of example messages'];

/** Fields each converter reads; any other field with a value is reported as dropped. */
const READ_FIELDS = new Set([
  'uid', 'id', 'key', 'keys', 'keysecondary', 'secondary_keys', 'comment', 'name', 'content', 'constant', 'selective', 'selectiveLogic',
  'order', 'insertion_order', 'position', 'depth', 'disable', 'enabled', 'excludeRecursion', 'preventRecursion', 'matchWholeWords', 'extensions',
  'displayIndex', 'role',
]);
const READ_EXTENSIONS = new Set(['position', 'depth', 'selectiveLogic', 'exclude_recursion', 'prevent_recursion', 'match_whole_words', 'display_index', 'role']);

function meaningful(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

/**
 * SillyTavern's own defaults of an entry's fields (and of a card book entry's `extensions`): a
 * field at its default loses nothing when it is not kept, so it is not reported as dropped.
 */
const ST_DEFAULTS: Record<string, unknown> = {
  probability: 100,
  useProbability: true,
  groupWeight: 100,
  addMemo: true,
  role: 0,
  vectorized: false,
  case_sensitive: false,
  caseSensitive: false,
  priority: 10,
};
/** Written by SillyTavern's card export whatever the entry holds (`use_regex: true`): no meaning of its own. */
const ALWAYS_WRITTEN = new Set(['use_regex']);
const atDefault = (field: string, value: unknown) => !meaningful(value) || ALWAYS_WRITTEN.has(field) || (field in ST_DEFAULTS && ST_DEFAULTS[field] === value);

/** SillyTavern V1's `<USER>` and `<BOT>` placeholders are `{{user}}` and `{{char}}` (card fields and lorebook entries alike). */
export function placeholders(value: string, path: PathSegment[], report: ReportBuilder): string {
  if (!/<USER>|<BOT>/i.test(value)) return value;
  report.converted(path, '<USER>/<BOT> → {{user}}/{{char}}');
  return value.replace(/<USER>/gi, '{{user}}').replace(/<BOT>/gi, '{{char}}');
}

/** SillyTavern's depth role numbers: 0 system, 1 user, 2 assistant. */
const DEPTH_ROLES = ['system', 'user', 'assistant'] as const;

/** Where an entry sat relative to the character's description (before/after character). */
export type LorePlacement = 'before-char' | 'after-char';

/** An always-sent entry at a depth: this platform sends it as a persistent directive injected at that depth from the session's start. */
export interface DepthInjection {
  id: string;
  name: string;
  content: string;
  depth: number;
  enabled: boolean;
  order: number;
}

export interface ConvertedLore {
  entries: Json[];
  /** Entries placed before or after the character: the card puts them around its description. */
  placements: Map<Json, LorePlacement>;
  /** Constant entries at a depth, to become session-start rules (see depthRules). */
  injections: DepthInjection[];
  /** The id each input entry became (an entry's, or a depth rule's directive id), in the input's order; null for an item that is not an entry. */
  ids: (string | null)[];
}

/**
 * A session-start rule per always-sent depth entry: it injects the text as a persistent directive
 * at that depth (an entry without keywords is never sent from chat-history, and an always-sent
 * section has no depth).
 */
export function depthRules(injections: readonly DepthInjection[]): Json[] {
  return injections.map((injection) => ({
    id: `${injection.id}-at-depth`,
    name: `${injection.name} (always, at depth ${injection.depth})`.slice(0, 200),
    description: 'Imported from SillyTavern: an always-sent text at a fixed depth of the chat.',
    trigger: { type: 'session-start' },
    actions: [{ type: 'inject-directive', directiveId: injection.id, content: injection.content, position: 'depth', depth: injection.depth, persistent: true }],
    priority: 0,
    enabled: injection.enabled,
  }));
}

/**
 * Converts lorebook entries. `path` is where the entries sit in the input (`entries` or
 * `data.character_book.entries`); `firstPosition` offsets positions; `idPrefix` keeps ids unique.
 */
export function convertLorebook(rawEntries: unknown, path: PathSegment[], report: ReportBuilder, idPrefix = 'lore'): ConvertedLore {
  const list: Array<{ key: PathSegment; item: Json }> = [];
  const ids: (string | null)[] = [];
  const slots = new Map<Json, number>();
  if (Array.isArray(rawEntries)) {
    rawEntries.forEach((item, index) => {
      ids.push(null);
      if (isObject(item)) {
        slots.set(item, index);
        list.push({ key: index, item });
      }
    });
  } else if (isObject(rawEntries)) {
    for (const [key, item] of Object.entries(rawEntries)) {
      ids.push(null);
      if (isObject(item)) {
        slots.set(item, ids.length - 1);
        list.push({ key, item });
      }
    }
  }
  const used = new Set<string>();
  const out: Json[] = [];
  const placements = new Map<Json, LorePlacement>();
  const injections: DepthInjection[] = [];
  list.forEach(({ key, item }, index) => {
    const at = [...path, key];
    const ext = isObject(item.extensions) ? item.extensions : {};
    const uid = typeof item.uid === 'number' || typeof item.uid === 'string' ? item.uid : typeof item.id === 'number' || typeof item.id === 'string' ? item.id : index;
    let id = `${idPrefix}-${String(uid).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || index}`;
    while (used.has(id)) id = `${id}-${index}`;
    used.add(id);
    ids[slots.get(item)!] = id;
    const keywords = strings(item.key ?? item.keys);
    const secondary = strings(item.keysecondary ?? item.secondary_keys);
    const selective = item.selective !== false;
    const logicNumber = typeof item.selectiveLogic === 'number' ? item.selectiveLogic : typeof ext.selectiveLogic === 'number' ? ext.selectiveLogic : 0;
    const logic = LOGIC[logicNumber] ?? 'AND_ANY';
    if (LOGIC[logicNumber] === undefined) report.defaulted([...at, 'selectiveLogic'], `unknown logic ${logicNumber}; AND_ANY used`);
    const positionNumber =
      typeof item.position === 'number' ? item.position : typeof ext.position === 'number' ? ext.position : item.position === 'after_char' ? 1 : 0;
    const roleNumber = typeof item.role === 'number' ? item.role : typeof ext.role === 'number' ? ext.role : 0;
    const depthValue = typeof item.depth === 'number' ? item.depth : typeof ext.depth === 'number' ? ext.depth : 4;
    // SillyTavern's depth 0 is after the last message and 1 just before it; here 0 is just before it.
    const depth = Math.max(0, Math.floor(depthValue) - 1);
    const order = typeof item.order === 'number' ? item.order : typeof item.insertion_order === 'number' ? item.insertion_order : index;
    const enabled = typeof item.disable === 'boolean' ? !item.disable : typeof item.enabled === 'boolean' ? item.enabled : true;
    const constant = item.constant === true;
    const name = (typeof item.comment === 'string' && item.comment.trim()) || (typeof item.name === 'string' && item.name.trim()) || keywords[0] || `Entry ${String(uid)}`;
    const entry: Json = {
      id,
      name: name.slice(0, 200),
      content: typeof item.content === 'string' ? placeholders(item.content, [...at, 'content'], report) : '',
      role: 'lore',
      apiRole: positionNumber === 4 ? (DEPTH_ROLES[roleNumber] ?? 'system') : 'system',
      section: 'chat-history',
      position: order,
      enabled,
      keywords,
      secondaryKeywords: selective ? secondary : [],
      secondaryKeywordLogic: logic,
      depth: positionNumber === 4 ? depth : null,
      matchWholeWords: item.matchWholeWords === true || ext.match_whole_words === true,
      preventRecursion: item.preventRecursion === true || ext.prevent_recursion === true,
      excludeRecursion: item.excludeRecursion === true || ext.exclude_recursion === true,
    };
    if (!selective && secondary.length > 0) report.dropped([...at, 'keysecondary'], 'secondary keys are switched off (selective: false), so they were not kept');
    if (constant && positionNumber === 4 && depthValue >= 1) {
      // Always sent, at its depth: a session-start rule injects it there (see depthRules).
      injections.push({ id, name: entry.name as string, content: entry.content as string, depth, enabled, order });
      report.converted([...at, 'constant'], `constant entry at depth ${depthValue} → rule "${id}-at-depth" injects it there from the session's start (persistent)${roleNumber !== 0 ? `; its role (${DEPTH_ROLES[roleNumber] ?? roleNumber}) is sent as system` : ''}`);
      for (const [field, value] of Object.entries(item)) {
        if (!READ_FIELDS.has(field) && !atDefault(field, value)) report.dropped([...at, field], `SillyTavern's "${field}" has no counterpart in a world here`);
      }
      return;
    }
    if (constant) {
      // Always sent: an always-sent section (post-history for the author's-note-bottom and example-bottom positions).
      // Depth 0 (after the last message) is where post-history goes.
      const section = positionNumber === 3 || positionNumber === 6 || positionNumber === 4 ? 'post-history' : 'system-presets';
      entry.section = section;
      entry.keywords = [];
      entry.secondaryKeywords = [];
      entry.depth = null;
      if (positionNumber === 0 || positionNumber === 1) placements.set(entry, positionNumber === 0 ? 'before-char' : 'after-char');
      report.converted([...at, 'constant'], `constant entry (${POSITION_NAMES[positionNumber] ?? `position ${positionNumber}`}) → section "${section}", always sent`);
    } else if (positionNumber === 0 || positionNumber === 1) {
      // Keyword-triggered where SillyTavern puts it: step 1, around the character's description.
      entry.section = 'system-presets';
      placements.set(entry, positionNumber === 0 ? 'before-char' : 'after-char');
    } else if (positionNumber === 4 && depthValue < 1) {
      report.converted([...at, 'depth'], 'depth 0 (after the last message) → just before the latest message (a keyword-triggered entry cannot follow it here)');
    } else if (positionNumber !== 4) {
      report.converted([...at, 'position'], `${POSITION_NAMES[positionNumber] ?? `position ${positionNumber}`} → keyword-triggered chat-history entry (step 6 of the prompt)`);
    }
    if (!constant && keywords.length === 0) report.converted([...at, 'key'], 'no keys: the entry is never sent until keywords are added');
    for (const [field, value] of Object.entries(item)) {
      if (!READ_FIELDS.has(field) && !atDefault(field, value)) report.dropped([...at, field], `SillyTavern's "${field}" has no counterpart in a world here`);
    }
    for (const [field, value] of Object.entries(ext)) {
      if (!READ_EXTENSIONS.has(field) && !atDefault(field, value)) report.dropped([...at, 'extensions', field], `SillyTavern's "${field}" has no counterpart in a world here`);
    }
    out.push(entry);
  });
  return { entries: out, placements, injections, ids };
}

/** A World Info file: `{entries: {uid: entry}}` (or a list), optionally with a name. */
export function isWorldInfo(input: Json): boolean {
  return !('version' in input) && !('spec' in input) && (isObject(input.entries) || (Array.isArray(input.entries) && input.entries.every((entry) => isObject(entry) && ('key' in entry || 'keys' in entry))));
}

export function convertWorldInfo(input: Json, report: ReportBuilder, fallbackName: string): Json {
  const name = typeof input.name === 'string' && input.name.trim() !== '' ? input.name.trim() : fallbackName;
  if (name === fallbackName) report.defaulted(['name'], `the lorebook has no name; "${fallbackName}" used`);
  for (const [field, value] of Object.entries(input)) {
    if (!['entries', 'name', 'description'].includes(field) && meaningful(value)) report.dropped([field], `World Info's "${field}" has no counterpart in a world here`);
  }
  const lore = convertLorebook(input.entries, ['entries'], report);
  // A lorebook alone has no character: {{char}} is the world's name (the engine's default).
  const naming = lore.entries.filter((entry) => /\{\{char\}\}/i.test(String(entry.content))).length + lore.injections.filter((injection) => /\{\{char\}\}/i.test(injection.content)).length;
  if (naming > 0) {
    report.warn('entries', `a lorebook has no character: {{char}} in ${naming} entr${naming === 1 ? 'y' : 'ies'} becomes the world's name, "${name.slice(0, 200)}" (rename the world, or add a character entry and name it there)`);
  }
  return {
    version: '20.0.0',
    name: name.slice(0, 200),
    description: typeof input.description === 'string' ? input.description : '',
    entries: lore.entries,
    ...(lore.injections.length > 0 ? { rules: depthRules(lore.injections) } : {}),
  };
}
