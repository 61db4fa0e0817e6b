/**
 * Text that cannot be stored: U+0000 (PostgreSQL text refuses it) and lone UTF-16 surrogates (no
 * UTF-8 form; JSON.stringify writes them as escapes that every later write then refuses). One
 * definition for the whole platform: the input guards of JSON bodies (@yumina/http) refuse such
 * text with its path, and the importer cleans it out of imported files with a report line.
 */

const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSAFE_ALL = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** True when a string holds U+0000 or a lone UTF-16 surrogate (neither can be stored as text). */
export function isUnsafeText(value: string): boolean {
  return UNSAFE.test(value);
}

/** The path of the first string (or object key) in `value` that is unsafe text, or null. */
export function findUnsafeText(value: unknown, path: (string | number)[] = []): (string | number)[] | null {
  if (typeof value === 'string') return isUnsafeText(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeText(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (isUnsafeText(key)) return [...path, key];
      const found = findUnsafeText(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

export interface CleanedText {
  text: string;
  /** U+0000 characters removed. */
  nul: number;
  /** Lone surrogates replaced by U+FFFD. */
  surrogates: number;
}

/** Removes U+0000 and replaces each lone surrogate with U+FFFD (the replacement character). */
export function cleanUnsafeText(value: string): CleanedText {
  let nul = 0;
  let surrogates = 0;
  const text = value.replace(UNSAFE_ALL, (match) => {
    if (match === '\u0000') {
      nul++;
      return '';
    }
    surrogates++;
    return '\uFFFD';
  });
  return { text, nul, surrogates };
}
