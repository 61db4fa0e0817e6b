/**
 * Issue 49 points 1–7: a SillyTavern card imported here and exported again is the card SillyTavern
 * held, but for the platform's own extension. Every card of the test fixtures (tests/fixtures/cards
 * and the two cards of tests/fixtures/worlds) goes import → export (PNG cards into their own
 * picture) and is read back as a card reader reads it: the PNG's chunks by png-chunks-extract,
 * the card (ccv3 first, as SillyTavern reads it, then the chara copy) normalized by RisuAI's card
 * library (@risuai/ccardlib); both sides the same way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { CCardLib } from '@risuai/ccardlib';
import extractChunks from 'png-chunks-extract';
import { describe, expect, it } from 'vitest';
import { CARD_EXTENSION, cardPng, exportCard } from './card-export.ts';
import { type ImportResult, importWorld } from './import-world.ts';
import { decodeBase64Utf8, isPng, pngWithoutText } from './png-text.ts';

type Json = Record<string, unknown>;
const FIXTURES = new URL('../../../../tests/fixtures/', import.meta.url);
const CARDS = [
  ...readdirSync(new URL('cards/', FIXTURES)).map((name) => `cards/${name}`),
  'worlds/card-v2.json',
  'worlds/card-v3.json',
].sort();

function imported(input: unknown): Extract<ImportResult, { ok: true }> {
  const result = importWorld(input, { generateId: () => '11111111-1111-4111-8111-111111111111', now: () => new Date('2026-03-05T20:00:00Z') });
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result;
}

/** A PNG's text chunks as a reader sees them (png-chunks-extract; tEXt is keyword, NUL, latin-1 text). */
function pngTexts(png: Uint8Array): Map<string, string> {
  const texts = new Map<string, string>();
  for (const chunk of extractChunks(png)) {
    if (chunk.name !== 'tEXt') continue;
    const nul = chunk.data.indexOf(0);
    texts.set(Buffer.from(chunk.data.subarray(0, nul)).toString('latin1'), Buffer.from(chunk.data.subarray(nul + 1)).toString('latin1'));
  }
  return texts;
}

/** The picture's own chunks (everything but the card's text): what must come back untouched. */
const pictureChunks = (png: Uint8Array) =>
  extractChunks(png)
    .filter((chunk) => !(chunk.name === 'tEXt' && /^(chara|ccv3)\0/.test(Buffer.from(chunk.data.subarray(0, 6)).toString('latin1'))))
    .map((chunk) => `${chunk.name}:${Buffer.from(chunk.data).toString('base64')}`);

/** The card a file holds, as SillyTavern reads it: a PNG's ccv3 chunk, else its chara chunk; or the JSON. */
function readCard(file: Uint8Array): Json {
  if (!isPng(file)) return JSON.parse(Buffer.from(file).toString('utf8')) as Json;
  const texts = pngTexts(file);
  return JSON.parse(decodeBase64Utf8(texts.get('ccv3') ?? texts.get('chara')!)) as Json;
}

/**
 * What a card reader holds: the card normalized by @risuai/ccardlib to the original's version (V3
 * for a V3 original; V2 for a V1 or V2 one, which is what SillyTavern keeps of those), without
 * the platform's own extension. SillyTavern reads `data`; fields outside it are V1 readers' copies.
 */
function held(card: Json, version: 'v2' | 'v3'): Json {
  const normalized = CCardLib.character.convert(structuredClone(card) as never, { to: version }) as unknown as { spec: string; spec_version: string; data: Json & { extensions: Json } };
  delete normalized.data.extensions[CARD_EXTENSION];
  return { spec: normalized.spec, spec_version: normalized.spec_version, data: normalized.data };
}

/** The card's data as written, without the platform's extension and what V3 requires that a V2 original had not. */
function rawData(card: Json, original: Json): Json {
  const data = structuredClone(card.data) as Json & { extensions: Json; character_book?: { entries: Json[] } };
  const before = original.data as Json & { character_book?: { entries: Json[] } };
  delete data.extensions[CARD_EXTENSION];
  if (!('group_only_greetings' in before)) delete data.group_only_greetings;
  data.character_book?.entries.forEach((entry, index) => {
    if (!('use_regex' in (before.character_book?.entries[index] ?? {}))) delete entry.use_regex;
  });
  return data;
}

describe('a SillyTavern card comes back as SillyTavern held it', () => {
  it('the fixtures hold real-world shapes: lorebooks with SillyTavern settings, notes, extensions, V1/V2/V3, PNG and JSON', () => {
    expect(CARDS.length).toBeGreaterThanOrEqual(6);
    const all = CARDS.map((name) => readCard(readFileSync(new URL(name, FIXTURES))));
    expect(all.map((card) => CCardLib.character.check(card)).sort()).toEqual(['v1', 'v2', 'v2', 'v3', 'v3', 'v3']);
  });

  it.each(CARDS)('%s: import → export → the card SillyTavern held, but for the platform extension', (name) => {
    const file = new Uint8Array(readFileSync(new URL(name, FIXTURES)));
    const original = readCard(file);
    const result = imported(file);
    expect(result.cardSource).not.toBeNull();
    const { card } = exportCard(result.world, { source: result.cardSource });
    const version = original.spec === 'chara_card_v3' ? 'v3' : 'v2';
    // PNG cards go back into their own picture (its text chunks replaced, not re-encoded).
    const out = isPng(file) ? cardPng(pngWithoutText(file, ['chara', 'ccv3']), card) : new TextEncoder().encode(JSON.stringify(card));
    if (isPng(file)) {
      expect(pictureChunks(out)).toEqual(pictureChunks(file));
      // The V2 copy for older readers holds the same card.
      const v2 = JSON.parse(decodeBase64Utf8(pngTexts(out).get('chara')!)) as Json;
      expect(CCardLib.character.check(structuredClone(v2))).toBe('v2');
      const { assets: _assets, nickname: _nickname, creator_notes_multilingual: _notes, source: _source, group_only_greetings: _group, creation_date: _created, modification_date: _modified, ...v2Fields } = card.data as Json;
      expect(v2.data).toEqual(JSON.parse(JSON.stringify(v2Fields)));
    }
    const back = readCard(out);
    expect(back.spec).toBe('chara_card_v3');
    expect(CCardLib.character.check(structuredClone(back))).toBe('v3');
    if (original.spec) expect(held(back, version)).toEqual(held(original, version));
    // A V1 card (no spec): its six fields, read into data as SillyTavern reads them, and its own fields outside data.
    else {
      const fields = ['name', 'description', 'personality', 'scenario', 'first_mes', 'mes_example'];
      expect(Object.fromEntries(fields.map((field) => [field, (back.data as Json)[field]]))).toEqual(Object.fromEntries(fields.map((field) => [field, original[field]])));
      expect(back).toMatchObject(original);
    }
    // Stricter than the library's reading: the data as written, key by key (null settings included).
    if (original.spec) expect(rawData(back, original)).toEqual(original.data);
    // The world is carried for the way back here.
    expect(((back.data as Json).extensions as Json)[CARD_EXTENSION]).toMatchObject({ world: result.world });
  });

  it('importing the exported card here gives the same world', () => {
    for (const name of CARDS) {
      const result = imported(new Uint8Array(readFileSync(new URL(name, FIXTURES))));
      const { card } = exportCard(result.world, { source: result.cardSource });
      const again = imported(JSON.stringify(card));
      expect(again.world, name).toEqual(result.world);
      expect(again.report.changes, name).toEqual([]);
    }
  });
});
