/**
 * Reads the text chunks of a PNG file (tEXt, and iTXt when not compressed) from its bytes. Plain
 * Uint8Array work, no Node built-ins: it runs in the browser too. SillyTavern character cards
 * keep their JSON, base64-encoded, in a `chara` (V2) or `ccv3` (V3) tEXt chunk.
 */

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export class PngTextError extends Error {
  readonly code = 'PNG_TEXT';
}

export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && SIGNATURE.every((byte, index) => bytes[index] === byte);
}

const latin1 = (bytes: Uint8Array) => Array.from(bytes, (byte) => String.fromCharCode(byte)).join('');

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
    const type = latin1(bytes.subarray(offset + 4, offset + 8));
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
  forEachChunk(bytes, (type, data) => {
    if (type === 'tEXt') {
      const nul = data.indexOf(0);
      if (nul > 0) texts.set(latin1(data.subarray(0, nul)), latin1(data.subarray(nul + 1)));
    } else if (type === 'iTXt') {
      // keyword \0 compressionFlag compressionMethod languageTag \0 translatedKeyword \0 text
      const nul = data.indexOf(0);
      if (nul > 0 && data[nul + 1] === 0) {
        const languageEnd = data.indexOf(0, nul + 3);
        const translatedEnd = languageEnd < 0 ? -1 : data.indexOf(0, languageEnd + 1);
        if (translatedEnd >= 0) texts.set(latin1(data.subarray(0, nul)), new TextDecoder().decode(data.subarray(translatedEnd + 1)));
      }
    }
  });
  return texts;
}

/** Base64 text → UTF-8 text (the card JSON inside a text chunk). */
export function decodeBase64Utf8(text: string): string {
  const binary = atob(text.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
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
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
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
    parts.push(chunk('tEXt', Uint8Array.from(`${keyword}\0${text}`, (char) => char.charCodeAt(0) & 0xff)));
  }
  parts.push(chunk('IDAT', pixels), chunk('IEND', new Uint8Array(0)));
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** UTF-8 text → base64 (what goes into a card's text chunk). */
export function encodeBase64Utf8(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
