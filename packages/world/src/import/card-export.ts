import type { WorldDefinition, WorldEntry } from '../schema/world-schema.ts';
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
const ST_POSITION = { beforeChar: 0, afterChar: 1, anBottom: 3, atDepth: 4, emBottom: 6 } as const;
const ST_LOGIC: Record<WorldEntry['secondaryKeywordLogic'], number> = { AND_ANY: 0, NOT_ALL: 1, NOT_ANY: 2, AND_ALL: 3 };
const ST_ROLE: Record<WorldEntry['apiRole'], number> = { system: 0, user: 1, assistant: 2 };

/** The card fields the fingerprint covers: an edit of any of them outside this platform shows. */
const FINGERPRINTED = ['name', 'description', 'personality', 'scenario', 'first_mes', 'alternate_greetings', 'mes_example', 'system_prompt', 'post_history_instructions', 'creator_notes', 'character_book'] as const;

/** A short stable hash (FNV-1a, two lanes) of a value as JSON. */
function hash(value: unknown): string {
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
  return Object.fromEntries(FINGERPRINTED.map((field) => [field, hash(data[field])]));
}

/** What the card's `extensions.yumina` holds. */
export interface CardWorldExtension {
  version: string;
  world: WorldDefinition;
  fingerprints: Record<string, string>;
  /** Card field → the entry it was made from, with the prefix the export took off (to put an edit back). */
  sources: Record<string, { entryId: string; prefix: string }>;
}

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
}

export function exportCard(world: WorldDefinition): CardExport {
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
  const characterPosition = character[0]?.position ?? Number.POSITIVE_INFINITY;
  const personality = take((entry) => presets('personality')(entry) && entry.position > characterPosition - 1).slice(0, 1);
  const scenario = take((entry) => presets('scenario')(entry) && entry.position > characterPosition).slice(0, 1);
  const system = take((entry) => entry.id === 'system-prompt' && presets('system')(entry)).slice(0, 1);
  const post = take((entry) => entry.id === 'post-history-instructions' && entry.section === 'post-history');
  const greetings = take((entry) => entry.role === 'greeting');
  const examples = take((entry) => entry.section === 'examples');

  const rest = entries.filter((entry) => !used.has(entry) && entry.role !== 'greeting');
  const book = rest.map((entry, index) => bookEntry(entry, index, characterPosition));
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
    character_book: { name: world.name, extensions: {}, entries: book },
    tags: [...world.customTags],
    creator: world.author,
    character_version: world.version,
    group_only_greetings: [],
    assets: [{ type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png' }],
  };
  fields.alternate_greetings = greetings.slice(1).map((entry) => entry.id);
  const extension: CardWorldExtension = { version: world.version, world, fingerprints: cardFingerprints(data), sources };
  data.extensions = { [CARD_EXTENSION]: extension };
  return { card: { spec: 'chara_card_v3', spec_version: '3.0', data }, fields, bookEntries: rest.map((entry) => entry.id) };
}

/** One entry of the character book, in the V2/V3 shape with SillyTavern's details under extensions. */
function bookEntry(entry: WorldEntry, index: number, characterPosition: number): Json {
  const keywords = entry.keywords.filter((keyword) => keyword.trim() !== '');
  const constant = keywords.length === 0;
  let position: number;
  if (entry.section === 'system-presets') position = entry.position < characterPosition ? ST_POSITION.beforeChar : ST_POSITION.afterChar;
  else if (entry.section === 'post-history') position = ST_POSITION.anBottom;
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
    insertion_order: index,
    enabled: entry.enabled && !(entry.section === 'chat-history' && constant && entry.conditions.length === 0),
    position: position === ST_POSITION.beforeChar ? 'before_char' : 'after_char',
    use_regex: false,
    extensions: {
      position,
      // SillyTavern's depth 1 is just before the last message, this platform's 0.
      depth: entry.depth !== null ? entry.depth + 1 : 4,
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
