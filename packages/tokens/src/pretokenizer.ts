/**
 * A hand-written scanner for the cl100k pre-tokenizer pattern
 *
 *   (?:'s|'S|'t|'T|'re|…|'d|'D)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * with JavaScript's `u`-flag semantics (what js-tiktoken runs: `\s` includes U+FEFF, code points
 * not UTF-16 units). It yields exactly the pieces the regex yields (a test checks it against the
 * regex on random text) without allocating a match array per piece, which is most of the cost of
 * counting ordinary text. Piece boundaries are reported as [start, end) offsets.
 */

const OTHER = 0;
const LETTER = 1;
const NUMBER = 2;
const SPACE = 3; // \s other than \r \n
const NEWLINE = 4; // \r or \n

const IS_LETTER = /^\p{L}$/u;
const IS_NUMBER = /^\p{N}$/u;
const IS_SPACE = /^\s$/u;

/** Classes of BMP code points, filled lazily (0xff = not yet known). */
const bmp = new Uint8Array(0x10000).fill(0xff);
const astral = new Map<number, number>();

function classifySlow(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (cp === 0x0a || cp === 0x0d) return NEWLINE;
  if (IS_LETTER.test(ch)) return LETTER;
  if (IS_NUMBER.test(ch)) return NUMBER;
  if (IS_SPACE.test(ch)) return SPACE;
  return OTHER;
}

for (let cp = 0; cp < 0x80; cp++) bmp[cp] = classifySlow(cp);

function classOf(cp: number): number {
  if (cp < 0x10000) {
    let c = bmp[cp]!;
    if (c === 0xff) {
      // a lone surrogate is its own code point in `u` mode: neither letter, number nor space
      c = cp >= 0xd800 && cp <= 0xdfff ? OTHER : classifySlow(cp);
      bmp[cp] = c;
    }
    return c;
  }
  let c = astral.get(cp);
  if (c === undefined) {
    c = classifySlow(cp);
    astral.set(cp, c);
  }
  return c;
}

/** Code point at i (a lone surrogate counts as itself). */
function codePointAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
  }
  return c;
}

const width = (cp: number) => (cp >= 0x10000 ? 2 : 1);

/** Class of the code point starting at i; -1 at the end of the string. */
function classAt(s: string, i: number): number {
  if (i >= s.length) return -1;
  const c = s.charCodeAt(i);
  if (c < 0x80) return bmp[c]!;
  return classOf(codePointAt(s, i));
}

/** Index after the run of code points of class `cls` starting at i. */
function runOf(s: string, i: number, cls: number): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (bmp[c] !== cls) return i;
      i++;
      continue;
    }
    const cp = codePointAt(s, i);
    if (classOf(cp) !== cls) return i;
    i += width(cp);
  }
  return i;
}

function isSpaceClass(cls: number): boolean {
  return cls === SPACE || cls === NEWLINE;
}

/** Length of a contraction ('s 't 're 've 'm 'll 'd, any case) at i, or 0. */
function contraction(s: string, i: number): number {
  const a = s.charCodeAt(i + 1) | 0x20; // lower-case ASCII letters (NaN | 0x20 = 0x20 past the end)
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return 2; // s t m d
  const b = s.charCodeAt(i + 2) | 0x20;
  if ((a === 0x72 && b === 0x65) || (a === 0x76 && b === 0x65) || (a === 0x6c && b === 0x6c)) return 3; // re ve ll
  return 0;
}

/** End (exclusive) of the piece starting at i (i < s.length). */
export function pieceEnd(s: string, i: number): number {
  const first = s.charCodeAt(i);
  // 1. contractions
  if (first === 0x27) {
    const len = contraction(s, i);
    if (len) return i + len;
  }
  const cls = first < 0x80 ? bmp[first]! : classOf(codePointAt(s, i));
  const w = first >= 0xd800 && first <= 0xdbff ? width(codePointAt(s, i)) : 1;
  // 2. [^\r\n\p{L}\p{N}]?\p{L}+
  if (cls === LETTER) return runOf(s, i + w, LETTER);
  if ((cls === OTHER || cls === SPACE) && classAt(s, i + w) === LETTER) return runOf(s, i + w, LETTER);
  // 3. \p{N}{1,3}
  if (cls === NUMBER) {
    let j = i + w;
    for (let k = 1; k < 3 && classAt(s, j) === NUMBER; k++) j += width(codePointAt(s, j));
    return j;
  }
  // 4. ' '?[^\s\p{L}\p{N}]+[\r\n]*
  if (cls === OTHER || (first === 0x20 && classAt(s, i + 1) === OTHER)) {
    const start = cls === OTHER ? i : i + 1;
    const end = runOf(s, start, OTHER);
    return runOf(s, end, NEWLINE);
  }
  // whitespace: 5. \s*[\r\n]+   6. \s+(?!\S)   7. \s+
  let end = i;
  let lastNewline = -1;
  const n = s.length;
  while (end < n) {
    const c = s.charCodeAt(end);
    const k = c < 0x80 ? bmp[c]! : classOf(codePointAt(s, end));
    if (!isSpaceClass(k)) break;
    if (k === NEWLINE) lastNewline = end;
    end += c >= 0xd800 && c <= 0xdbff ? width(codePointAt(s, end)) : 1;
  }
  if (lastNewline >= 0) return lastNewline + 1;
  if (end === n) return end;
  // all whitespace code points here are single UTF-16 units
  if (end - i >= 2) return end - 1;
  return end;
}
