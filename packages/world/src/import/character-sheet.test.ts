/**
 * Issue 30 D: the character editor's sheet maps to a world exactly as a SillyTavern card does —
 * written through the importer's conversion, read through the card export — and an edit changes
 * only what the sheet shows.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startSession } from '../engine/turn.ts';
import { validateWorld } from '../schema/validate-world.ts';
import type { WorldDefinition } from '../schema/world-schema.ts';
import { characterName, exportCard } from './card-export.ts';
import { applyCharacterSheet, type CharacterSheet, readCharacterSheet, sheetCard } from './character-sheet.ts';
import { importWorld } from './import-world.ts';

const sample = (name: string): WorldDefinition => valid(JSON.parse(readFileSync(new URL(`../../samples/${name}.json`, import.meta.url), 'utf8')));
function valid(input: unknown): WorldDefinition {
  const result = validateWorld(input);
  if (!result.ok) throw new Error(`does not validate: ${JSON.stringify(result.issues)}`);
  return result.world;
}
const ID = '22222222-2222-4222-8222-222222222222';

const ember: CharacterSheet = {
  name: 'Ember',
  tagline: 'A lighthouse keeper who talks to storms.',
  description: '{{char}} keeps the lighthouse on Gull Rock.',
  personality: 'Dry humour, fiercely loyal.',
  scenario: 'A storm has stranded {{user}} at the lighthouse.',
  greetings: ['"Shut the door, the wind bites."', '"Another one washed up, then."'],
  exampleDialogue: '<START>\n{{user}}: Is it always this loud?\n{{char}}: Only when the sea has opinions.',
  lore: [{ id: null, name: 'The lamp', keywords: ['lamp', 'light'], content: 'The lamp has not gone out in ninety years.' }],
  tags: ['cozy', 'sea'],
};

describe('the character sheet', () => {
  it('a new character is the world the importer makes of the same card (one mapping)', () => {
    const made = valid({ ...applyCharacterSheet(null, ember), id: ID });
    const imported = importWorld(JSON.stringify(sheetCard(ember)), { generateId: () => ID });
    expect(imported.ok).toBe(true);
    expect({ ...made, editorMode: 'simple' }).toEqual({ ...(imported as { world: WorldDefinition }).world, editorMode: 'simple' });
    expect(made.entries.map((entry) => [entry.id, entry.role, entry.section])).toEqual([
      ['character', 'character', 'system-presets'],
      ['personality', 'personality', 'system-presets'],
      ['scenario', 'scenario', 'system-presets'],
      ['example-messages', 'example', 'examples'],
      ['greeting', 'greeting', 'chat-history'],
      ['greeting-2', 'greeting', 'chat-history'],
      ['lore-0', 'lore', 'chat-history'],
    ]);
    expect(made).toMatchObject({ name: 'Ember', description: ember.tagline, customTags: ['cozy', 'sea'] });
    expect(made.entries.find((entry) => entry.id === 'lore-0')).toMatchObject({ keywords: ['lamp', 'light'], depth: null, enabled: true });
    // It plays: the greeting opens the chat, the alternate is a swipe.
    expect(startSession(made, { now: 0 }).greetings).toEqual(ember.greetings);
    // And reads back as the same sheet (the lore entry now has its id).
    expect(readCharacterSheet(made)).toEqual({ ...ember, lore: [{ ...ember.lore[0]!, id: 'lore-0' }] });
    expect(characterName(made)).toBe('Ember');
  });

  it.each(['willow-street', 'ashen-depths', 'changan-nights'])('%s: writing back the sheet read from it changes nothing', (name) => {
    const world = sample(name);
    expect(valid(applyCharacterSheet(world, readCharacterSheet(world)))).toEqual(world);
  });

  it('Rain on Willow Street as a sheet: the character is Mina Park, her entries, her lore; not the world', () => {
    const sheet = readCharacterSheet(sample('willow-street'));
    expect(sheet.name).toBe('Mina Park');
    expect(sheet.description).toMatch(/^Mina Park, 27, runs Willow & Wick/);
    expect(sheet.personality).toMatch(/^Teasing when comfortable/);
    expect(sheet.greetings).toHaveLength(1);
    // Keyword lore without variable conditions; conditional and always-sent entries stay for the full studio.
    expect(sheet.lore.map((entry) => entry.id)).toEqual(['cafe-memory', 'flower-language', 'memory-echo']);
    expect(sheet.tagline).toBe(sample('willow-street').description);
  });

  it('an edit changes only what the sheet shows: ids, rules, variables and other entries stay', () => {
    const world = sample('willow-street');
    const sheet = readCharacterSheet(world);
    const edited = valid(
      applyCharacterSheet(world, {
        ...sheet,
        name: 'Mina',
        description: 'Mina, 27, florist.',
        personality: '',
        greetings: ['Hello again.', 'Oh, it is you.'],
        lore: [{ ...sheet.lore[1]!, keywords: ['tulip'] }, { id: null, name: 'The cat', keywords: ['cat'], content: 'Mochi sleeps in the window.' }],
        tags: ['romance'],
      }),
    );
    const byId = (id: string) => edited.entries.find((entry) => entry.id === id);
    expect(edited.name).toBe('Rain on Willow Street');
    expect(byId('mina-character')).toMatchObject({ name: 'Mina', content: 'Mina, 27, florist.', position: 1 });
    expect(byId('mina-personality')).toBeUndefined();
    expect(byId('greeting')).toMatchObject({ content: 'Hello again.', section: 'system-presets' });
    expect(edited.entries.filter((entry) => entry.role === 'greeting').map((entry) => entry.content)).toEqual(['Hello again.', 'Oh, it is you.']);
    expect(byId('cafe-memory')).toBeUndefined();
    expect(byId('memory-echo')).toBeUndefined();
    expect(byId('flower-language')).toMatchObject({ keywords: ['tulip'], content: sample('willow-street').entries.find((entry) => entry.id === 'flower-language')!.content });
    expect(edited.entries.find((entry) => entry.name === 'The cat')).toMatchObject({ section: 'chat-history', keywords: ['cat'], role: 'lore' });
    // Untouched: the conditional lore, the frame and style entries, rules and variables.
    for (const id of ['story-frame', 'family-secret', 'confession-arc', 'cold-shoulder', 'tone-guard', 'banter-example']) expect(byId(id)).toEqual(world.entries.find((entry) => entry.id === id));
    expect(edited.rules).toEqual(world.rules);
    expect(edited.variables).toEqual(world.variables);
    expect(edited.customTagColors).toEqual({ romance: 'bg-rose-500' });
    // The export reads the same fields back.
    const data = exportCard(edited).card.data as Record<string, unknown>;
    expect(data).toMatchObject({ description: 'Mina, 27, florist.', personality: '', first_mes: 'Hello again.', alternate_greetings: ['Oh, it is you.'] });
  });

  it("a card's world: renaming the character renames the world, and the personality keeps the importer's prefix", () => {
    const world = valid({ ...applyCharacterSheet(null, ember), id: ID });
    const renamed = valid(applyCharacterSheet(world, { ...readCharacterSheet(world), name: 'Cinder', personality: 'Warmer now.', scenario: '' }));
    expect(renamed.name).toBe('Cinder');
    expect(renamed.entries.find((entry) => entry.id === 'character')).toMatchObject({ name: 'Cinder' });
    expect(renamed.entries.find((entry) => entry.id === 'personality')).toMatchObject({ name: "Cinder's personality", content: "Cinder's personality: Warmer now." });
    expect(renamed.entries.find((entry) => entry.id === 'scenario')).toBeUndefined();
    expect(readCharacterSheet(renamed)).toMatchObject({ name: 'Cinder', personality: 'Warmer now.', scenario: '' });
  });

  it('a narrator world gets a character entry when the sheet gives it a description', () => {
    const world = valid({ version: '20.0.0', name: 'Fogbound', entries: [{ id: 'narrator', name: 'Narrator', content: 'Narrate.', section: 'system-presets', role: 'system' }] });
    expect(readCharacterSheet(world)).toMatchObject({ name: 'Fogbound', description: '', greetings: [''] });
    const edited = valid(applyCharacterSheet(world, { ...readCharacterSheet(world), description: 'A fog with a voice.', greetings: ['The fog parts.'] }));
    expect(edited.entries.map((entry) => [entry.id, entry.section, entry.position])).toEqual([
      ['narrator', 'system-presets', 0],
      ['character', 'system-presets', 1],
      ['greeting', 'chat-history', 0],
    ]);
    expect(characterName(edited)).toBe('Fogbound');
  });
});
