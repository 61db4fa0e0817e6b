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
  'displayIndex',
]);
const READ_EXTENSIONS = new Set(['position', 'depth', 'selectiveLogic', 'exclude_recursion', 'prevent_recursion', 'match_whole_words', 'display_index']);

function meaningful(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

export interface ConvertedLore {
  entries: Json[];
}

/**
 * Converts lorebook entries. `path` is where the entries sit in the input (`entries` or
 * `data.character_book.entries`); `firstPosition` offsets positions; `idPrefix` keeps ids unique.
 */
export function convertLorebook(rawEntries: unknown, path: PathSegment[], report: ReportBuilder, idPrefix = 'lore'): Json[] {
  const list: Array<{ key: PathSegment; item: Json }> = [];
  if (Array.isArray(rawEntries)) rawEntries.forEach((item, index) => isObject(item) && list.push({ key: index, item }));
  else if (isObject(rawEntries)) for (const [key, item] of Object.entries(rawEntries)) if (isObject(item)) list.push({ key, item });
  const used = new Set<string>();
  const out: Json[] = [];
  list.forEach(({ key, item }, index) => {
    const at = [...path, key];
    const ext = isObject(item.extensions) ? item.extensions : {};
    const uid = typeof item.uid === 'number' || typeof item.uid === 'string' ? item.uid : typeof item.id === 'number' || typeof item.id === 'string' ? item.id : index;
    let id = `${idPrefix}-${String(uid).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || index}`;
    while (used.has(id)) id = `${id}-${index}`;
    used.add(id);
    const keywords = strings(item.key ?? item.keys);
    const secondary = strings(item.keysecondary ?? item.secondary_keys);
    const selective = item.selective !== false;
    const logicNumber = typeof item.selectiveLogic === 'number' ? item.selectiveLogic : typeof ext.selectiveLogic === 'number' ? ext.selectiveLogic : 0;
    const logic = LOGIC[logicNumber] ?? 'AND_ANY';
    if (LOGIC[logicNumber] === undefined) report.defaulted([...at, 'selectiveLogic'], `unknown logic ${logicNumber}; AND_ANY used`);
    const positionNumber =
      typeof item.position === 'number' ? item.position : typeof ext.position === 'number' ? ext.position : item.position === 'after_char' ? 1 : 0;
    const depthValue = typeof item.depth === 'number' ? item.depth : typeof ext.depth === 'number' ? ext.depth : 4;
    const order = typeof item.order === 'number' ? item.order : typeof item.insertion_order === 'number' ? item.insertion_order : index;
    const enabled = typeof item.disable === 'boolean' ? !item.disable : typeof item.enabled === 'boolean' ? item.enabled : true;
    const constant = item.constant === true;
    const name = (typeof item.comment === 'string' && item.comment.trim()) || (typeof item.name === 'string' && item.name.trim()) || keywords[0] || `Entry ${String(uid)}`;
    const entry: Json = {
      id,
      name: name.slice(0, 200),
      content: typeof item.content === 'string' ? item.content : '',
      role: 'lore',
      apiRole: 'system',
      section: 'chat-history',
      position: order,
      enabled,
      keywords,
      secondaryKeywords: selective ? secondary : [],
      secondaryKeywordLogic: logic,
      depth: positionNumber === 4 ? depthValue : null,
      matchWholeWords: item.matchWholeWords === true || ext.match_whole_words === true,
      preventRecursion: item.preventRecursion === true || ext.prevent_recursion === true,
      excludeRecursion: item.excludeRecursion === true || ext.exclude_recursion === true,
    };
    if (!selective && secondary.length > 0) report.dropped([...at, 'keysecondary'], 'secondary keys are switched off (selective: false), so they were not kept');
    if (constant) {
      // Always sent: chat-history entries need a keyword, so a constant entry goes to a section that is always sent.
      const section = positionNumber === 3 || positionNumber === 6 ? 'post-history' : 'system-presets';
      entry.section = section;
      entry.keywords = [];
      entry.secondaryKeywords = [];
      entry.depth = null;
      report.converted([...at, 'constant'], `constant entry (${POSITION_NAMES[positionNumber] ?? `position ${positionNumber}`}) → section "${section}", always sent${positionNumber === 4 ? `; its depth ${depthValue} has no place outside chat-history and was not kept` : ''}`);
    } else if (positionNumber !== 4 && positionNumber !== 0 && positionNumber !== 1) {
      report.converted([...at, 'position'], `${POSITION_NAMES[positionNumber] ?? `position ${positionNumber}`} → keyword-triggered chat-history entry (step 6 of the prompt)`);
    }
    if (!constant && keywords.length === 0) report.converted([...at, 'key'], 'no keys: the entry is never sent until keywords are added');
    for (const [field, value] of Object.entries(item)) {
      if (!READ_FIELDS.has(field) && meaningful(value)) report.dropped([...at, field], `SillyTavern's "${field}" has no place in WorldDefinition 20.0.0`);
    }
    for (const [field, value] of Object.entries(ext)) {
      if (!READ_EXTENSIONS.has(field) && meaningful(value)) report.dropped([...at, 'extensions', field], `SillyTavern's "${field}" has no place in WorldDefinition 20.0.0`);
    }
    out.push(entry);
  });
  return out;
}

/** A World Info file: `{entries: {uid: entry}}` (or a list), optionally with a name. */
export function isWorldInfo(input: Json): boolean {
  return !('version' in input) && !('spec' in input) && (isObject(input.entries) || (Array.isArray(input.entries) && input.entries.every((entry) => isObject(entry) && ('key' in entry || 'keys' in entry))));
}

export function convertWorldInfo(input: Json, report: ReportBuilder, fallbackName: string): Json {
  const name = typeof input.name === 'string' && input.name.trim() !== '' ? input.name.trim() : fallbackName;
  if (name === fallbackName) report.defaulted(['name'], `the lorebook has no name; "${fallbackName}" used`);
  for (const [field, value] of Object.entries(input)) {
    if (!['entries', 'name', 'description'].includes(field) && meaningful(value)) report.dropped([field], `World Info's "${field}" has no place in WorldDefinition 20.0.0`);
  }
  return {
    version: '20.0.0',
    name: name.slice(0, 200),
    description: typeof input.description === 'string' ? input.description : '',
    entries: convertLorebook(input.entries, ['entries'], report),
  };
}
