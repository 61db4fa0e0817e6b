/**
 * The type of an uploaded world asset, from its first bytes (magic numbers), never from its name.
 * Only images, audio and fonts are accepted; SVG and anything text-like (HTML, scripts) are not,
 * since a browser could run them.
 */
export type AssetKind = 'image' | 'audio' | 'font';

export interface SniffedType {
  kind: AssetKind;
  contentType: string;
}

const ascii = (bytes: Uint8Array, at: number, text: string) => {
  if (bytes.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
};
const startsWith = (bytes: Uint8Array, sig: readonly number[]) => bytes.length >= sig.length && sig.every((b, i) => bytes[i] === b);

export function sniffAssetType(bytes: Uint8Array): SniffedType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { kind: 'image', contentType: 'image/png' };
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { kind: 'image', contentType: 'image/jpeg' };
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return { kind: 'image', contentType: 'image/gif' };
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return { kind: 'image', contentType: 'image/webp' };
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WAVE')) return { kind: 'audio', contentType: 'audio/wav' };
  if (ascii(bytes, 4, 'ftyp')) {
    const brand = String.fromCharCode(...bytes.slice(8, 12));
    if (brand === 'avif' || brand === 'avis') return { kind: 'image', contentType: 'image/avif' };
    if (brand === 'M4A ' || brand === 'M4B ') return { kind: 'audio', contentType: 'audio/mp4' };
    return null;
  }
  if (ascii(bytes, 0, 'OggS')) return { kind: 'audio', contentType: 'audio/ogg' };
  if (ascii(bytes, 0, 'fLaC')) return { kind: 'audio', contentType: 'audio/flac' };
  if (ascii(bytes, 0, 'ID3')) return { kind: 'audio', contentType: 'audio/mpeg' };
  if (bytes.length >= 2 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0) {
    // MPEG audio frame sync: layer bits 01..11 are MP3/MP2/MP1; 00 is AAC in ADTS.
    return (bytes[1]! & 0x06) === 0 ? { kind: 'audio', contentType: 'audio/aac' } : { kind: 'audio', contentType: 'audio/mpeg' };
  }
  if (ascii(bytes, 0, 'wOFF')) return { kind: 'font', contentType: 'font/woff' };
  if (ascii(bytes, 0, 'wOF2')) return { kind: 'font', contentType: 'font/woff2' };
  if (ascii(bytes, 0, 'OTTO')) return { kind: 'font', contentType: 'font/otf' };
  if (startsWith(bytes, [0x00, 0x01, 0x00, 0x00]) || ascii(bytes, 0, 'true')) return { kind: 'font', contentType: 'font/ttf' };
  return null;
}
