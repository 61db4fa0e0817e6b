/**
 * Reads the text chunks of a PNG file (tEXt, and iTXt when not compressed) from its bytes, and
 * writes them. Plain Uint8Array work, no Node built-ins: it runs in the browser too. SillyTavern
 * character cards keep their JSON, base64-encoded, in a `chara` (V2) or `ccv3` (V3) tEXt chunk.
 *
 * Speed (issue 31): a card's text chunk is megabytes long, so nothing here builds a string a byte
 * at a time. Latin-1 text is made from 32 KiB slices with String.fromCharCode, base64 is decoded
 * through a lookup table straight into bytes, and only the chunks asked for are touched.
 */

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export class PngTextError extends Error {
  readonly code = 'PNG_TEXT';
}

export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && SIGNATURE.every((byte, index) => bytes[index] === byte);
}

const SLICE = 0x8000;

/** Latin-1 bytes → text, 32 KiB at a time (one string per slice, joined once). */
export function latin1(bytes: Uint8Array): string {
  if (bytes.length <= SLICE) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += SLICE) parts.push(String.fromCharCode.apply(null, bytes.subarray(at, at + SLICE) as unknown as number[]));
  return parts.join('');
}

const typeOf = (bytes: Uint8Array, at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);

/** Keywords of text chunks that are compressed (zTXt, or iTXt with compression): not read here. */
export function compressedPngTextKeywords(bytes: Uint8Array): string[] {
  const keywords: string[] = [];
  forEachChunk(bytes, (type, data) => {
    const nul = data.indexOf(0);
    if (nul > 0 && (type === 'zTXt' || (type === 'iTXt' && data[nul + 1] === 1))) keywords.push(latin1(data.subarray(0, nul)));
  });
  return keywords;
}

function forEachChunk(bytes: Uint8Array, visit: (type: string, data: Uint8Array) => void): void {
  if (!isPng(bytes)) throw new PngTextError('not a PNG file (the signature is missing)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 8;
  while (offset + 12 <= bytes.length) {
    const length = view.getUint32(offset);
    const type = typeOf(bytes, offset + 4);
    const dataEnd = offset + 8 + length;
    if (dataEnd + 4 > bytes.length) throw new PngTextError(`the PNG chunk "${type}" at byte ${offset} runs past the end of the file`);
    visit(type, bytes.subarray(offset + 8, dataEnd));
    if (type === 'IEND') break;
    offset = dataEnd + 4;
  }
}

/** Keyword → text of every readable text chunk, in file order (a later chunk of the same keyword wins). */
export function readPngText(bytes: Uint8Array): Map<string, string> {
  const texts = new Map<string, string>();
  for (const [keyword, raw] of readPngTextBytes(bytes)) texts.set(keyword, raw.utf8 ? new TextDecoder().decode(raw.bytes) : latin1(raw.bytes));
  return texts;
}

/**
 * The raw bytes of text chunks (no copy: views into the file), optionally only those of the given
 * keywords. `utf8` marks an iTXt chunk (UTF-8) rather than a tEXt one (Latin-1).
 */
export function readPngTextBytes(bytes: Uint8Array, keywords?: readonly string[]): Map<string, { bytes: Uint8Array; utf8: boolean }> {
  const texts = new Map<string, { bytes: Uint8Array; utf8: boolean }>();
  const wanted = (keyword: string) => keywords === undefined || keywords.includes(keyword);
  forEachChunk(bytes, (type, data) => {
    if (type === 'tEXt') {
      const nul = data.indexOf(0);
      if (nul > 0 && nul < 80) {
        const keyword = latin1(data.subarray(0, nul));
        if (wanted(keyword)) texts.set(keyword, { bytes: data.subarray(nul + 1), utf8: false });
      }
    } else if (type === 'iTXt') {
      // keyword \0 compressionFlag compressionMethod languageTag \0 translatedKeyword \0 text
      const nul = data.indexOf(0);
      if (nul > 0 && data[nul + 1] === 0) {
        const languageEnd = data.indexOf(0, nul + 3);
        const translatedEnd = languageEnd < 0 ? -1 : data.indexOf(0, languageEnd + 1);
        const keyword = latin1(data.subarray(0, nul));
        if (translatedEnd >= 0 && wanted(keyword)) texts.set(keyword, { bytes: data.subarray(translatedEnd + 1), utf8: true });
      }
    }
  });
  return texts;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Character code → 6-bit value; 64 for whitespace (skipped), 65 for padding, 255 for anything else. */
const BASE64_VALUES = (() => {
  const table = new Uint8Array(256).fill(255);
  for (let index = 0; index < 64; index++) table[BASE64.charCodeAt(index)] = index;
  table['-'.charCodeAt(0)] = 62; // the URL-safe alphabet too
  table['_'.charCodeAt(0)] = 63;
  for (const space of [9, 10, 13, 32]) table[space] = 64;
  table['='.charCodeAt(0)] = 65;
  return table;
})();

export class Base64Error extends Error {
  readonly code = 'BASE64';
}

/**
 * Base64 → bytes, from text or from the Latin-1 bytes of a text chunk (so a chunk is decoded
 * without ever becoming a string). Whitespace is skipped; anything else outside the alphabet, or
 * data after the padding, is an error.
 */
export function decodeBase64(input: string | Uint8Array): Uint8Array {
  const length = input.length;
  const out = new Uint8Array(Math.ceil((length * 3) / 4));
  const code = typeof input === 'string' ? (index: number) => input.charCodeAt(index) : (index: number) => input[index]!;
  let written = 0;
  let buffer = 0;
  let bits = 0;
  let padded = false;
  for (let index = 0; index < length; index++) {
    const c = code(index);
    const value = c < 256 ? BASE64_VALUES[c]! : 255;
    if (value < 64) {
      if (padded) throw new Base64Error(`base64 data continues after its padding (at character ${index})`);
      buffer = (buffer << 6) | value;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[written++] = (buffer >> bits) & 0xff;
      }
    } else if (value === 65) padded = true;
    else if (value !== 64) throw new Base64Error(`not base64: character ${index} is ${JSON.stringify(String.fromCharCode(c))}`);
  }
  return out.subarray(0, written);
}

/** Base64 text (or its Latin-1 bytes) → UTF-8 text (the card JSON inside a text chunk). */
export function decodeBase64Utf8(text: string | Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(decodeBase64(text));
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let index = 0; index < bytes.length; index++) crc = (CRC_TABLE[(crc ^ bytes[index]!) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let index = 0; index < 4; index++) out[4 + index] = type.charCodeAt(index);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * A 1×1 PNG carrying the given tEXt chunks (values as latin-1 text): what SillyTavern writes
 * when it exports a card, minus the picture. For fixtures and tests.
 */
export function pngWithText(texts: Readonly<Record<string, string>>): Uint8Array {
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, 1);
  view.setUint32(4, 1);
  header.set([8, 6, 0, 0, 0], 8);
  // zlib stream of one scanline: filter 0 + RGBA 0,0,0,0 (stored block).
  const pixels = Uint8Array.from([0x78, 0x01, 0x01, 0x05, 0x00, 0xfa, 0xff, 0, 0, 0, 0, 0, 0x00, 0x05, 0x00, 0x01]);
  const parts = [Uint8Array.from(SIGNATURE), chunk('IHDR', header)];
  for (const [keyword, text] of Object.entries(texts)) {
    parts.push(chunk('tEXt', asciiBytes(`${keyword}\0${text}`)));
  }
  parts.push(chunk('IDAT', pixels), chunk('IEND', new Uint8Array(0)));
  return concat(parts);
}

/** Bytes → base64 text (32 KiB slices, no per-byte string building). */
export function encodeBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += SLICE * 3) parts.push(btoa(latin1(bytes.subarray(at, at + SLICE * 3))));
  return parts.join('');
}

/** UTF-8 text → base64 (what goes into a card's text chunk). */
export function encodeBase64Utf8(text: string): string {
  return encodeBase64(new TextEncoder().encode(text));
}

/** ASCII text → bytes (base64 text into a chunk). */
const asciiBytes = (text: string) => {
  const out = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index++) out[index] = text.charCodeAt(index) & 0xff;
  return out;
};

/**
 * The PNG with its text chunks of the given keywords replaced (old ones of those keywords
 * removed; the new ones written right after IHDR, as SillyTavern does). Values are ASCII
 * (base64). Every other chunk is copied as it is.
 */
export function pngReplaceText(png: Uint8Array, texts: Readonly<Record<string, string>>): Uint8Array {
  return rewriteText(png, Object.keys(texts), texts);
}

/** The PNG without its text chunks of the given keywords (a card's picture without the card); every other chunk as it is. */
export function pngWithoutText(png: Uint8Array, keywords: readonly string[]): Uint8Array {
  return rewriteText(png, keywords, {});
}

function rewriteText(png: Uint8Array, keywords: readonly string[], texts: Readonly<Record<string, string>>): Uint8Array {
  const parts: Uint8Array[] = [Uint8Array.from(SIGNATURE)];
  forEachChunk(png, (type, data) => {
    const whole = png.subarray(data.byteOffset - png.byteOffset - 8, data.byteOffset - png.byteOffset + data.length + 4);
    if ((type === 'tEXt' || type === 'iTXt' || type === 'zTXt') && keywords.some((keyword) => startsWithKeyword(data, keyword))) return;
    parts.push(whole);
    if (type === 'IHDR') for (const [keyword, text] of Object.entries(texts)) parts.push(chunk('tEXt', asciiBytes(`${keyword}\0${text}`)));
  });
  return concat(parts);
}

function startsWithKeyword(data: Uint8Array, keyword: string): boolean {
  if (data.length <= keyword.length || data[keyword.length] !== 0) return false;
  for (let index = 0; index < keyword.length; index++) if (data[index] !== keyword.charCodeAt(index)) return false;
  return true;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
