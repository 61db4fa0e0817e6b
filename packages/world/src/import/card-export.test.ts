/**
 * Issue 31 point 6: a world exported as a SillyTavern card and imported back here is the same
 * world (the three samples: export → import → the same prompt for the same turn), and the card
 * itself is one SillyTavern reads: the character's fields, greetings and a character book made
 * of the entries.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assemblePrompt } from '../engine/prompt.ts';
import { runTurn, startSession } from '../engine/turn.ts';
import { validateWorld } from '../schema/validate-world.ts';
import type { WorldDefinition } from '../schema/world-schema.ts';
import { CARD_EXTENSION, cardPng, exportCard } from './card-export.ts';
import { type ImportResult, importWorld } from './import-world.ts';
import { decodeBase64Utf8, pngWithText, readPngText } from './png-text.ts';

const SAMPLES = ['ashen-depths', 'changan-nights', 'willow-street'];
const sample = (name: string): WorldDefinition => {
  const result = validateWorld(JSON.parse(readFileSync(new URL(`../../samples/${name}.json`, import.meta.url), 'utf8')));
  if (!result.ok) throw new Error(`${name} does not validate`);
  return result.world;
};
const NOW = '2026-03-05T20:00:00Z';
const picture = pngWithText({});

function imported(input: unknown): Extract<ImportResult, { ok: true }> {
  const result = importWorld(input, { generateId: () => '11111111-1111-4111-8111-111111111111', now: () => new Date(NOW) });
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result;
}

/** The prompt of a turn after a session start and one exchange, for comparing two worlds. */
function promptOf(world: WorldDefinition, user: string) {
  const options = { now: NOW, seed: 7, sessionId: 'round-trip' };
  const start = startSession(world, options);
  const greeting = start.greetings[0];
  const history = greeting ? [{ role: 'assistant' as const, content: greeting }] : [];
  const turn = runTurn(world, start.state, { ...options, userMessage: user, aiReply: 'The lantern gutters.', history });
  const next = [...history, { role: 'user' as const, content: user }, { role: 'assistant' as const, content: turn.displayText }, { role: 'user' as const, content: `${user} again` }];
  return assemblePrompt(world, turn.state, { ...options, history: next });
}

describe('export as a card, and back', () => {
  it.each(SAMPLES)('%s: export → PNG card → import gives the same world and the same prompt for the same turn', (name) => {
    const world = sample(name);
    const png = cardPng(picture, exportCard(world).card);
    const texts = readPngText(png);
    expect([...texts.keys()]).toEqual(['chara', 'ccv3']);
    const v2 = JSON.parse(decodeBase64Utf8(texts.get('chara')!)) as { spec: string; data: Record<string, unknown> };
    expect(v2.spec).toBe('chara_card_v2');
    expect(v2.data).not.toHaveProperty('assets');

    const back = imported(png);
    expect(back.report).toMatchObject({ format: 'sillytavern-card', sourceVersion: 'chara_card_v3 (png), world 20.0.0', changes: [] });
    expect(back.world).toEqual(world);
    for (const user of ['I look around.', 'goblin dragon shrine torch 西市 宵禁 cafe secret']) expect(promptOf(back.world, user)).toEqual(promptOf(world, user));
  });

  it('the JSON card round-trips too', () => {
    const world = sample('willow-street');
    expect(imported(JSON.stringify(exportCard(world).card)).world).toEqual(world);
  });

  it('the card is one SillyTavern reads: character fields, greetings, examples and a character book of the entries', () => {
    const world = sample('willow-street');
    const { card } = exportCard(world);
    const data = card.data as Record<string, unknown> & { character_book: { entries: Record<string, unknown>[] } };
    const entry = (id: string) => world.entries.find((item) => item.id === id)!;
    expect(data).toMatchObject({
      name: world.name,
      description: entry('mina-character').content,
      first_mes: entry('greeting').content,
      mes_example: entry('banter-example').content,
      creator_notes: world.description,
      creator: world.author,
      tags: world.customTags,
    });
    const book = data.character_book.entries;
    const memory = book.find((item) => item.comment === entry('cafe-memory').name)!;
    expect(memory).toMatchObject({ keys: entry('cafe-memory').keywords, constant: false, enabled: true, extensions: { position: 4, depth: 3 } });
    const confession = book.find((item) => item.comment === entry('confession-arc').name)!;
    expect(confession).toMatchObject({ extensions: { position: 4, depth: 1 } });
    const style = book.find((item) => item.comment === entry('story-frame').name)!;
    expect(style).toMatchObject({ constant: true, position: 'before_char', extensions: { position: 0 } });
    // An entry's order (its position) is SillyTavern's insertion order; the character's version is the creator's own, which a world made here has not.
    const byName = (name: unknown) => world.entries.find((item) => item.name === name)!;
    expect(book.map((item) => item.insertion_order)).toEqual(book.map((item) => byName(item.comment).position));
    expect(data.character_version).toBe('');
    // What SillyTavern cannot hold is kept for the way back.
    expect((data.extensions as Record<string, { world: unknown }>)[CARD_EXTENSION]?.world).toEqual(world);

    // Read as SillyTavern would (without the world it carries): the entries are there, with their keywords and placement.
    const { [CARD_EXTENSION]: _carried, ...others } = data.extensions as Record<string, unknown>;
    const plain = imported({ ...card, data: { ...data, extensions: others } }).world;
    expect(plain.entries.find((item) => item.role === 'character')?.content).toBe(entry('mina-character').content);
    expect(plain.entries.find((item) => item.name === entry('cafe-memory').name)).toMatchObject({ keywords: entry('cafe-memory').keywords, depth: 2, section: 'chat-history' });
    expect(plain.entries.find((item) => item.role === 'greeting')?.content).toBe(entry('greeting').content);
  });

  it('a card edited elsewhere after the export: edited fields go back into their entries, a lorebook entry included', () => {
    const world = sample('willow-street');
    const { card, bookIds } = exportCard(world);
    const data = card.data as Record<string, unknown>;
    const book = data.character_book as { entries: { content: string }[] };
    const changedBook = { ...book, entries: book.entries.map((entry, index) => (index === 0 ? { ...entry, content: 'changed in SillyTavern' } : entry)) };
    const edited = { ...card, data: { ...data, name: 'Rain on Willow Street (edited)', description: 'Mina, edited in SillyTavern.', character_book: changedBook } };
    const back = imported(edited);
    expect(back.world.name).toBe('Rain on Willow Street (edited)');
    expect(back.world.entries.find((entry) => entry.id === 'mina-character')?.content).toBe('Mina, edited in SillyTavern.');
    expect(back.world.entries.find((entry) => entry.id === bookIds[0])?.content).toBe('changed in SillyTavern');
    expect(back.report.changes.map((change) => `${change.kind} ${change.path}: ${change.message}`)).toEqual([
      'converted data.name: edited after the card was exported: the world takes the new name',
      'converted data.description: edited after the card was exported: entry "mina-character" takes the new text',
      `converted data.character_book.entries[0]: edited after the card was exported: entry "${bookIds[0]}" takes the changes`,
    ]);
    expect(back.report.warnings).toEqual([]);
  });
});
