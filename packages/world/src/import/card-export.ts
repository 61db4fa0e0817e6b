import { SAMPLING_DEFAULTS, type WorldDefinition, type WorldEntry, type WorldRule } from '../schema/world-schema.ts';
import { type CardSource, keyedCard, mergeCardSource } from './card-source.ts';
import { encodeBase64Utf8, pngReplaceText } from './png-text.ts';

/**
 * A world as a SillyTavern character card (issue 31): the V3 card (`chara_card_v3`), and for a
 * PNG its V2 copy (`chara`) beside it for older readers. What SillyTavern can use goes into the
 * card's own fields: the character (description, personality, scenario), the system prompt and
 * post-history instructions, the greetings, the example chats, the author, notes and tags, and a
 * character book made of the other entries (keywords, secondary keywords and their logic,
 * insertion order, position and depth, constant for always-sent ones, enabled). The whole world
 * is kept under `extensions.yumina` (with a fingerprint of the card's fields), so that importing
 * the card back here gives the same world; browser-safe like the importer.
 */

type Json = Record<string, unknown>;

/** Under this key of the card's `extensions`: `{version, world, fingerprint}`. */
export const CARD_EXTENSION = 'yumina';

/** SillyTavern's world_info_position numbers and selective logic numbers. */
const ST_POSITION = { beforeChar: 0, afterChar: 1, atDepth: 4, emBottom: 6 } as const;
const ST_LOGIC: Record<WorldEntry['secondaryKeywordLogic'], number> = { AND_ANY: 0, NOT_ALL: 1, NOT_ANY: 2, AND_ALL: 3 };
const ST_ROLE: Record<WorldEntry['apiRole'], number> = { system: 0, user: 1, assistant: 2 };

/** The card fields the fingerprint covers: an edit of any of them outside this platform shows. */
const FINGERPRINTED = [
  'name', 'description', 'personality', 'scenario', 'first_mes', 'alternate_greetings', 'mes_example', 'system_prompt', 'post_history_instructions', 'creator_notes', 'character_book',
  'tags', 'creator', 'character_version',
] as const;

/** A short stable hash (FNV-1a, two lanes) of a value as JSON. */
export function hash(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x811c9dc5 | 1);
  }
  return `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}`;
}

/** A hash of each card field the export wrote: a field edited outside this platform shows as a different hash. */
export function cardFingerprints(data: Json): Record<string, string> {
  const extensions = typeof data.extensions === 'object' && data.extensions !== null ? (data.extensions as Json) : {};
  return { ...Object.fromEntries(FINGERPRINTED.map((field) => [field, hash(data[field])])), depth_prompt: hash(extensions.depth_prompt) };
}

/** What the card's `extensions.yumina` holds. */
export interface CardWorldExtension {
  version: string;
  world: WorldDefinition;
  fingerprints: Record<string, string>;
  /** Card field → the entry it was made from, with the prefix the export took off (to put an edit back). */
  sources: Record<string, { entryId: string; prefix: string }>;
  /** Card field → the entries it was written from (several for a joined field). */
  fields?: Record<string, string[]>;
  /** Each character book entry as written: its `id` (or index), the world item behind it (null: the source card's own) and its fingerprint. */
  book?: CardBookMap;
  /** The world item behind each greeting as written (`first_mes`, then the alternates; null: the source card's own). */
  greetings?: (string | null)[];
}

export type CardBookMap = { key: number | string; item: string | null; fingerprint: string }[];

const byPosition = (left: WorldEntry, right: WorldEntry) => left.position - right.position;

/** The parts of an entry that decide whether it is the world's character (any shape: the player reads an unvalidated copy). */
export interface CharacterCandidate {
  name?: unknown;
  role?: unknown;
  section?: unknown;
  enabled?: unknown;
  conditions?: unknown;
  keywords?: unknown;
  position?: unknown;
}

/**
 * Whether an entry is a character entry as the card sees one: an always-sent, enabled
 * `character` system-preset without conditions (the card's `description` comes from the first).
 */
export function isCharacterEntry(entry: CharacterCandidate): boolean {
  const keywords = Array.isArray(entry.keywords) ? entry.keywords : [];
  const conditions = Array.isArray(entry.conditions) ? entry.conditions : [];
  return (
    entry.role === 'character' &&
    entry.section === 'system-presets' &&
    entry.enabled !== false &&
    conditions.length === 0 &&
    keywords.every((keyword) => typeof keyword !== 'string' || keyword.trim() === '')
  );
}

/** The world's character: its first character entry by position (see isCharacterEntry), or null. */
export function characterEntry<E extends CharacterCandidate>(world: { entries?: readonly E[] | undefined }): E | null {
  const entries = [...(world.entries ?? [])];
  const position = (entry: CharacterCandidate) => (typeof entry.position === 'number' ? entry.position : 0);
  // A stable sort, as exportCard's: equal positions keep their stored order.
  entries.sort((left, right) => position(left) - position(right));
  return entries.find(isCharacterEntry) ?? null;
}

/**
 * The character's name, as its chat bubbles show it: the name of the world's character entry
 * (a card's name; "Mina Park" in Rain on Willow Street), else the world's name.
 */
export function characterName(world: { name: string; entries?: readonly CharacterCandidate[] | undefined }): string {
  const name = characterEntry(world)?.name;
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : world.name;
}

export interface CardExport {
  /** The V3 card. */
  card: Json;
  /** What went where: entries used for card fields, entries in the character book. */
  fields: Record<string, string[]>;
  bookEntries: string[];
  /** The world item behind each `character_book.entries` item, in order: an entry's id, or a depth rule's directive id; null for the source card's own. */
  bookIds: (string | null)[];
  /** The world item behind each greeting, in order: `first_mes` (when the world has a greeting), then the alternates; null for the source card's own. */
  greetingIds: (string | null)[];
  /** In plain words, what a SillyTavern card cannot hold (kept under the platform's own extension for the way back). */
  unwritten: string[];
}

/** The card written for the world: the plain mapping of the world, or merged into the card it was imported from (card-source.ts). */
export interface ExportOptions {
  /** The card the world was imported from, as kept by the import (ImportResult.cardSource). */
  source?: CardSource | null;
}

/** The session-start rule the importer writes for an always-sent text at a depth (world-info.ts depthRules), or null. */
export function depthInjection(rule: WorldRule): { directiveId: string; content: string; depth: number } | null {
  if (rule.trigger.type !== 'session-start' || rule.conditions.length > 0 || rule.actions.length !== 1) return null;
  if (rule.cooldownTurns !== null || rule.maxFireCount !== null) return null;
  const action = rule.actions[0]!;
  if (action.type !== 'inject-directive' || action.position !== 'depth' || !action.persistent || typeof action.depth !== 'number' || (action.duration ?? null) !== null) return null;
  return { directiveId: action.directiveId, content: action.content, depth: action.depth };
}

/** The directive id of the character's note (a card's `extensions.depth_prompt`). */
export const CHARACTER_NOTE = 'character-note';

/** The plain mapping of a world to a card (no source card): what a world made here looks like in SillyTavern. */
function plainCard(world: WorldDefinition): CardExport {
  const entries = [...world.entries].sort(byPosition);
  const used = new Set<WorldEntry>();
  const take = (pick: (entry: WorldEntry) => boolean): WorldEntry[] => {
    const found = entries.filter((entry) => !used.has(entry) && entry.enabled && entry.conditions.length === 0 && pick(entry));
    for (const entry of found) used.add(entry);
    return found;
  };
  const always = (entry: WorldEntry) => entry.keywords.every((keyword) => keyword.trim() === '');
  const presets = (role: WorldEntry['role']) => (entry: WorldEntry) => entry.section === 'system-presets' && entry.role === role && always(entry);
  // The character entry is the one characterEntry names (the chat bubbles show its name).
  const first = characterEntry(world);
  const fields: Record<string, string[]> = {};
  const sources: CardWorldExtension['sources'] = {};
  const join = (field: string, list: WorldEntry[], prefix = '') => {
    fields[field] = list.map((entry) => entry.id);
    if (list.length === 1) sources[field] = { entryId: list[0]!.id, prefix: list[0]!.content.startsWith(prefix) ? prefix : '' };
    return list.map((entry) => (prefix && entry.content.startsWith(prefix) ? entry.content.slice(prefix.length) : entry.content)).join('\n\n');
  };

  // The character's own entries: the first character entry, personality and scenario, in step 1.
  const character = take((entry) => entry === first);
  const characterPosition = character[0]?.position ?? Number.NEGATIVE_INFINITY;
  const personality = take((entry) => presets('personality')(entry) && entry.position > characterPosition - 1).slice(0, 1);
  const scenario = take((entry) => presets('scenario')(entry) && entry.position > characterPosition).slice(0, 1);
  const system = take((entry) => entry.id === 'system-prompt' && presets('system')(entry)).slice(0, 1);
  const post = take((entry) => entry.id === 'post-history-instructions' && entry.section === 'post-history');
  const greetings = take((entry) => entry.role === 'greeting');
  const examples = take((entry) => entry.section === 'examples');

  // Without a character entry, "before/after character" splits where the importer put the
  // character's place: the first of the card's own presets (system prompt, personality, scenario).
  const anchor = character[0] ?? entries.find((entry) => entry.section === 'system-presets' && always(entry) && ['system', 'personality', 'scenario'].includes(entry.role));
  const anchorPosition = anchor ? anchor.position : 0;
  const rest = entries.filter((entry) => !used.has(entry) && entry.role !== 'greeting');
  const book = rest.map((entry, index) => bookEntry(entry, index, anchorPosition));
  const bookIds = rest.map((entry) => entry.id);
  // Always-sent texts at a depth (the importer's session-start rules) go back as constant @depth entries, the character's note as depth_prompt.
  const extensions: Json = {};
  for (const rule of world.rules) {
    const injection = depthInjection(rule);
    if (!injection) continue;
    if (injection.directiveId === CHARACTER_NOTE) {
      extensions.depth_prompt = { prompt: injection.content, depth: injection.depth + 1, role: 'system' };
      continue;
    }
    const index = book.length;
    book.push({
      id: index,
      keys: [],
      secondary_keys: [],
      comment: rule.name.replace(/ \(always, at depth \d+\)$/, ''),
      content: injection.content,
      constant: true,
      selective: false,
      insertion_order: rule.priority,
      enabled: rule.enabled,
      position: 'after_char',
      use_regex: false,
      extensions: { position: ST_POSITION.atDepth, depth: injection.depth + 1, role: ST_ROLE.system, display_index: index },
    });
    bookIds.push(injection.directiveId);
  }
  const bookSettings: Json = { scan_depth: world.settings.lorebookScanDepth * 2, recursive_scanning: world.settings.lorebookRecursionDepth > 0 };
  const data: Json = {
    name: world.name,
    description: join('description', character),
    personality: join('personality', personality, `${world.name}'s personality: `),
    scenario: join('scenario', scenario, 'Scenario: '),
    first_mes: join('first_mes', greetings.slice(0, 1)),
    mes_example: join('mes_example', examples),
    creator_notes: world.description,
    system_prompt: join('system_prompt', system),
    post_history_instructions: join('post_history_instructions', post),
    alternate_greetings: greetings.slice(1).map((entry) => entry.content),
    character_book: { name: world.name, ...bookSettings, extensions: {}, entries: book },
    tags: [...world.customTags],
    creator: world.author,
    // The creator's own version of the character: a world made here has none (the schema's version is not it).
    character_version: '',
    group_only_greetings: [],
    assets: [{ type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png' }],
    extensions,
  };
  fields.alternate_greetings = greetings.slice(1).map((entry) => entry.id);
  return {
    card: { spec: 'chara_card_v3', spec_version: '3.0', data },
    fields,
    bookEntries: rest.map((entry) => entry.id),
    bookIds,
    greetingIds: greetings.map((entry) => entry.id),
    unwritten: unwrittenParts(world, rest, greetings, used),
    sources,
  } as CardExport & { sources: CardWorldExtension['sources'] };
}

/**
 * The world as a SillyTavern V3 card. With the card it was imported from, the card is that card
 * with the author's edits since the import written into it (card-source.ts): what this platform
 * does not use comes back as it was. The whole world is kept under `extensions.yumina` (with a
 * fingerprint of each field as written) for the way back here.
 */
export function exportCard(world: WorldDefinition, options: ExportOptions = {}): CardExport {
  const plain = plainCard(world) as CardExport & { sources: CardWorldExtension['sources'] };
  const { sources, ...exported } = plain;
  const merged = options.source ? mergeCardSource(options.source, exported) : exported;
  const data = merged.card.data as Json;
  const extension: CardWorldExtension = {
    version: world.version,
    world,
    fingerprints: cardFingerprints(data),
    sources,
    fields: merged.fields,
    book: bookMap(data, merged.bookIds),
    greetings: merged.greetingIds,
  };
  data.extensions = { ...(isObject(data.extensions) ? data.extensions : {}), [CARD_EXTENSION]: extension };
  return merged;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A V1 card's fields (no `data`): SillyTavern's V2 reading of them. */
const V1_FIELDS = ['name', 'description', 'personality', 'scenario', 'first_mes', 'mes_example'];

/**
 * What an import keeps of a card for the way back (card-source.ts): the card (the import's own
 * parsed copy, which nothing changes after) without this platform's extension (a V1 card with its fields read into `data`), the world item each greeting
 * and book entry became, and the plain export of the world as imported.
 */
export function cardSourceOf(card: Json, ids: CardSource['ids'], world: WorldDefinition): CardSource {
  // The importer's own parsed copy (never the caller's value): only the levels changed here are copied.
  const copy = { ...card };
  if (isObject(copy.data)) {
    const data = { ...copy.data };
    if (isObject(data.extensions)) data.extensions = { ...data.extensions };
    copy.data = data;
  } else {
    copy.data = {
      ...Object.fromEntries(V1_FIELDS.map((field) => [field, typeof copy[field] === 'string' ? copy[field] : ''])),
      creator_notes: '', system_prompt: '', post_history_instructions: '', alternate_greetings: [], tags: [], creator: '', character_version: '', extensions: {},
    };
  }
  const data = copy.data as Json;
  if (isObject(data.extensions)) delete data.extensions[CARD_EXTENSION];
  return { card: copy, ids, baseline: keyedCard(plainCard(world)) };
}

/** Each character book entry's `id` (or its index when it has none), the world item it was written from and a fingerprint of it as written. */
function bookMap(data: Json, ids: readonly (string | null)[]): CardBookMap {
  const book = isObject(data.character_book) ? data.character_book : {};
  const entries = Array.isArray(book.entries) ? book.entries : [];
  return entries.map((entry, index) => ({
    key: isObject(entry) && (typeof entry.id === 'number' || typeof entry.id === 'string') ? entry.id : index,
    item: ids[index] ?? null,
    fingerprint: hash(entry),
  }));
}

/** The world's parts a card cannot hold, one plain sentence each. */
function unwrittenParts(world: WorldDefinition, book: readonly WorldEntry[], greetings: readonly WorldEntry[], used: ReadonlySet<WorldEntry>): string[] {
  const lines: string[] = [];
  const names = (list: readonly { name: string; id: string }[]) => `${list.slice(0, 3).map((item) => `"${item.name || item.id}"`).join(', ')}${list.length > 3 ? ', …' : ''}`;
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const conditioned = book.filter((entry) => entry.conditions.length > 0);
  if (conditioned.length > 0) lines.push(`${count(conditioned.length, 'entry depends', 'entries depend')} on variables (${names(conditioned)}): in SillyTavern ${conditioned.length === 1 ? 'it is' : 'they are'} sent whenever ${conditioned.length === 1 ? 'its' : 'their'} keywords match.`);
  const hidden = world.entries.filter((entry) => entry.role === 'greeting' && !used.has(entry) && !greetings.includes(entry));
  if (hidden.length > 0) lines.push(`${count(hidden.length, 'greeting is', 'greetings are')} switched off or depend${hidden.length === 1 ? 's' : ''} on variables (${names(hidden)}): a card has no place for ${hidden.length === 1 ? 'it' : 'them'}.`);
  if (world.variables.length > 0) lines.push(`${count(world.variables.length, 'variable', 'variables')} (${names(world.variables)}) and the directives that change them: SillyTavern has no variables.`);
  const rules = world.rules.filter((rule) => !depthInjection(rule));
  if (rules.length > 0) lines.push(`${count(rules.length, 'rule', 'rules')} (${names(rules)}): SillyTavern does not run rules.`);
  if ((world.reactions ?? []).length > 0) lines.push(`${count(world.reactions!.length, 'reaction', 'reactions')}: SillyTavern does not run them.`);
  if (world.rootComponent || world.customUI.length > 0 || world.components.length > 0) lines.push('The custom interface: SillyTavern shows its own chat screen.');
  if (world.audioTracks.length > 0) lines.push(`The music and sounds (${count(world.audioTracks.length, 'track', 'tracks')}).`);
  // A setting at seed 002's default (validation fills those) is no choice of the author's to lose.
  const defaults: Partial<Record<string, number>> = SAMPLING_DEFAULTS;
  const sampling = (['temperature', 'topP', 'topK', 'minP', 'frequencyPenalty', 'presencePenalty'] as const).filter(
    (key) => world.settings[key] !== undefined && world.settings[key] !== defaults[key],
  );
  if (sampling.length > 0) lines.push(`The model settings (${sampling.join(', ')}): SillyTavern takes them from its own presets.`);
  if (world.settings.playerName !== 'User') lines.push(`The player's default name ("${world.settings.playerName}"): SillyTavern uses its own persona.`);
  return lines;
}

/** One entry of the character book, in the V2/V3 shape with SillyTavern's details under extensions. */
function bookEntry(entry: WorldEntry, index: number, characterPosition: number): Json {
  const keywords = entry.keywords.filter((keyword) => keyword.trim() !== '');
  const constant = keywords.length === 0;
  let position: number;
  if (entry.section === 'system-presets') position = entry.position < characterPosition ? ST_POSITION.beforeChar : ST_POSITION.afterChar;
  // After the chat (post-history) is SillyTavern's depth 0, after the last message.
  else if (entry.section === 'post-history') position = ST_POSITION.atDepth;
  else if (entry.section === 'examples') position = ST_POSITION.emBottom;
  else if (entry.depth !== null) position = ST_POSITION.atDepth;
  // Step 6 (triggered, after the example chat) is SillyTavern's "bottom of example messages".
  else position = ST_POSITION.emBottom;
  return {
    id: index,
    keys: keywords,
    secondary_keys: entry.secondaryKeywords,
    comment: entry.name,
    content: entry.content,
    constant,
    selective: entry.secondaryKeywords.length > 0,
    // The order here (a position) is SillyTavern's insertion order: higher goes later.
    insertion_order: Math.round(entry.position),
    enabled: entry.enabled && !(entry.section === 'chat-history' && constant && entry.conditions.length === 0),
    position: position === ST_POSITION.beforeChar ? 'before_char' : 'after_char',
    use_regex: false,
    extensions: {
      position,
      // SillyTavern's depth 1 is just before the last message, this platform's 0; post-history is depth 0.
      depth: entry.section === 'post-history' ? 0 : entry.depth !== null ? entry.depth + 1 : 4,
      selectiveLogic: ST_LOGIC[entry.secondaryKeywordLogic],
      exclude_recursion: entry.excludeRecursion,
      prevent_recursion: entry.preventRecursion,
      match_whole_words: entry.matchWholeWords,
      display_index: index,
      role: ST_ROLE[entry.apiRole],
    },
  };
}

/** The V2 copy of a V3 card (for the `chara` chunk): the same data without V3's own fields. */
export function cardAsV2(card: Json): Json {
  const data = { ...(card.data as Json) };
  for (const field of ['assets', 'nickname', 'creator_notes_multilingual', 'source', 'group_only_greetings', 'creation_date', 'modification_date']) delete data[field];
  return { spec: 'chara_card_v2', spec_version: '2.0', data };
}

/** The card written into a PNG picture: `ccv3` (V3) and `chara` (its V2 copy), as SillyTavern writes them. */
export function cardPng(picture: Uint8Array, card: Json): Uint8Array {
  return pngReplaceText(picture, { chara: encodeBase64Utf8(JSON.stringify(cardAsV2(card))), ccv3: encodeBase64Utf8(JSON.stringify(card)) });
}
