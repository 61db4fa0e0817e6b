import type { CardExport } from './card-export.ts';

/**
 * The card a world was imported from, kept for the way back (issue 49): exporting the world as a
 * card writes that card again, with the author's edits since the import merged into it. Nothing
 * this platform does not use is lost on the way (the card's version, unknown extensions, the
 * lorebook's name and link, every SillyTavern setting of an entry, V3's own fields), and nothing
 * the author changed here is ignored.
 *
 * The merge is three-way, field by field: the source card (as imported), the plain export of the
 * world as imported (the baseline) and the plain export of the world now. A field whose plain
 * export did not change since the import is written as the source card has it; one that changed
 * is written as the world has it now, and inside an object (a lorebook entry, the extensions)
 * only the changed fields are. Greetings and lorebook entries are matched by the world item they
 * became, so an entry edited here keeps its other SillyTavern settings, a deleted one goes and a
 * new one is added. Browser-safe like the importer.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A plain export keyed by world item: greetings and book entries by the item they were written from. */
export interface KeyedCard {
  /** The card's data without `first_mes`, `alternate_greetings`, the book's entries and the platform's extension. */
  data: Json;
  greetings: Record<string, string>;
  book: Record<string, Json>;
}

export interface CardSource {
  /** The card as imported (its `spec`, `data` and any field outside `data`), without the platform's own extension. */
  card: Json;
  /** The world item each greeting (`first_mes`, then the alternates) and each book entry of the card became; null for none. */
  ids: { greetings: (string | null)[]; book: (string | null)[] };
  /** The plain export of the world as imported. */
  baseline: KeyedCard;
}

/** Deep equality of JSON values (key order does not matter). */
export function sameJson(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (Array.isArray(left) && Array.isArray(right)) return left.length === right.length && left.every((item, index) => sameJson(item, right[index]));
  if (isObject(left) && isObject(right)) {
    const keys = Object.keys(left).filter((key) => left[key] !== undefined);
    const others = Object.keys(right).filter((key) => right[key] !== undefined);
    return keys.length === others.length && keys.every((key) => sameJson(left[key], right[key]));
  }
  return false;
}

/** The source's value where the author changed nothing, the world's where they did (inside objects, key by key). */
export function mergeThreeWay(source: unknown, baseline: unknown, now: unknown): unknown {
  if (sameJson(baseline, now)) return source;
  if (!isObject(baseline) || !isObject(now) || !isObject(source)) return now;
  const merged: Json = { ...source };
  for (const key of new Set([...Object.keys(baseline), ...Object.keys(now)])) {
    if (!(key in now)) {
      delete merged[key];
      continue;
    }
    const value = mergeThreeWay(source[key], baseline[key], now[key]);
    if (value === undefined) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** The platform's own extension key (card-export.ts CARD_EXTENSION), left out of what is compared and kept. */
const OWN_EXTENSION = 'yumina';

/** A plain export keyed by world item (the form a baseline is kept in). */
export function keyedCard(exported: Pick<CardExport, 'card' | 'bookIds' | 'greetingIds'>): KeyedCard {
  const data = { ...(exported.card.data as Json) };
  const greetings = [data.first_mes, ...(Array.isArray(data.alternate_greetings) ? data.alternate_greetings : [])];
  const book = isObject(data.character_book) ? { ...data.character_book } : null;
  const entries = book && Array.isArray(book.entries) ? book.entries : [];
  delete data.first_mes;
  delete data.alternate_greetings;
  if (book) {
    delete book.entries;
    data.character_book = book;
  }
  if (isObject(data.extensions)) {
    const { [OWN_EXTENSION]: _own, ...others } = data.extensions;
    data.extensions = others;
  }
  return {
    data,
    // A world without a greeting writes an empty first_mes, which no item stands behind.
    greetings: Object.fromEntries(exported.greetingIds.flatMap((id, index) => (id === null ? [] : [[id, String(greetings[index] ?? '')]]))),
    book: Object.fromEntries(exported.bookIds.flatMap((id, index) => (id === null ? [] : [[id, withoutOrder(entries[index])]]))),
  };
}

/** A plain export's book entry without what only counts entries (`id`, `display_index`): adding one here does not edit the others. */
function withoutOrder(entry: unknown): Json {
  if (!isObject(entry)) return {};
  const { id: _id, ...rest } = entry;
  if (isObject(rest.extensions)) {
    const { display_index: _index, ...extensions } = rest.extensions;
    rest.extensions = extensions;
  }
  return rest;
}

/** V1 copies SillyTavern writes outside `data` (for old readers), refreshed from the merged data when the source has them. */
const V1_COPIES: Record<string, (data: Json) => unknown> = {
  name: (data) => data.name,
  description: (data) => data.description,
  personality: (data) => data.personality,
  scenario: (data) => data.scenario,
  first_mes: (data) => data.first_mes,
  mes_example: (data) => data.mes_example,
  creatorcomment: (data) => data.creator_notes,
  tags: (data) => data.tags,
  talkativeness: (data) => (isObject(data.extensions) ? data.extensions.talkativeness : undefined),
};

/** Items matched by world item: the source's order, the source's value where unchanged, new items at the end. */
function mergeItems<T>(
  source: readonly T[],
  sourceIds: readonly (string | null)[],
  baseline: Record<string, T>,
  now: Record<string, T>,
  nowOrder: readonly (string | null)[],
  merge: (source: T, baseline: T | undefined, now: T) => T,
): { items: T[]; ids: (string | null)[]; added: number } {
  const items: T[] = [];
  const ids: (string | null)[] = [];
  const seen = new Set<string>();
  source.forEach((item, index) => {
    const id = sourceIds[index] ?? null;
    const inBaseline = id !== null && Object.hasOwn(baseline, id);
    const inNow = id !== null && Object.hasOwn(now, id);
    if (id !== null) seen.add(id);
    // Deleted here since the import.
    if (inBaseline && !inNow) return;
    // Never part of the world (an empty greeting, an entry the import dropped): as it was.
    if (!inNow) {
      items.push(item);
      ids.push(null);
      return;
    }
    items.push(merge(item, inBaseline ? baseline[id] : undefined, now[id]!));
    ids.push(id);
  });
  let added = 0;
  for (const id of nowOrder) {
    if (id === null || seen.has(id)) continue;
    items.push(now[id]!);
    ids.push(id);
    added++;
  }
  return { items, ids, added };
}

/** The exported card (the plain mapping of the world now) merged into the source card. */
export function mergeCardSource(source: CardSource, exported: CardExport): CardExport {
  const now = keyedCard(exported);
  const sourceData = isObject(source.card.data) ? source.card.data : {};
  // A copy at each level written below: the source stays as it was for the next export.
  const data = { ...(mergeThreeWay(sourceData, source.baseline.data, now.data) as Json) };

  // Greetings: the source's first_mes and alternates (an empty first greeting stays), edits and new ones from here.
  const sourceGreetings = [typeof sourceData.first_mes === 'string' ? sourceData.first_mes : '', ...(Array.isArray(sourceData.alternate_greetings) ? sourceData.alternate_greetings.map(String) : [])];
  const greetings = mergeItems(sourceGreetings, source.ids.greetings, source.baseline.greetings, now.greetings, exported.greetingIds, (item, baseline, current) =>
    baseline === undefined || baseline !== current ? current : item,
  );
  data.first_mes = greetings.items[0] ?? '';
  data.alternate_greetings = greetings.items.slice(1);

  // The lorebook: its name and link stay the source's; entries merged one by one.
  const sourceBook = isObject(sourceData.character_book) ? sourceData.character_book : null;
  const sourceEntries = sourceBook && Array.isArray(sourceBook.entries) ? (sourceBook.entries as Json[]) : [];
  const book = mergeItems(sourceEntries, source.ids.book, source.baseline.book, now.book, exported.bookIds, (item, baseline, current) =>
    mergeThreeWay(item, baseline ?? {}, current) as Json,
  );
  if (sourceBook || book.items.length > 0) {
    const merged: Json = isObject(data.character_book) ? { ...data.character_book } : {};
    if (sourceBook && 'name' in sourceBook) merged.name = sourceBook.name;
    // A new entry gets the next id (and display index) after the book's own.
    const taken = book.items.map((entry) => (isObject(entry) && typeof entry.id === 'number' ? entry.id : -1));
    let next = Math.max(-1, ...taken.slice(0, book.items.length - book.added)) + 1;
    merged.entries = book.items.map((entry, index) => {
      if (index < book.items.length - book.added) return entry;
      const id = next++;
      return { id, ...entry, extensions: { ...(isObject(entry.extensions) ? entry.extensions : {}), display_index: id } };
    });
    data.character_book = merged;
  } else delete data.character_book;
  // What V3 requires and a V1/V2 source has not: group-only greetings, and each entry's regex flag (V2 keys are never regular expressions).
  if (!Array.isArray(data.group_only_greetings)) data.group_only_greetings = [];
  if (isObject(data.character_book) && Array.isArray(data.character_book.entries)) {
    data.character_book.entries = data.character_book.entries.map((entry: unknown) => (isObject(entry) && typeof entry.use_regex !== 'boolean' ? { ...entry, use_regex: false } : entry));
  }

  // Fields outside data: kept, V1 copies refreshed.
  const card: Json = {};
  for (const [key, value] of Object.entries(source.card)) {
    if (key === 'data') continue;
    card[key] = key in V1_COPIES && key !== 'spec' ? (V1_COPIES[key]!(data) ?? value) : value;
  }
  card.spec = 'chara_card_v3';
  card.spec_version = '3.0';
  card.data = data;
  return { ...exported, card, bookIds: book.ids, greetingIds: greetings.ids };
}
