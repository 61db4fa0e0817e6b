/**
 * A SillyTavern card read as a card reader reads it (issue 49's acceptance): a PNG's text chunks by
 * png-chunks-extract, the card (the `ccv3` chunk first, as SillyTavern reads it, then `chara`)
 * normalized by RisuAI's card library (@risuai/ccardlib). Shared by the card round-trip tests of
 * the importer and of the container's export route.
 */
import { CCardLib } from '@risuai/ccardlib';
import extractChunks from 'png-chunks-extract';
import { CARD_EXTENSION, decodeBase64Utf8, isPng } from '@yumina/world';

type Json = Record<string, unknown>;

/** A PNG's text chunks as a reader sees them (png-chunks-extract; tEXt is keyword, NUL, latin-1 text). */
export function pngTexts(png: Uint8Array): Map<string, string> {
  const texts = new Map<string, string>();
  for (const chunk of extractChunks(png)) {
    if (chunk.name !== 'tEXt') continue;
    const nul = chunk.data.indexOf(0);
    texts.set(Buffer.from(chunk.data.subarray(0, nul)).toString('latin1'), Buffer.from(chunk.data.subarray(nul + 1)).toString('latin1'));
  }
  return texts;
}

/** The picture's own chunks (everything but the card's text): what must come back untouched. */
export const pictureChunks = (png: Uint8Array) =>
  extractChunks(png)
    .filter((chunk) => !(chunk.name === 'tEXt' && /^(chara|ccv3)\0/.test(Buffer.from(chunk.data.subarray(0, 6)).toString('latin1'))))
    .map((chunk) => `${chunk.name}:${Buffer.from(chunk.data).toString('base64')}`);

/** The card a file holds, as SillyTavern reads it: a PNG's ccv3 chunk, else its chara chunk; or the JSON. */
export function readCard(file: Uint8Array): Json {
  if (!isPng(file)) return JSON.parse(Buffer.from(file).toString('utf8')) as Json;
  const texts = pngTexts(file);
  return JSON.parse(decodeBase64Utf8(texts.get('ccv3') ?? texts.get('chara')!)) as Json;
}

/**
 * What a card reader holds: the card normalized by @risuai/ccardlib to the original's version (V3
 * for a V3 original; V2 for a V1 or V2 one, which is what SillyTavern keeps of those), without
 * the platform's own extension. SillyTavern reads `data`; fields outside it are V1 readers' copies.
 */
export function held(card: Json, version: 'v2' | 'v3'): Json {
  const normalized = CCardLib.character.convert(structuredClone(card) as never, { to: version }) as unknown as { spec: string; spec_version: string; data: Json & { extensions: Json } };
  delete normalized.data.extensions[CARD_EXTENSION];
  return { spec: normalized.spec, spec_version: normalized.spec_version, data: normalized.data };
}

/** The card's data as written, without the platform's extension and what V3 requires that a V2 original had not. */
export function rawData(card: Json, original: Json): Json {
  const data = structuredClone(card.data) as Json & { extensions: Json; character_book?: { entries: Json[] } };
  const before = original.data as Json & { character_book?: { entries: Json[] } };
  delete data.extensions[CARD_EXTENSION];
  if (!('group_only_greetings' in before)) delete data.group_only_greetings;
  data.character_book?.entries.forEach((entry, index) => {
    if (!('use_regex' in (before.character_book?.entries[index] ?? {}))) delete entry.use_regex;
  });
  return data;
}
