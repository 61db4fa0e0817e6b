import type { WorldDefinition, WorldEntry } from '../schema/world-schema.ts';
import { CARD_EXTENSION, type CardWorldExtension, characterEntry, characterName, exportCard } from './card-export.ts';
import { ReportBuilder } from './import-report.ts';
import { convertCard } from './sillytavern-card.ts';

/**
 * A world as a character sheet, the way character-chat sites and SillyTavern's card editor show
 * one (issue 30 D): name, tagline, description, personality, scenario, greetings, example
 * dialogue, lore entries with their keywords, tags. No ids, sections or positions: those are
 * derived by the card mapping itself — a sheet is read through `exportCard` (a world as a card's
 * fields) and written through `convertCard` (a card's fields as entries, the importer's own
 * conversion), so the editor, the import and the export place every field in the same entry.
 * Everything a sheet does not show (variables, rules, the interface, settings, other entries,
 * an entry's other fields) is kept as it is.
 */

type Json = Record<string, unknown>;

/** A lorebook entry as the sheet shows it: `id` is the entry it was read from (null for a new one; never shown). */
export interface SheetLore {
  id: string | null;
  name: string;
  keywords: string[];
  content: string;
}

export interface CharacterSheet {
  /** The character's name (`{{char}}` of a card). */
  name: string;
  /** One line for the library card: the world's description (a card's creator notes). */
  tagline: string;
  description: string;
  personality: string;
  scenario: string;
  /** The first is the greeting, the others are alternate greetings. */
  greetings: string[];
  exampleDialogue: string;
  lore: SheetLore[];
  tags: string[];
}

export const emptySheet = (): CharacterSheet => ({
  name: '',
  tagline: '',
  description: '',
  personality: '',
  scenario: '',
  greetings: [''],
  exampleDialogue: '',
  lore: [],
  tags: [],
});

/** A lorebook entry the sheet edits: keyword-triggered, enabled, without variable conditions (the others stay for the full studio). */
const isSheetLore = (entry: WorldEntry) =>
  entry.role !== 'greeting' && entry.enabled && entry.conditions.length === 0 && entry.keywords.some((keyword) => keyword.trim() !== '');

export function readCharacterSheet(world: WorldDefinition): CharacterSheet {
  const { card, bookEntries } = exportCard(world);
  const data = card.data as Json;
  const text = (field: string) => (typeof data[field] === 'string' ? (data[field] as string) : '');
  const greetings = [text('first_mes'), ...(data.alternate_greetings as string[])].filter((greeting, index) => index === 0 || greeting !== '');
  const inBook = new Set(bookEntries);
  return {
    name: characterName(world),
    tagline: world.description,
    description: text('description'),
    personality: text('personality'),
    scenario: text('scenario'),
    greetings: greetings.length === 1 && greetings[0] === '' ? [''] : greetings,
    exampleDialogue: text('mes_example'),
    lore: world.entries
      .filter((entry) => inBook.has(entry.id) && isSheetLore(entry))
      .sort((left, right) => left.position - right.position)
      .map((entry) => ({ id: entry.id, name: entry.name, keywords: entry.keywords.filter((keyword) => keyword.trim() !== ''), content: entry.content })),
    tags: [...world.customTags],
  };
}

const clean = (list: readonly string[]) => [...new Set(list.map((item) => item.trim()).filter((item) => item !== ''))];

/**
 * The sheet as a V3 card's data: what the importer converts. Lore entries are keyword-triggered
 * chat-history entries (SillyTavern's "bottom of example messages", the position exportCard
 * writes for them), in the sheet's order.
 */
export function sheetCard(sheet: CharacterSheet): Json {
  const greetings = sheet.greetings.filter((greeting) => greeting.trim() !== '');
  const lore = sheet.lore.map((entry, index) => ({
    id: index,
    keys: clean(entry.keywords),
    content: entry.content,
    comment: entry.name.trim(),
    enabled: true,
    insertion_order: index,
    position: 'after_char',
    extensions: { position: 6 },
  }));
  return {
    spec: 'chara_card_v3',
    spec_version: '3.0',
    data: {
      name: sheet.name.trim(),
      description: sheet.description,
      personality: sheet.personality,
      scenario: sheet.scenario,
      first_mes: greetings[0] ?? '',
      alternate_greetings: greetings.slice(1),
      mes_example: sheet.exampleDialogue,
      creator_notes: sheet.tagline,
      tags: clean(sheet.tags),
      ...(lore.length > 0 ? { character_book: { entries: lore } } : {}),
    },
  };
}

/** The sheet's card converted by the importer: its world (entries with the importer's ids, shapes and prefixes). */
function converted(sheet: CharacterSheet): Json & { entries: Json[] } {
  return convertCard(sheetCard(sheet), new ReportBuilder()).world as Json & { entries: Json[] };
}

/**
 * A world with the sheet written into it. Without a world, the world the importer makes of the
 * sheet's card (a new character). With one, each card field goes back into the entry the export
 * read it from (the same id, position and other fields; an emptied field's entry goes), a field
 * the world had no entry for gets the importer's entry, greetings and lore entries are matched
 * in order and by id, and the world's name follows the character's when it was the character's
 * name. The result is not validated (the caller validates, as for any edit).
 */
export function applyCharacterSheet(world: WorldDefinition | null, sheet: CharacterSheet): Json {
  const made = converted(sheet);
  if (!world) return { ...made, editorMode: 'simple' };
  const madeEntry = (id: string) => made.entries.find((entry) => entry.id === id);
  const next = structuredClone(world) as WorldDefinition & Json;
  const entries = next.entries as (WorldEntry & Json)[];
  const { card, fields } = exportCard(world);
  const sources = ((card.data as Json).extensions as Record<string, CardWorldExtension>)[CARD_EXTENSION]!.sources;
  const oldName = characterName(world);
  const name = sheet.name.trim();
  const byId = (id: string) => entries.find((entry) => entry.id === id);
  const remove = (ids: readonly string[]) => {
    for (const id of ids) {
      const index = entries.findIndex((entry) => entry.id === id);
      if (index >= 0) entries.splice(index, 1);
    }
  };
  const freeId = (wanted: string) => {
    let id = wanted;
    for (let n = 2; byId(id); n++) id = `${wanted}-${n}`;
    return id;
  };
  const after = (section: string) => Math.max(-1, ...entries.filter((entry) => entry.section === section).map((entry) => entry.position)) + 1;
  const insert = (entry: Json, position: number) => {
    const added = { ...entry, id: freeId(String(entry.id)), position } as WorldEntry & Json;
    entries.push(added);
    return added;
  };

  // The world's name follows the character's when it was the character's name (a card's world).
  const nextWorldName = world.name === oldName && name !== '' ? name : world.name;
  next.name = nextWorldName;

  // The character's own fields: one entry each, found where the export read it.
  const single: [field: 'description' | 'personality' | 'scenario' | 'mes_example', madeId: string, value: string][] = [
    ['description', 'character', sheet.description],
    ['personality', 'personality', sheet.personality],
    ['scenario', 'scenario', sheet.scenario],
    ['mes_example', 'example-messages', sheet.exampleDialogue],
  ];
  for (const [field, madeId, value] of single) {
    const ids = fields[field] ?? [];
    const fresh = madeEntry(madeId);
    if (ids.length === 0) {
      if (fresh) insert(fresh, after(String(fresh.section)));
      continue;
    }
    if (value.trim() === '') {
      remove(ids);
      continue;
    }
    const kept = byId(ids[0]!)!;
    const prefix = sources[field]?.prefix ?? '';
    kept.content = prefix === '' ? value : `${field === 'personality' ? `${nextWorldName}'s personality: ` : prefix}${value}`;
    remove(ids.slice(1));
  }

  // The character entry carries the name, and a personality entry named after it follows it.
  const character = characterEntry({ entries });
  if (character && name !== '') character.name = name;
  const personality = (fields.personality ?? [])[0];
  if (personality && byId(personality)?.name === `${oldName}'s personality` && name !== '') byId(personality)!.name = `${name}'s personality`;

  // Greetings, in order: the first is the greeting, then the alternates.
  const oldGreetings = [...(fields.first_mes ?? []), ...(fields.alternate_greetings ?? [])];
  const newGreetings = made.entries.filter((entry) => entry.role === 'greeting');
  newGreetings.forEach((fresh, index) => {
    const kept = oldGreetings[index] ? byId(oldGreetings[index]) : undefined;
    if (kept) kept.content = String(fresh.content);
    else {
      const last = Math.max(-1, ...entries.filter((entry) => entry.role === 'greeting').map((entry) => entry.position));
      insert(fresh, last + 1);
    }
  });
  remove(oldGreetings.slice(newGreetings.length));

  // Lore entries: matched by the id the sheet read them with; new ones as the importer makes them.
  const oldLore = readCharacterSheet(world).lore.map((entry) => entry.id!);
  const keep = new Set(sheet.lore.map((entry) => entry.id).filter((id): id is string => id !== null && oldLore.includes(id)));
  remove(oldLore.filter((id) => !keep.has(id)));
  sheet.lore.forEach((entry, index) => {
    const kept = entry.id !== null && keep.has(entry.id) ? byId(entry.id) : undefined;
    const fresh = madeEntry(`lore-${index}`)!;
    if (kept) {
      kept.name = String(fresh.name);
      kept.keywords = fresh.keywords as string[];
      kept.content = String(fresh.content);
    } else insert(fresh, after('chat-history'));
  });

  next.description = sheet.tagline;
  next.customTags = clean(sheet.tags);
  // A removed tag's colour goes with it.
  next.customTagColors = Object.fromEntries(Object.entries(world.customTagColors).filter(([tag]) => next.customTags.includes(tag)));
  return next;
}
