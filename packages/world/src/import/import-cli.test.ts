/**
 * The author CLI on every accepted import form (issue 21 acceptance): each fixture imports
 * (`npm run world -- import`), validates and runs two turns, all through the spawned CLI.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pictureChunks } from '../../../../tests/support/sillytavern-card-reader.ts';
import { type CliResult, worldCli } from '../../../../tests/support/world-cli.ts';
import { reportLines } from './import-report.ts';
import { importWorld } from './import-world.ts';
import { encodeBase64Utf8, pngWithText, readPngText } from './png-text.ts';

const ROOT = resolve(import.meta.dirname, '../../../..');
const FIXTURES = join(ROOT, 'tests/fixtures/worlds');
/** The CLI started as a process of its own (compiled once: tests/support/world-cli.ts). */
let cli: (...args: string[]) => CliResult;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const lines = (text: string) => text.trimEnd().split('\n');

let dir = '';

beforeAll(async () => {
  cli = await worldCli();
  dir = mkdtempSync(join(tmpdir(), 'world-import-cli-'));
  writeFileSync(join(dir, 'card-v3.png'), pngWithText({ ccv3: encodeBase64Utf8(readFileSync(join(FIXTURES, 'card-v3.json'), 'utf8')) }));
});

interface Turn {
  user: string;
  reply: string;
}

interface TurnOutput {
  state: { variables: Record<string, unknown>; turnCount: number };
  displayText: string;
  stateChanges: { variableId: string; oldValue: unknown; newValue: unknown; source: string }[];
  firedRules: { ruleId: string }[];
  firedReactions: { reactionId: string }[];
  notifications: { message: string }[];
}

const CASES: { file: string; turns: [Turn, Turn]; check: (first: TurnOutput, second: TurnOutput) => void }[] = [
  {
    file: 'world-5.0.0.json',
    turns: [
      { user: 'We walk on.', reply: 'An hour passes. [lamp_oil: -2]' },
      { user: 'Keep going.', reply: 'The fog thickens. [lamp_oil: -2] [miles_walked: +3]' },
    ],
    check: (first, second) => {
      expect(first.state.variables).toEqual({ lamp_oil: 3, miles_walked: 0 });
      expect(second.state.variables).toEqual({ lamp_oil: 1, miles_walked: 3 });
      expect(second.firedRules.map((rule) => rule.ruleId)).toEqual(['Lamp low']);
      expect(second.notifications.map((notification) => notification.message)).toEqual(['The lamp gutters.']);
    },
  },
  {
    file: 'world-8.0.0.json',
    turns: [
      { user: 'An ale, on my tab.', reply: 'Coin first. [coins: -3] [tab_owed: +3]' },
      { user: 'Another.', reply: 'Fine. [coins: -3] [tab_owed: +3]' },
    ],
    check: (first, second) => {
      expect(first.state.variables).toEqual({ coins: 9, tab_owed: 3 });
      expect(second.state.variables).toEqual({ coins: 6, tab_owed: 6 });
      expect(second.displayText).toBe('Fine.');
    },
  },
  {
    file: 'world-18.0.0.json',
    turns: [
      { user: 'I search the moat.', reply: 'You find an iron key! [has_key: set true]' },
      { user: 'Please Open The Gate now.', reply: 'The guard sighs.' },
    ],
    check: (first, second) => {
      expect(first.state.variables).toEqual({ has_key: true, guard_mood: 'wary' });
      expect(second.firedRules.map((rule) => rule.ruleId)).toEqual(['open_gate']);
      expect(second.state.variables.guard_mood).toBe('resigned');
    },
  },
  {
    file: 'world-21.0.0.json',
    turns: [
      { user: 'Anything out there?', reply: 'A ship rounds the point.' },
      { user: 'And now?', reply: 'Two more Ships, flying black sails.' },
    ],
    check: (first, second) => {
      expect(first.state.variables.ships_seen).toBe(1);
      expect(second.state.variables.ships_seen).toBe(2);
    },
  },
  {
    file: 'world-25.0.0.json',
    turns: [
      { user: 'I open the sprinklers.', reply: 'Water hisses. [water_level: +1]' },
      { user: 'More!', reply: 'The beds flood. [water_level: +1]' },
    ],
    check: (first, second) => {
      expect(first.state.variables).toEqual({ water_level: 4, blooms: 1 });
      expect(second.state.variables).toEqual({ water_level: 5, blooms: 2 });
      expect(second.firedReactions.map((reaction) => reaction.reactionId)).toEqual(['Bloom on rain']);
    },
  },
  {
    file: 'card-v2.json',
    turns: [
      { user: 'Tell me about the Kestrel.', reply: '*Vale pats the rail.* Best ship in the sky.' },
      { user: 'And the crew?', reply: 'Tamsin and Rivet. Mostly Rivet.' },
    ],
    check: (first, second) => {
      expect(first.displayText).toBe('*Vale pats the rail.* Best ship in the sky.');
      expect(second.state.turnCount).toBe(2);
      expect(second.stateChanges).toEqual([]);
    },
  },
  {
    file: 'card-v3.png',
    turns: [
      { user: 'Is the comet visible?', reply: 'Not yet, next week.' },
      { user: 'Show me Saturn.', reply: 'There, the rings!' },
    ],
    check: (_first, second) => {
      expect(second.state.turnCount).toBe(2);
      expect(second.displayText).toBe('There, the rings!');
    },
  },
  {
    file: 'world-info.json',
    turns: [
      { user: 'Look at the moon.', reply: 'It glows green.' },
      { user: 'And the tide?', reply: 'Rising.' },
    ],
    check: (_first, second) => {
      expect(second.state.turnCount).toBe(2);
      expect(second.stateChanges).toEqual([]);
    },
  },
];

describe('npm run world -- import (spawned): every accepted form imports, validates and runs two turns', () => {
  it.each(CASES)('$file', ({ file, turns, check }) => {
    const source = join(file.endsWith('.png') ? dir : FIXTURES, file);
    const out = join(dir, `${file}.imported.json`);
    const imported = cli('import', source, '--out', out);
    expect(imported.status).toBe(0);
    expect(imported.stdout).toBe('');
    // The CLI's report is the library's report, line for line (ids generated per run aside).
    const library = importWorld(new Uint8Array(readFileSync(source)), { fallbackName: file.replace(/\.[^.]+$/, '') });
    expect(library.ok).toBe(true);
    expect(lines(imported.stderr.replace(UUID, '<uuid>'))).toEqual(library.report ? reportLines(library.report).map((line) => line.replace(UUID, '<uuid>')) : []);
    expect(lines(imported.stderr)[0]).toMatch(/^import: (world|sillytavern-card|sillytavern-world-info) .+ → WorldDefinition 20\.0\.0$/);

    const validated = cli('validate', out);
    expect(validated.status).toBe(0);
    expect(lines(validated.stdout)[0]).toBe('valid');

    const outputs: TurnOutput[] = [];
    let statePath: string | null = null;
    for (const [index, turn] of turns.entries()) {
      const args = ['turn', out, '--user', turn.user, '--reply', turn.reply, '--now', '2026-02-02T10:00:00Z', '--seed', '1'];
      if (statePath) args.push('--state', statePath);
      const result = cli(...args);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const output = JSON.parse(result.stdout) as TurnOutput;
      expect(output.state.turnCount).toBe(index + 1);
      statePath = join(dir, `${file}.state-${index}.json`);
      writeFileSync(statePath, JSON.stringify(output.state));
      outputs.push(output);
    }
    check(outputs[0] as TurnOutput, outputs[1] as TurnOutput);
  }, 120_000);

  it('import to stdout prints the world; a refused import exits 1 naming every path and writes nothing', () => {
    const printed = cli('import', join(FIXTURES, 'world-21.0.0.json'));
    expect(printed.status).toBe(0);
    expect(JSON.parse(printed.stdout)).toMatchObject({ version: '20.0.0', id: '0d9b7a44-5c1e-4f7e-9a52-3b8f0c6e2d11', name: 'Harbor Watch' });

    const out = join(dir, 'refused.json');
    const tooOld = join(dir, 'too-old.json');
    writeFileSync(tooOld, JSON.stringify({ version: '4.2.0', name: 'Old' }));
    const refused = cli('import', tooOld, '--out', out);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('');
    expect(existsSync(out)).toBe(false);
    expect(lines(refused.stderr)).toEqual(['refused: 1 issue', 'version: 4.2.0 cannot be imported: versions 5.x through 25.x can']);

    // One part that cannot convert is repaired or dropped, and said: the world is still imported.
    const repaired = cli('import', join(FIXTURES, 'repairs-8.0.0.json'), '--out', out);
    expect(repaired.status).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ name: 'Imported world', variables: [{ id: 'gold', defaultValue: 0 }] });
    expect(lines(repaired.stderr)).toContain('dropped rules[0].actions[0]: could not be kept: names variable "silver", which this world does not define (at variableId)');
  }, 60_000);

  it('imported text passes the text guard: U+0000 and lone surrogates in a card are cleaned with a line naming each path (issue 31)', () => {
    const file = join(dir, 'knight.png');
    const card = JSON.stringify({ spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'Null\u0000Knight', description: 'x', first_mes: 'Halt!\u0000', personality: 'a \ud800 b', scenario: '', mes_example: '' } });
    writeFileSync(file, pngWithText({ ccv3: encodeBase64Utf8(card) }));
    const result = cli('import', file);
    expect(result.status).toBe(0);
    const world = JSON.parse(result.stdout) as { name: string; entries: { id: string; content: string }[] };
    expect(world.name).toBe('NullKnight');
    expect(world.entries.find((entry) => entry.id === 'greeting')?.content).toBe('Halt!');
    expect(result.stdout).not.toMatch(/\\u0000|\\ud800/i);
    expect(lines(result.stderr)).toEqual(
      expect.arrayContaining([
        'converted data.name: 1 U+0000 character removed (text that cannot be stored)',
        'converted data.first_mes: 1 U+0000 character removed (text that cannot be stored)',
        'converted data.personality: 1 unpaired surrogate replaced by U+FFFD (text that cannot be stored)',
      ]),
    );
  }, 60_000);

  it('export writes a SillyTavern card (PNG with ccv3 and chara, or JSON) that imports back as the same world (issue 31)', () => {
    const sample = join(ROOT, 'packages/world/samples/changan-nights.json');
    const world = JSON.parse(cli('import', sample).stdout) as unknown;
    const png = join(dir, 'changan.png');
    const exported = cli('export', sample, '--card', png);
    expect(exported.status).toBe(0);
    expect(lines(exported.stderr)[0]).toBe(`export: 长安夜话 → SillyTavern chara_card_v3 (png, with a chara_card_v2 copy) ${png}`);
    const bytes = new Uint8Array(readFileSync(png));
    expect([...readPngText(bytes).keys()]).toEqual(['chara', 'ccv3']);
    const back = cli('import', png);
    expect(back.status).toBe(0);
    expect(JSON.parse(back.stdout)).toEqual(world);
    expect(lines(back.stderr)[0]).toBe('import: sillytavern-card chara_card_v3 (png), world 20.0.0 → WorldDefinition 20.0.0');

    const json = join(dir, 'changan.json');
    expect(cli('export', sample, '--card', json).status).toBe(0);
    expect((JSON.parse(readFileSync(json, 'utf8')) as { spec: string }).spec).toBe('chara_card_v3');
    expect(JSON.parse(cli('import', json).stdout)).toEqual(world);

    // Usage errors: no --card, a file that is neither .png nor .json, an image that is not one.
    expect(cli('export', sample).status).toBe(2);
    expect(cli('export', sample, '--card', join(dir, 'card.txt')).status).toBe(2);
    const notImage = cli('export', sample, '--card', png, '--image', sample);
    expect(notImage.status).toBe(2);
    expect(notImage.stderr).toContain('is not a picture that can be read');
  }, 60_000);

  it('export --source writes the card the world was imported from again, in its own picture, with the edits made since (issue 49)', () => {
    const original = join(ROOT, 'tests/fixtures/cards/harbor-keeper.png');
    const worldFile = join(dir, 'harbor.json');
    expect(cli('import', original, '--out', worldFile).status).toBe(0);
    const world = JSON.parse(readFileSync(worldFile, 'utf8')) as { variables: unknown[]; entries: { id: string; content: string }[] };
    world.entries.find((entry) => entry.id === 'lore-1')!.content = 'Fog at seven.';
    world.variables = [{ id: 'tide', name: 'Tide', type: 'number', defaultValue: 0 }];
    writeFileSync(worldFile, JSON.stringify(world));
    const png = join(dir, 'harbor-out.png');
    const exported = cli('export', worldFile, '--card', png, '--source', original);
    expect(exported.status).toBe(0);
    expect(lines(exported.stderr)).toContain('not in the card: 1 variable ("Tide") and the directives that change them: SillyTavern has no variables.');
    const before = JSON.parse(Buffer.from(readPngText(new Uint8Array(readFileSync(original))).get('ccv3')!, 'base64').toString('utf8')) as { data: { character_version: string; character_book: { entries: Record<string, unknown>[] } } };
    const after = JSON.parse(Buffer.from(readPngText(new Uint8Array(readFileSync(png))).get('ccv3')!, 'base64').toString('utf8')) as typeof before;
    expect(after.data.character_version).toBe('1.4.2');
    expect(after.data.character_book.entries[1]).toEqual({ ...before.data.character_book.entries[1], content: 'Fog at seven.' });
    // The picture is the card's own: every chunk but the card's text, byte for byte.
    expect(pictureChunks(new Uint8Array(readFileSync(png)))).toEqual(pictureChunks(new Uint8Array(readFileSync(original))));
    expect(cli('export', worldFile, '--card', png, '--source', worldFile).status).toBe(2);
  }, 60_000);
});
