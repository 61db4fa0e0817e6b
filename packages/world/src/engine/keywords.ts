/**
 * Keyword matching shared by entries, rule triggers and conditional music.
 *
 * Case-insensitive (after NFKC normalization, so full-width Latin matches too). With
 * `matchWholeWords`, a keyword end that is a letter or digit of a script written with spaces
 * (Latin, Cyrillic, Greek, ...) must sit next to a boundary: the start or end of the text, or a
 * character that is neither a letter, a mark nor a digit, or a character of a script written
 * without spaces. Keyword ends in scripts written without spaces (Han, Hiragana, Katakana, Hangul,
 * Thai, Lao, Khmer, Myanmar, Tibetan) need no boundary: there they match as substrings.
 * So "cat" does not match "category", "caf" does not match "café" (é is a letter, not a
 * boundary), "東京" matches "東京タワー", and "Tokyo" matches "Tokyoへ".
 */

const SPACELESS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u;
const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;

export function normalizeForMatch(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

function needsBoundary(char: string | undefined): boolean {
  return char !== undefined && WORD_CHAR.test(char) && !SPACELESS.test(char);
}

function isBoundary(char: string | undefined): boolean {
  return char === undefined || !WORD_CHAR.test(char) || SPACELESS.test(char);
}

function charBefore(text: string, index: number): string | undefined {
  if (index <= 0) return undefined;
  const code = text.charCodeAt(index - 1);
  if (code >= 0xdc00 && code <= 0xdfff && index >= 2) return text.slice(index - 2, index);
  return text[index - 1];
}

function charAt(text: string, index: number): string | undefined {
  const point = text.codePointAt(index);
  return point === undefined ? undefined : String.fromCodePoint(point);
}

const normalizedKeywords = new Map<string, string>();

function normalizedKeyword(keyword: string): string {
  let needle = normalizedKeywords.get(keyword);
  if (needle === undefined) {
    needle = normalizeForMatch(keyword.trim());
    if (normalizedKeywords.size > 50_000) normalizedKeywords.clear();
    normalizedKeywords.set(keyword, needle);
  }
  return needle;
}

/**
 * A normalized text with a bit filter of its three-character slices: a keyword whose first,
 * middle or last slice is absent cannot occur, which rules out most keywords of a large world
 * without scanning the text (false "maybe" answers only cost the ordinary scan).
 */
export interface Haystack {
  readonly text: string;
  readonly filter: Uint32Array;
}

const FILTER_SHIFT = 15; // 2^17 bits

function trigramBit(text: string, index: number): number {
  return (
    (Math.imul(text.charCodeAt(index), 0x9e3779b1) + Math.imul(text.charCodeAt(index + 1), 0x85ebca6b) + Math.imul(text.charCodeAt(index + 2), 0xc2b2ae35)) >>>
    FILTER_SHIFT
  );
}

export function prepareHaystack(text: string): Haystack {
  const normalized = normalizeForMatch(text);
  const filter = new Uint32Array(1 << (32 - FILTER_SHIFT - 5));
  for (let index = 0; index + 3 <= normalized.length; index++) {
    const bit = trigramBit(normalized, index);
    filter[bit >>> 5] = (filter[bit >>> 5] as number) | (1 << (bit & 31));
  }
  return { text: normalized, filter };
}

function hasTrigram(haystack: Haystack, needle: string, index: number): boolean {
  const bit = trigramBit(needle, index);
  return (((haystack.filter[bit >>> 5] as number) >>> (bit & 31)) & 1) === 1;
}

function mayContain(haystack: Haystack, needle: string): boolean {
  if (needle.length < 3) return true;
  return hasTrigram(haystack, needle, 0) && hasTrigram(haystack, needle, (needle.length - 3) >> 1) && hasTrigram(haystack, needle, needle.length - 3);
}

/** `haystack` is a prepared haystack, or text already normalized with normalizeForMatch. */
export function containsKeyword(source: string | Haystack, keyword: string, wholeWords: boolean): boolean {
  const needle = normalizedKeyword(keyword);
  if (needle === '') return false;
  let haystack: string;
  if (typeof source === 'string') haystack = source;
  else {
    if (!mayContain(source, needle)) return false;
    haystack = source.text;
  }
  if (!wholeWords) return haystack.includes(needle);
  const checkStart = needsBoundary(charAt(needle, 0));
  const checkEnd = needsBoundary(charBefore(needle, needle.length));
  let from = haystack.indexOf(needle);
  while (from >= 0) {
    const startOk = !checkStart || isBoundary(charBefore(haystack, from));
    const endOk = !checkEnd || isBoundary(charAt(haystack, from + needle.length));
    if (startOk && endOk) return true;
    from = haystack.indexOf(needle, from + 1);
  }
  return false;
}

export function matchesAnyKeyword(haystack: string | Haystack, keywords: readonly string[] | undefined, wholeWords: boolean): boolean {
  if (!keywords) return false;
  for (const keyword of keywords) if (containsKeyword(haystack, keyword, wholeWords)) return true;
  return false;
}
