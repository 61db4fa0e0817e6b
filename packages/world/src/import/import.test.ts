/**
 * Import of foreign worlds (issue 21): every accepted form converts to a valid WorldDefinition
 * 20.0.0 with a report of every change, asserted here field by field (kind, path, message).
 * Fixtures: tests/fixtures/worlds/.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateWorld } from '../schema/validate-world.ts';
import type { ImportReport } from './import-report.ts';
import { type ImportResult, importWorld } from './import-world.ts';
import { encodeBase64Utf8, pngWithText, readPngText } from './png-text.ts';

const FIXTURES = new URL('../../../../tests/fixtures/worlds/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const ID = '11111111-1111-4111-8111-111111111111';
const options = { generateId: () => ID, now: () => new Date('2026-01-01T00:00:00Z') };

function imported(input: unknown): Extract<ImportResult, { ok: true }> {
  const result = importWorld(input, options);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result;
}

type Expected = Omit<ImportReport, 'changes'> & { changes: [string, string, string][] };

const REPORTS: Record<string, Expected> = {
  'world-5.0.0': {
    format: 'world',
    sourceVersion: '5.0.0',
    changes: [
      ["converted", "version", "5.0.0 → 20.0.0"],
      ["defaulted", "id", "missing; 11111111-1111-4111-8111-111111111111"],
      ["converted", "messageRenderer", "legacy message renderer → rootComponent files \"message-renderer.tsx\" (the bubble) and \"index.tsx\" (a Chat that renders every bubble with it)"],
      ["defaulted", "rootComponent", "built from the legacy interface fields (entry file \"index.tsx\")"],
      ["converted", "entries[0].position", "position keyword \"top\" → section \"system-presets\", position 0"],
      ["defaulted", "entries[0].keywords", "missing; [] (no keywords)"],
      ["defaulted", "entries[0].enabled", "missing; true"],
      ["converted", "entries[1].position", "position keyword \"before_char\" → section \"system-presets\", position 1"],
      ["converted", "entries[1].role", "role \"personality\" → \"character\""],
      ["defaulted", "entries[1].keywords", "missing; [] (no keywords)"],
      ["defaulted", "entries[1].enabled", "missing; true"],
      ["converted", "entries[2].position", "position keyword \"keyword\" → section \"chat-history\", position 2"],
      ["converted", "entries[2].role", "role \"lore\" → \"system\""],
      ["defaulted", "entries[2].enabled", "missing; true"],
      ["converted", "entries[3].position", "position keyword \"bottom\" → section \"post-history\", position 3"],
    ],
    assets: [],
    warnings: [],
  },
  'world-8.0.0': {
    format: 'world',
    sourceVersion: '8.0.0',
    changes: [
      ["converted", "version", "8.0.0 → 20.0.0"],
      ["converted", "customComponents[0]", "legacy custom component → rootComponent file \"components/CoinPurse.tsx\""],
      ["converted", "customUI[0]", "legacy custom UI → rootComponent file \"custom-ui/Status-bar.tsx\""],
      ["defaulted", "rootComponent", "built from the legacy interface fields (entry file \"components/CoinPurse.tsx\")"],
      ["converted", "id", "\"tavern-of-echoes\" is not a UUID → d92cd28e-cba3-4702-8dea-f8da59f7edcd"],
      ["converted", "entries[0].position", "position keyword \"system\" → section \"system-presets\", position 0"],
      ["renamed", "entries[0].order", "order → position"],
      ["defaulted", "entries[0].keywords", "missing; [] (no keywords)"],
      ["defaulted", "entries[0].enabled", "missing; true"],
      ["converted", "entries[1].position", "position keyword \"after_char\" → section \"system-presets\", position 1"],
      ["renamed", "entries[1].order", "order → position"],
      ["converted", "entries[1].role", "role \"personality\" → \"character\""],
      ["defaulted", "entries[1].keywords", "missing; [] (no keywords)"],
      ["defaulted", "entries[1].enabled", "missing; true"],
      ["converted", "entries[2].position", "position keyword \"keyword\" → section \"chat-history\", position 2"],
      ["renamed", "entries[2].order", "order → position"],
      ["converted", "entries[2].role", "role \"lore\" → \"system\""],
      ["renamed", "entries[2].keys", "keys → keywords"],
      ["defaulted", "entries[2].enabled", "missing; true"],
      ["converted", "entries[3].position", "position keyword \"example\" → section \"examples\", position 3"],
      ["renamed", "entries[3].order", "order → position"],
      ["defaulted", "entries[3].keywords", "missing; [] (no keywords)"],
      ["defaulted", "entries[3].enabled", "missing; true"],
    ],
    assets: [],
    warnings: [],
  },
  'world-18.0.0': {
    format: 'world',
    sourceVersion: '18.0.0',
    changes: [
      ["converted", "version", "18.0.0 → 20.0.0"],
      ["converted", "rootComponent.id", "\"starter-castle:root\" is not a UUID → 9d2eff9a-4830-4a02-89fa-1e06aa78416e"],
      ["converted", "id", "\"starter-castle\" is not a UUID → 0599d9e1-b899-459b-aa2b-ffc9b256ca2c"],
      ["dropped", "variables[0].category", "category \"flag\" is accepted from authoring tools but is not part of the schema (seed 002 §2.4)"],
      ["dropped", "variables[1].category", "category \"relationship\" is accepted from authoring tools but is not part of the schema (seed 002 §2.4)"],
    ],
    assets: [],
    warnings: [],
  },
  'world-21.0.0': {
    format: 'world',
    sourceVersion: '21.0.0',
    changes: [
      ["converted", "version", "21.0.0 → 20.0.0"],
      ["dropped", "thumbnail", "a field worlds here do not have (the file is of version 21.0.0)"],
      ["dropped", "entries[0].embedding", "a field worlds here do not have (the file is of version 21.0.0)"],
      ["dropped", "settings.reasoningEffort", "a field worlds here do not have (the file is of version 21.0.0)"],
    ],
    assets: [],
    warnings: [],
  },
  'world-25.0.0': {
    format: 'world',
    sourceVersion: '25.0.0',
    changes: [
      ["converted", "version", "25.0.0 → 20.0.0"],
      ["converted", "rootComponent.id", "\"6f1c2b7e-8a9d-4c3b-b1e2-7d6a5f4e3c21:root\" is not a UUID → 6613976d-9913-4058-bec3-39b12274136f"],
      ["converted", "reactions[0].when.match", "the editor's nested trigger details (actionId) → members of when"],
      ["renamed", "reactions[0].when.eventType", "\"action:fired\" → \"action\" (the event an interface button fires)"],
      ["renamed", "reactions[1].effects", "effects → then"],
      ["renamed", "reactions[1].when.type", "type → eventType"],
      ["converted", "reactions[1].when.match", "the editor's nested trigger details (none) → members of when"],
      ["converted", "entries[0].content", "@asset:greenhouse-photo → asset://greenhouse-photo"],
      ["converted", "audioTracks[0].url", "@asset:splash-sound → asset://splash-sound"],
      ["converted", "rootComponent.files[\"index.tsx\"]", "@asset:greenhouse-photo → asset://greenhouse-photo"],
      ["dropped", "spatial", "a field worlds here do not have (the file is of version 25.0.0)"],
    ],
    assets: [{"id":"greenhouse-photo","reference":"asset://greenhouse-photo","paths":["entries[0].content","rootComponent.files[\"index.tsx\"]"]},{"id":"splash-sound","reference":"asset://splash-sound","paths":["audioTracks[0].url"]}],
    warnings: [],
  },
  'card-v2': {
    format: 'sillytavern-card',
    sourceVersion: 'chara_card_v2',
    changes: [
      ["dropped", "data.character_version", "the card's \"character_version\" has no counterpart in a world here"],
      ["defaulted", "id", "a card has no world id; 11111111-1111-4111-8111-111111111111"],
    ],
    assets: [],
    warnings: [],
  },
  'world-info': {
    format: 'sillytavern-world-info',
    sourceVersion: 'world-info',
    changes: [
      ["defaulted", "name", "the lorebook has no name; \"Imported lorebook\" used"],
      ["dropped", "entries[\"1\"].group", "SillyTavern's \"group\" has no counterpart in a world here"],
      ["converted", "entries[\"2\"].constant", "constant entry (bottom of author's note) → section \"post-history\", always sent"],
      ["defaulted", "id", "a lorebook has no world id; 11111111-1111-4111-8111-111111111111"],
    ],
    assets: [],
    warnings: [],
  },
};

describe('import: reports field by field', () => {
  it.each(Object.keys(REPORTS))('%s', (name) => {
    const { world, report } = imported(fixture(`${name}.json`));
    const expected = REPORTS[name] as Expected;
    expect(report.format).toBe(expected.format);
    expect(report.sourceVersion).toBe(expected.sourceVersion);
    expect(report.changes.map((change) => [change.kind, change.path, change.message])).toEqual(expected.changes);
    expect(report.assets).toEqual(expected.assets);
    expect(report.warnings).toEqual(expected.warnings);
    expect(world.version).toBe('20.0.0');
    expect(validateWorld(world)).toMatchObject({ ok: true, warnings: [] });
  });
});

describe('import: the converted worlds', () => {
  it('5.x: position keywords become sections, old roles convert, the message renderer becomes the rootComponent', () => {
    const { world } = imported(fixture('world-5.0.0.json'));
    expect(world.id).toBe(ID);
    expect(world.entries.map((entry) => [entry.id, entry.section, entry.position, entry.role, entry.enabled])).toEqual([
      ['narrator', 'system-presets', 0, 'system', true],
      ['guide', 'system-presets', 1, 'character', true],
      ['road_lore', 'chat-history', 2, 'system', true],
      ['style', 'post-history', 3, 'style', true],
    ]);
    expect(world.rootComponent?.entryFile).toBe('index.tsx');
    expect(Object.keys(world.rootComponent?.files ?? {})).toEqual(['message-renderer.tsx', 'index.tsx']);
    expect(world.rootComponent?.files['index.tsx']).toContain('<Chat renderBubble=');
    expect(world.rootComponent?.updatedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(world.rules[0]?.id).toBe('Lamp low');
    expect(world.settings.temperature).toBe(0.8);
  });

  it('8.x: custom components and custom UI with code become rootComponent files; a non-UUID id becomes a stable UUID', () => {
    const { world } = imported(fixture('world-8.0.0.json'));
    expect(world.id).toBe('d92cd28e-cba3-4702-8dea-f8da59f7edcd');
    expect(imported(fixture('world-8.0.0.json')).world.id).toBe(world.id);
    expect(Object.keys(world.rootComponent?.files ?? {})).toEqual(['components/CoinPurse.tsx', 'custom-ui/Status-bar.tsx']);
    expect(world.customUI).toEqual([]);
    expect(world.entries.find((entry) => entry.id === 'cellar')?.keywords).toEqual(['cellar', 'tunnel']);
    expect(world.entries.find((entry) => entry.id === 'examples')?.section).toBe('examples');
  });

  it('18.x: the rootComponent id `<worldId>:root` becomes a UUID; categories are dropped', () => {
    const { world } = imported(fixture('world-18.0.0.json'));
    expect(world.rootComponent?.id).toBe('9d2eff9a-4830-4a02-89fa-1e06aa78416e');
    expect(world.rootComponent?.updatedAt).toBe('2025-11-02T09:00:00.000Z');
    expect(world.variables.map((variable) => Object.keys(variable))).not.toContainEqual(expect.arrayContaining(['category']));
    expect(world.editorMode).toBe('advanced');
  });

  it('21.x: fields 20.0.0 lacks are dropped and reported, everything else kept', () => {
    const source = JSON.parse(fixture('world-21.0.0.json')) as Record<string, unknown>;
    const { world } = imported(source);
    expect(world.id).toBe(source.id);
    expect(world).not.toHaveProperty('thumbnail');
    expect(world.entries[0]).not.toHaveProperty('embedding');
    expect(world.settings).not.toHaveProperty('reasoningEffort');
    expect(world.settings.temperature).toBe(0.9);
    expect(source.version).toBe('21.0.0');
  });

  it('25.x: editor-form reactions and @asset: links', () => {
    const { world } = imported(fixture('world-25.0.0.json'));
    expect(world.reactions?.map((reaction) => [reaction.id, reaction.when])).toEqual([
      ['Water button', { eventType: 'action', actionId: 'water' }],
      ['Bloom on rain', { eventType: 'turn:complete' }],
    ]);
    expect(world.reactions?.[1]?.then).toEqual([{ type: 'set', path: 'blooms', operation: 'add', value: 1 }]);
    expect(world.audioTracks[0]?.url).toBe('asset://splash-sound');
    expect(world.entries[0]?.content).toContain('(asset://greenhouse-photo)');
    expect(world.rootComponent?.files['index.tsx']).toContain("resolveAssetUrl('asset://greenhouse-photo')");
    expect(JSON.stringify(world)).not.toContain('@asset:');
  });

  it('a V2 card: the character, greetings, examples and its lorebook', () => {
    const { world } = imported(fixture('card-v2.json'));
    expect(world).toMatchObject({ id: ID, name: 'Captain Vale', author: 'skywright', description: 'A cheerful sky-pirate captain.', customTags: ['adventure', 'airship'] });
    expect(world.entries.map((entry) => [entry.id, entry.role, entry.section, entry.apiRole])).toEqual([
      ['character', 'character', 'system-presets', 'system'],
      ['personality', 'personality', 'system-presets', 'system'],
      ['scenario', 'scenario', 'system-presets', 'system'],
      ['example-messages', 'example', 'examples', 'system'],
      ['post-history-instructions', 'system', 'post-history', 'system'],
      ['greeting', 'greeting', 'chat-history', 'assistant'],
      ['greeting-2', 'greeting', 'chat-history', 'assistant'],
      ['lore-1', 'lore', 'system-presets', 'system'],
      ['lore-2', 'lore', 'chat-history', 'system'],
    ]);
    expect(world.entries[1]?.content).toBe("Captain Vale's personality: bold, wry, loyal to her crew");
    // "Before character": keyword-triggered, just before the character's description (step 1).
    expect(world.entries.find((entry) => entry.id === 'lore-1')).toMatchObject({ keywords: ['kestrel', 'airship'], secondaryKeywords: [], position: -0.5, depth: null });
    expect(world.entries.find((entry) => entry.id === 'lore-2')).toMatchObject({
      keywords: ['crew'],
      secondaryKeywords: ['mutiny'],
      secondaryKeywordLogic: 'NOT_ANY',
      position: 20,
      depth: 1,
    });
  });

  it('World Info: keys, secondary keys with their logic, constant, order, position, depth and enabled', () => {
    const { world } = imported(fixture('world-info.json'));
    expect(world.name).toBe('Imported lorebook');
    expect(
      world.entries.map((entry) => ({
        id: entry.id,
        name: entry.name,
        section: entry.section,
        keywords: entry.keywords,
        secondaryKeywords: entry.secondaryKeywords,
        secondaryKeywordLogic: entry.secondaryKeywordLogic,
        position: entry.position,
        depth: entry.depth,
        enabled: entry.enabled,
        excludeRecursion: entry.excludeRecursion,
      })),
    ).toEqual([
      { id: 'lore-0', name: 'The moon', section: 'system-presets', keywords: ['moon', 'lunar'], secondaryKeywords: [], secondaryKeywordLogic: 'AND_ANY', position: 100, depth: null, enabled: true, excludeRecursion: false },
      { id: 'lore-1', name: 'Tides', section: 'chat-history', keywords: ['tide'], secondaryKeywords: ['moon', 'storm'], secondaryKeywordLogic: 'AND_ALL', position: 90, depth: 0, enabled: true, excludeRecursion: true },
      { id: 'lore-2', name: 'Always', section: 'post-history', keywords: [], secondaryKeywords: [], secondaryKeywordLogic: 'AND_ANY', position: 5, depth: null, enabled: true, excludeRecursion: false },
      { id: 'lore-3', name: 'Disabled', section: 'system-presets', keywords: ['secret'], secondaryKeywords: [], secondaryKeywordLogic: 'NOT_ALL', position: 1, depth: null, enabled: false, excludeRecursion: false },
    ]);
  });
});

describe('import: PNG cards', () => {
  const v3 = fixture('card-v3.json');

  it('a V3 card in a PNG `ccv3` chunk (the `chara` chunk beside it is the V2 copy and is not read)', () => {
    const png = pngWithText({ chara: encodeBase64Utf8(fixture('card-v2.json')), ccv3: encodeBase64Utf8(v3) });
    expect([...readPngText(png).keys()]).toEqual(['chara', 'ccv3']);
    const { world, report } = imported(png);
    expect(report.format).toBe('sillytavern-card');
    expect(report.sourceVersion).toBe('chara_card_v3 (png)');
    expect(report.changes.map((change) => [change.kind, change.path, change.message])).toEqual([
      ['converted', 'data.character_book.entries[0].constant', 'constant entry (after character) → section "system-presets", always sent'],
      ['dropped', 'data.nickname', 'the card\'s "nickname" has no counterpart in a world here'],
      ['dropped', 'data.character_version', 'the card\'s "character_version" has no counterpart in a world here'],
      ['defaulted', 'id', `a card has no world id; ${ID}`],
    ]);
    expect(report.assets).toEqual([
      { id: 'picture', reference: "the PNG card's image", paths: ['(file)'], embedded: 'picture' },
      { id: 'dome', reference: 'embeded://assets/dome.png', paths: ['data.assets[1]'] },
    ]);
    expect(report.warnings).toEqual([]);
    expect(world.name).toBe('Professor Lumen');
    expect(world.entries.map((entry) => [entry.id, entry.section])).toEqual([
      ['system-prompt', 'system-presets'],
      ['character', 'system-presets'],
      ['personality', 'system-presets'],
      ['greeting', 'chat-history'],
      ['lore-0', 'system-presets'],
    ]);
  });

  it('a V2 card in a PNG `chara` chunk, non-ASCII text intact', () => {
    const card = JSON.parse(fixture('card-v2.json')) as { data: Record<string, unknown> };
    card.data.name = 'Capitaine Vâle 船長';
    const { world, report } = imported(pngWithText({ chara: encodeBase64Utf8(JSON.stringify(card)) }));
    expect(report.sourceVersion).toBe('chara_card_v2 (png)');
    expect(world.name).toBe('Capitaine Vâle 船長');
  });

  it('a card in a compressed (zTXt) chunk is refused with what to do instead', () => {
    const plain = pngWithText({});
    const data = Uint8Array.from([...'chara'].map((char) => char.charCodeAt(0)).concat([0, 0, 0x78, 0x9c]));
    const ztxt = new Uint8Array(12 + data.length);
    new DataView(ztxt.buffer).setUint32(0, data.length);
    ztxt.set([...'zTXt'].map((char) => char.charCodeAt(0)), 4);
    ztxt.set(data, 8);
    const png = new Uint8Array([...plain.subarray(0, 33), ...ztxt, ...plain.subarray(33)]);
    expect(importWorld(png)).toEqual({
      ok: false,
      issues: [
        {
          path: '',
          message:
            'this PNG keeps its card in a compressed text chunk ("chara"), which this importer does not read; export the card again from SillyTavern (it writes plain tEXt chunks) or import its JSON',
        },
      ],
      report: null,
    });
  });

  it('a PNG without a card, a truncated PNG and bad base64 are refused with a reason', () => {
    expect(importWorld(pngWithText({ Comment: 'hello' }))).toEqual({
      ok: false,
      issues: [{ path: '', message: 'this PNG has no character card: neither a "ccv3" nor a "chara" text chunk' }],
      report: null,
    });
    const png = pngWithText({ chara: encodeBase64Utf8(v3) });
    expect(importWorld(png.subarray(0, 60))).toMatchObject({ ok: false, issues: [{ path: '', message: expect.stringContaining('runs past the end of the file') }] });
    expect(importWorld(pngWithText({ chara: '%%%' }))).toMatchObject({ ok: false, issues: [{ path: '', message: expect.stringContaining('not base64 JSON') }] });
  });
});

describe('import: round trip', () => {
  it.each([...Object.keys(REPORTS), 'card-v3'])('%s imported, exported and imported again is unchanged', (name) => {
    const first = imported(fixture(`${name}.json`)).world;
    const exported = JSON.stringify(first);
    const second = importWorld(exported, { generateId: () => 'not used', now: () => new Date('2030-01-01T00:00:00Z') });
    expect(second).toMatchObject({ ok: true, report: { format: 'world', sourceVersion: '20.0.0', changes: [], assets: [] } });
    if (second.ok) expect(second.world).toEqual(first);
  });
});

describe('import: refusals', () => {
  it.each([
    ['a version before 5', { version: '4.2.0', name: 'Old' }, 'version', '4.2.0 cannot be imported: versions 5.x through 25.x can'],
    ['a version after 25', { version: '26.0.0', name: 'New' }, 'version', '26.0.0 cannot be imported: versions 5.x through 25.x can'],
    ['no version', { name: 'Nothing' }, 'version', 'is required: the WorldDefinition version the world was saved in (5.x through 25.x can be imported)'],
    ['not JSON', '{"name": ', '', expect.stringContaining('not valid JSON')],
    ['not an object', '[1, 2]', '', 'an importable file holds a JSON object (a world, a character card or a World Info lorebook)'],
  ])('%s', (_name, input, path, message) => {
    expect(importWorld(input)).toEqual({ ok: false, issues: [{ path, message }], report: null });
  });

  it('the input is not modified', () => {
    const source = JSON.parse(fixture('world-5.0.0.json')) as unknown;
    const copy = structuredClone(source);
    imported(source);
    expect(source).toEqual(copy);
  });
});
