import { CARD_EXTENSION, CHARACTER_NOTE, cardFingerprints, type CardWorldExtension, hash } from './card-export.ts';
import type { CardSource } from './card-source.ts';
import { type CardConflict, ReportBuilder } from './import-report.ts';
import { convertCard } from './sillytavern-card.ts';
import { convertLorebook, depthRules } from './world-info.ts';

/**
 * A card exported from here coming back (issue 49 point 8): the world it carries under
 * `extensions.yumina`, with every edit made to the card elsewhere since (SillyTavern's editor,
 * another site) applied to it. An edit shows as a field whose fingerprint differs from the one
 * the export wrote. Applied: the name, each text field made from one entry, the creator notes,
 * tags, creator, the character's note, each greeting and each lorebook entry (edited, added or
 * deleted); fields this platform does not use (the character's version, other extensions, V3's
 * own fields) are kept with the card for the next export. A field made of several entries cannot
 * take one text back: it is a conflict, kept as the world has it, for the author to choose.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown) => (typeof value === 'string' ? value : '');

export interface CarriedWorld {
  world: Json;
  ids: CardSource['ids'];
  conflicts: CardConflict[];
}

/** The card fields made of one entry (with the importer's entry id for a field the world has no entry for). */
const TEXT_FIELDS: Record<string, string> = {
  description: 'character',
  personality: 'personality',
  scenario: 'scenario',
  system_prompt: 'system-prompt',
  post_history_instructions: 'post-history-instructions',
  mes_example: 'example-messages',
};

export function carriedWorld(card: Json, report: ReportBuilder): CarriedWorld | null {
  const data = isObject(card.data) ? card.data : card;
  const extensions = isObject(data.extensions) ? data.extensions : null;
  const carried = extensions && isObject(extensions[CARD_EXTENSION]) ? (extensions[CARD_EXTENSION] as Partial<CardWorldExtension> & Json) : null;
  if (!carried || !isObject(carried.world)) return null;
  const world = carried.world as unknown as Json & { entries: Json[]; rules: Json[] };
  if (!Array.isArray(world.entries)) world.entries = [];
  if (!Array.isArray(world.rules)) world.rules = [];
  const entries = world.entries;
  const base = isObject(card.data) ? 'data' : '';
  const at = (field: string) => (base ? `${base}.${field}` : field);
  const now = cardFingerprints(data);
  const then = isObject(carried.fingerprints) ? (carried.fingerprints as Record<string, string>) : {};
  const sources = isObject(carried.sources) ? (carried.sources as CardWorldExtension['sources']) : {};
  const edited = (field: string) => then[field] !== undefined && then[field] !== now[field];
  const byId = (id: string | null | undefined) => (id ? entries.find((item) => isObject(item) && item.id === id) : undefined);
  const conflicts: CardConflict[] = [];
  // The card read as a foreign card: entries for fields the world has none for, lorebook entries added elsewhere.
  const foreign = convertCard(card, new ReportBuilder());
  const foreignEntries = (foreign.world.entries as Json[]) ?? [];
  const freeId = (wanted: string) => {
    let id = wanted;
    for (let n = 2; byId(id); n++) id = `${wanted}-${n}`;
    return id;
  };

  if (edited('name') && text(data.name).trim()) {
    const name = text(data.name).trim().slice(0, 200);
    const character = byId(sources.description?.entryId);
    if (character && character.name === world.name) character.name = name;
    world.name = name;
    report.converted(at('name'), 'edited after the card was exported: the world takes the new name');
  }
  if (edited('creator_notes')) {
    world.description = text(data.creator_notes).slice(0, 10_000);
    report.converted(at('creator_notes'), "edited after the card was exported: the world's description takes it");
  }
  if (edited('tags')) {
    world.customTags = [...new Set((Array.isArray(data.tags) ? data.tags : []).filter((tag): tag is string => typeof tag === 'string' && tag.trim() !== ''))];
    report.converted(at('tags'), "edited after the card was exported: the world's tags take them");
  }
  if (edited('creator')) {
    world.author = text(data.creator).slice(0, 200);
    report.converted(at('creator'), "edited after the card was exported: the world's author takes it");
  }
  if (edited('character_version')) report.converted(at('character_version'), 'edited after the card was exported: kept with the card for its next export (a world has no version of its own)');

  for (const [field, madeId] of Object.entries(TEXT_FIELDS)) {
    if (!edited(field)) continue;
    const source = sources[field];
    const entry = byId(source?.entryId);
    if (entry && source) {
      entry.content = `${source.prefix}${text(data[field])}`;
      report.converted(at(field), `edited after the card was exported: entry "${source.entryId}" takes the new text`);
      continue;
    }
    const written = cardFieldEntries(carried, field);
    if (written.length === 0) {
      // The world had nothing there: the entry the importer makes of the field.
      const made = foreignEntries.find((item) => item.id === madeId);
      if (made) {
        entries.push({ ...made, id: freeId(madeId) });
        report.converted(at(field), `added after the card was exported: a new entry "${madeId}" holds it`);
      }
      continue;
    }
    conflicts.push({ path: at(field), field, card: text(data[field]), world: written.map((id) => text(byId(id)?.content)).join('\n\n'), entryIds: written });
  }

  // The character's note: the session-start rule that injects it.
  if (edited('depth_prompt')) {
    const note = isObject(extensions!.depth_prompt) ? extensions!.depth_prompt : {};
    const prompt = text(note.prompt);
    const ruleIndex = world.rules.findIndex((rule) => isObject(rule) && rule.id === `${CHARACTER_NOTE}-at-depth`);
    if (ruleIndex >= 0) world.rules.splice(ruleIndex, 1);
    if (prompt.trim() !== '') {
      const depth = Math.max(0, (typeof note.depth === 'number' ? Math.floor(note.depth) : 4) - 1);
      world.rules.push(...depthRules([{ id: CHARACTER_NOTE, name: `${text(world.name)}'s note`, content: prompt, depth, enabled: true, order: 0 }]));
    }
    report.converted(at('extensions.depth_prompt'), `edited after the card was exported: ${prompt.trim() === '' ? 'the character\'s note was removed' : 'rule "character-note-at-depth" injects the new note'}`);
  }

  // Greetings, slot by slot: the item each was written from.
  const writtenGreetings = Array.isArray(carried.greetings) ? carried.greetings : [];
  const greetings = [text(data.first_mes), ...(Array.isArray(data.alternate_greetings) ? data.alternate_greetings.map(text) : [])];
  const greetingIds: (string | null)[] = [];
  if (edited('first_mes') || edited('alternate_greetings')) {
    greetings.forEach((greeting, index) => {
      const id = writtenGreetings[index] ?? null;
      const entry = byId(id);
      if (entry) {
        if (entry.content !== greeting) {
          entry.content = greeting;
          report.converted(at(index === 0 ? 'first_mes' : `alternate_greetings[${index - 1}]`), `edited after the card was exported: greeting "${id}" takes the new text`);
        }
        greetingIds.push(id);
      } else if (greeting.trim() !== '') {
        const newId = freeId(index === 0 ? 'greeting' : `greeting-${index + 1}`);
        const last = Math.max(-1, ...entries.filter((item) => item.role === 'greeting').map((item) => Number(item.position) || 0));
        entries.push({ id: newId, name: index === 0 ? 'Greeting' : `Alternate greeting ${index}`, content: greeting, role: 'greeting', apiRole: 'assistant', section: 'chat-history', position: last + 1 });
        report.converted(at(index === 0 ? 'first_mes' : `alternate_greetings[${index - 1}]`), `added after the card was exported: greeting "${newId}"`);
        greetingIds.push(newId);
      } else greetingIds.push(null);
    });
    for (const id of writtenGreetings.slice(greetings.length)) {
      const index = entries.findIndex((item) => item.id === id);
      if (id && index >= 0) {
        entries.splice(index, 1);
        report.converted(at('alternate_greetings'), `removed after the card was exported: greeting "${id}" goes`);
      }
    }
  } else greetingIds.push(...greetings.map((_, index) => writtenGreetings[index] ?? null));

  // Lorebook entries, one by one, matched by their id.
  const book = isObject(data.character_book) ? data.character_book : {};
  const bookEntries = Array.isArray(book.entries) ? book.entries : [];
  const written = Array.isArray(carried.book) ? carried.book : [];
  const bookIds: (string | null)[] = [];
  const seen = new Set<string | number>();
  bookEntries.forEach((raw, index) => {
    const key = isObject(raw) && (typeof raw.id === 'number' || typeof raw.id === 'string') ? raw.id : index;
    const slot = written.find((item) => item.key === key);
    seen.add(key);
    if (slot && slot.fingerprint === hash(raw)) {
      bookIds.push(slot.item);
      return;
    }
    const path = at(`character_book.entries[${index}]`);
    const lore = convertLorebook([raw], [], new ReportBuilder(), 'lore');
    const made = lore.entries[0];
    const injection = lore.injections[0];
    if (slot?.item) {
      const entry = byId(slot.item);
      const rule = world.rules.find((item) => isObject(item) && Array.isArray(item.actions) && isObject(item.actions[0]) && item.actions[0].directiveId === slot.item);
      if (entry && made) {
        for (const field of ['name', 'content', 'keywords', 'secondaryKeywords', 'secondaryKeywordLogic', 'enabled', 'section', 'depth', 'apiRole', 'matchWholeWords', 'preventRecursion', 'excludeRecursion']) entry[field] = made[field];
        report.converted(path, `edited after the card was exported: entry "${slot.item}" takes the changes`);
        bookIds.push(slot.item);
        return;
      }
      if (rule && injection) {
        const action = (rule.actions as Json[])[0]!;
        action.content = injection.content;
        action.depth = injection.depth;
        rule.enabled = injection.enabled;
        report.converted(path, `edited after the card was exported: rule "${String(rule.id)}" takes the changes`);
        bookIds.push(slot.item);
        return;
      }
    }
    if (slot && !slot.item) {
      // The source card's own entry (never part of the world): kept with the card.
      bookIds.push(null);
      return;
    }
    // Added elsewhere (or changed from an always-sent text into an entry): a new item.
    if (made) {
      const id = freeId(`lore-${String(key)}`.toLowerCase().replace(/[^a-z0-9]+/g, '-'));
      const position = Math.max(-1, ...entries.filter((item) => item.section === made.section).map((item) => Number(item.position) || 0)) + 1;
      entries.push({ ...made, id, position });
      report.converted(path, `added after the card was exported: entry "${id}"`);
      bookIds.push(id);
    } else if (injection) {
      const id = freeId(`lore-${String(key)}`.toLowerCase().replace(/[^a-z0-9]+/g, '-'));
      world.rules.push(...depthRules([{ ...injection, id }]));
      report.converted(path, `added after the card was exported: rule "${id}-at-depth"`);
      bookIds.push(id);
    } else bookIds.push(null);
  });
  for (const slot of written) {
    if (seen.has(slot.key) || !slot.item) continue;
    const entryIndex = entries.findIndex((item) => item.id === slot.item);
    if (entryIndex >= 0) entries.splice(entryIndex, 1);
    const ruleIndex = world.rules.findIndex((rule) => isObject(rule) && Array.isArray(rule.actions) && isObject(rule.actions[0]) && rule.actions[0].directiveId === slot.item);
    if (ruleIndex >= 0) world.rules.splice(ruleIndex, 1);
    report.converted(at('character_book.entries'), `removed after the card was exported: "${slot.item}" goes`);
  }

  if (conflicts.length > 0) {
    report.warn(
      base || '(card)',
      `the card was edited after it was exported from here in ${conflicts.map((conflict) => conflict.field).join(', ')}, which ${conflicts.length === 1 ? 'is' : 'are'} made of several entries here: the world keeps its own text until you choose the card's`,
    );
  }
  return { world, ids: { greetings: greetingIds, book: bookIds }, conflicts };
}

/** The entries a card field was written from, as the export recorded them (several for a joined field). */
function cardFieldEntries(carried: Partial<CardWorldExtension>, field: string): string[] {
  const fields = isObject(carried.fields) ? carried.fields : {};
  return Array.isArray(fields[field]) ? fields[field] : [];
}

/** The card's text put into the world for a conflict the author settled for the card: its first entry takes it, the others go. */
export function takeCardText<W extends { entries: { id: string; content: string }[] }>(world: W, conflict: CardConflict): W {
  const [first, ...others] = conflict.entryIds;
  const entries = world.entries.filter((entry) => !others.includes(entry.id)).map((entry) => (entry.id === first ? { ...entry, content: conflict.card } : entry));
  return { ...world, entries };
}
