/**
 * A small deterministic hash, independent of any simulation random generator: FNV-1a (32 bit)
 * over the UTF-8 of a key, followed by murmur3's 32-bit finalizer so that every bit (and so every
 * small modulus) is well mixed even for keys that differ in one character.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export function fnv1a32(text: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    // Hash UTF-8 bytes so the value matches across runtimes and encodings.
    if (c < 0x80) {
      h = Math.imul(h ^ c, FNV_PRIME);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    const bytes =
      c < 0x800
        ? [0xc0 | (c >> 6), 0x80 | (c & 63)]
        : c < 0x10000
          ? [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63)]
          : [0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63)];
    for (const b of bytes) h = Math.imul(h ^ b, FNV_PRIME);
  }
  return h >>> 0;
}

/** murmur3 fmix32: spreads the entropy of every input bit across all output bits. */
export function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The hash of one decision, salted with the adventure level and the campaign cycle. `purpose`
 * separates independent decisions (outcome, invitation, idle delay, price) for the same level.
 */
export function levelHash(purpose: string, level: number, cycle: number): number {
  return fmix32(fnv1a32(`companion:${purpose}:${level}:${cycle}`));
}
