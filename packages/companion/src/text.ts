/** UTF-8 byte length without allocating. Lone surrogates count as U+FFFD (3 bytes), as TextEncoder does. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Make text safe to store: drop NUL and other control characters (keeping tab and newline),
 * replace lone surrogates (PostgreSQL jsonb refuses both), and trim.
 */
export function cleanText(text: string): string {
  let kept = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a) || c === 0x7f) continue;
    kept += text[i];
  }
  return kept
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
    .trim();
}

/** Cut text to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (utf8ByteLength(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = utf8ByteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return text.slice(0, end);
}

/**
 * UTF-8 size of `value` as PostgreSQL prints jsonb (`{"a": 1, "b": [1, 2]}`): JSON.stringify's size
 * plus one space after every `:` and `,`. An upper bound for both forms, so a CHECK on either holds.
 */
export function storedJsonBytes(value: unknown): number {
  if (value === null || value === undefined) return 4;
  switch (typeof value) {
    case 'string':
      return utf8ByteLength(JSON.stringify(value));
    case 'number':
    case 'boolean':
      return JSON.stringify(value).length;
    case 'object': {
      if (Array.isArray(value)) {
        let size = 2 + Math.max(0, value.length - 1) * 2;
        for (const item of value) size += storedJsonBytes(item);
        return size;
      }
      const entries = Object.entries(value).filter(([, v]) => v !== undefined);
      let size = 2 + Math.max(0, entries.length - 1) * 2;
      for (const [k, v] of entries) size += utf8ByteLength(JSON.stringify(k)) + 2 + storedJsonBytes(v);
      return size;
    }
    default:
      return 4;
  }
}
