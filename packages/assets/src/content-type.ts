const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json',
  map: 'application/json',
  wasm: 'application/wasm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  txt: 'text/plain; charset=utf-8',
};

/** The content type of a delivered file, by its extension (the upload tool decides what is uploaded). */
export function contentTypeFor(key: string): string {
  const ext = key.slice(key.lastIndexOf('.') + 1).toLowerCase();
  return TYPES[ext] ?? 'application/octet-stream';
}

/** Build outputs with a content hash in the name (`main.3f2a1b9c.js`, `app-BX3k9_aa.wasm`) never change. */
export function isHashedAsset(key: string): boolean {
  const name = key.slice(key.lastIndexOf('/') + 1);
  return /[.-][A-Za-z0-9_]{8,}\.[a-z0-9]+$/.test(name) && /\d/.test(name.replace(/\.[a-z0-9]+$/, '').slice(-12));
}

export const isHtml = (key: string) => /\.html?$/i.test(key);
