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
import { describe, expect, it } from 'vitest';
import { held, pictureChunks, pngTexts, rawData, readCard } from '../../../../tests/support/sillytavern-card-reader.ts';
import { takeCardText } from './card-edits.ts';
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
    const kept = structuredClone(result.cardSource);
    const { card } = exportCard(result.world, { source: result.cardSource });
    // The kept card is not changed by an export: the next one writes the same card.
    expect(result.cardSource).toEqual(kept);
    expect(exportCard(result.world, { source: result.cardSource }).card).toEqual(card);
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

  it('a card exported here, edited in SillyTavern and imported again: the edits apply, and the next export writes them', () => {
    const first = imported(new Uint8Array(readFileSync(new URL('cards/harbor-keeper.png', FIXTURES))));
    const { card } = exportCard(first.world, { source: first.cardSource });
    // What SillyTavern's editor changes: tags, creator, version, the character's note, a greeting, lorebook entries.
    const edited = structuredClone(card) as Json & { data: Json & { extensions: Json; character_book: { entries: Json[] } } };
    const data = edited.data;
    data.tags = ['cozy', 'mystery'];
    data.creator = 'gullpoint & friends';
    data.character_version = '1.5.0';
    data.extensions.depth_prompt = { prompt: '{{char}} counts the ships aloud.', depth: 2, role: 'system' };
    data.alternate_greetings = ['*Fog presses at the windows.* "You hear that bell? Again?"', '', '*A knock.* "Door\'s open."'];
    data.character_book.entries[0] = { ...data.character_book.entries[0], content: 'The light has a Fresnel lens from 1888 and a cracked prism.', keys: ['lighthouse', 'lens'] };
    data.character_book.entries.splice(6, 1);
    data.character_book.entries.push({ id: 42, keys: ['keeper\'s dog'], secondary_keys: [], comment: 'Dog', content: 'A three-legged dog called Anchor.', constant: false, selective: true, insertion_order: 5, enabled: true, position: 'after_char', use_regex: true, extensions: { position: 4, depth: 2, role: 0, probability: 80, useProbability: true } });
    data.extensions.gullpoint_custom = { weather_table: [4], note: 'edited' };

    const back = imported(JSON.stringify(edited));
    const world = back.world;
    expect(world.customTags).toEqual(['cozy', 'mystery']);
    expect(world.author).toBe('gullpoint & friends');
    expect(world.rules.find((rule) => rule.id === 'character-note-at-depth')?.actions[0]).toMatchObject({ content: '{{char}} counts the ships aloud.', depth: 1 });
    expect(world.entries.filter((entry) => entry.role === 'greeting').map((entry) => entry.content)).toContain('*A knock.* "Door\'s open."');
    expect(world.entries.find((entry) => entry.id === 'lore-0')).toMatchObject({ content: 'The light has a Fresnel lens from 1888 and a cracked prism.', keywords: ['lighthouse', 'lens'] });
    expect(world.entries.find((entry) => entry.id === 'lore-6')).toBeUndefined();
    expect(world.entries.find((entry) => entry.content === 'A three-legged dog called Anchor.')).toMatchObject({ keywords: ["keeper's dog"], depth: 1 });
    expect(back.report.changes.map((change) => change.path)).toEqual(expect.arrayContaining(['data.tags', 'data.creator', 'data.character_version', 'data.extensions.depth_prompt', 'data.character_book.entries[0]']));
    expect(back.report.warnings).toEqual([]);

    // Exported again: the card as SillyTavern left it (its version, its extension edit, the entry's other settings), but for the platform's extension.
    const again = exportCard(world, { source: back.cardSource }).card;
    expect(rawData(again, edited)).toEqual(rawData(edited, edited));
  });

  it('an edit to a field made of several entries is a conflict: the world keeps its text until the author takes the card\'s', () => {
    const first = imported(new Uint8Array(readFileSync(new URL('cards/harbor-keeper.png', FIXTURES))));
    // Two example entries make one mes_example.
    const world = { ...first.world, entries: [...first.world.entries, { ...first.world.entries.find((entry) => entry.id === 'example-messages')!, id: 'more-examples', content: '<START>\n{{user}}: Tea?\n{{char}}: "Always."', position: 99 }] };
    const { card } = exportCard(world, { source: first.cardSource });
    const edited = structuredClone(card) as Json & { data: Json };
    edited.data.mes_example = '<START>\n{{user}}: Coffee?\n{{char}}: "Never."';
    const back = imported(JSON.stringify(edited));
    expect(back.report.conflicts).toEqual([{ path: 'data.mes_example', field: 'mes_example', card: edited.data.mes_example, world: (card.data as Json).mes_example, entryIds: ['example-messages', 'more-examples'] }]);
    expect(back.report.warnings).toEqual([{ path: 'data', message: expect.stringContaining('mes_example') }]);
    expect(back.world.entries.find((entry) => entry.id === 'more-examples')).toBeDefined();
    // Until the author chooses, the next export writes the world's text; taking the card's, it writes the card's.
    expect((exportCard(back.world, { source: back.cardSource }).card.data as Json).mes_example).toBe((card.data as Json).mes_example);
    const taken = takeCardText(back.world, back.report.conflicts![0]!);
    expect(taken.entries.map((entry) => entry.id)).not.toContain('more-examples');
    expect((exportCard(taken, { source: back.cardSource }).card.data as Json).mes_example).toBe(edited.data.mes_example);
  });
});
