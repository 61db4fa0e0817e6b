/**
 * Issue 31 point 1: one part that cannot convert never refuses the whole world. Each case is a
 * fixture in the shape seen in the wild (tests/fixtures/worlds/): what has an obvious meaning is
 * repaired, an over-long text is cut at the validator's limit, and only the part that cannot be
 * kept is dropped; every one of them is a report line naming its path in the input's terms.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assemblePrompt } from '../engine/prompt.ts';
import type { WorldState } from '../engine/state.ts';
import { runTurn } from '../engine/turn.ts';
import { type ImportResult, importWorld } from './import-world.ts';

const FIXTURES = new URL('../../../../tests/fixtures/worlds/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const options = { generateId: () => '11111111-1111-4111-8111-111111111111', now: () => new Date('2026-01-01T00:00:00Z') };

function imported(input: unknown): Extract<ImportResult, { ok: true }> {
  const result = importWorld(input, options);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result;
}
const lines = (result: Extract<ImportResult, { ok: true }>) => result.report.changes.map((change) => `${change.kind} ${change.path}: ${change.message}`);

describe('import repairs instead of refusing', () => {
  it('older rules with `effects` convert; `effects: []` is kept as a rule that only marks its condition', () => {
    const result = imported(fixture('rule-effects-9.0.0.json'));
    expect(lines(result)).toEqual(
      expect.arrayContaining([
        'renamed rules[0].effects: effects → actions',
        'converted rules[1].effects: no effects: kept as a rule (a condition) that does nothing when it fires',
      ]),
    );
    const [burn, low] = result.world.rules;
    expect(burn?.actions).toEqual([{ type: 'modify-variable', variableId: 'oil', operation: 'subtract', value: 1 }]);
    expect(low).toMatchObject({ id: 'lamp-low', actions: [], enabled: true });
    // The kept rules still run: oil burns each turn, and the empty rule fires without changing anything.
    let state: Partial<WorldState> = { variables: { oil: 4 } };
    for (let turn = 0; turn < 2; turn++) {
      const next = runTurn(result.world, state, { userMessage: 'wait', aiReply: 'The lamp flickers.', now: '2026-01-01T00:00:00Z', seed: 1, sessionId: 's' });
      state = next.state;
    }
    expect(state.variables?.oil).toBe(2);
  });

  it('an inject-directive action without an id gets one from its rule and position; only the action naming a missing variable is dropped', () => {
    const result = imported(fixture('directive-no-id-22.0.0.json'));
    const thief = result.world.rules.find((rule) => rule.id === 'Thief Appears')!;
    expect(thief.actions).toEqual([
      { type: 'modify-variable', variableId: 'coins', operation: 'subtract', value: 1 },
      { type: 'inject-directive', directiveId: 'thief-appears-directive-1', content: 'A thief is in the crowd; {{char}} keeps a hand on the purse.', position: 'after_char', persistent: true },
    ]);
    expect(lines(result)).toEqual(
      expect.arrayContaining([
        'defaulted rules[2].actions[1].directiveId: missing; "thief-appears-directive-1" (from the rule\'s id and the action\'s position)',
        'dropped rules[2].actions[2]: could not be kept: names variable "gems", which this world does not define (at variableId)',
      ]),
    );
    // The other two rules and the entry are untouched.
    expect(result.world.rules.map((rule) => rule.id)).toEqual(['open', 'rain', 'Thief Appears']);
    // The repaired directive works: the thief turn injects it after the character.
    const turn = runTurn(result.world, {}, { userMessage: 'a thief!', aiReply: 'Hold on.', now: '2026-01-01T00:00:00Z', seed: 1, sessionId: 's' });
    expect(turn.state.variables.coins).toBe(4);
    const prompt = assemblePrompt(result.world, turn.state, { history: [{ role: 'user', content: 'a thief!' }], now: '2026-01-01T00:00:00Z', seed: 1, sessionId: 's' });
    expect(prompt.messages.map((message) => message.content)).toContain('A thief is in the crowd; Night Market keeps a hand on the purse.');
  });

  it('a World Info description of 31,005 characters is cut at the limit and its 34 entries are kept', () => {
    const entries = Object.fromEntries(
      Array.from({ length: 34 }, (_, uid) => [String(uid), { uid, key: [`place${uid}`], content: `Place ${uid}.`, comment: `Place ${uid}`, order: 100, position: 0 }]),
    );
    const description = 'The archipelago of lamps. '.repeat(1200).slice(0, 31_005);
    const result = imported({ name: 'Archipelago', description, entries });
    expect(result.world.description).toBe(description.slice(0, 10_000));
    expect(result.world.entries).toHaveLength(34);
    expect(lines(result)).toContain("converted description: cut to 10,000 characters, the validator's limit (was 31,005); the rest was left out");
  });

  it('a world with many broken parts keeps all it can, each change named by its path', () => {
    const result = imported(fixture('repairs-8.0.0.json'));
    expect(lines(result).slice(-6)).toEqual([
      'defaulted name: missing or blank; "Imported world"',
      'converted entries[0].id: "Bad Id" is not a kebab-case id → "bad-id"',
      'converted entries[0].role: must be one of "system", "character", "personality", "scenario", "lore", "plot", "style", "example", "greeting", "custom", not the text "villain"; the default "custom" is used',
      'converted entries[1].section: "nowhere" is not a section; "system-presets" (no keywords: always sent)',
      'converted variables[0].defaultValue: must be a number because the variable\'s type is number, not the text "lots"; 0 used',
      'dropped rules[0].actions[0]: could not be kept: names variable "silver", which this world does not define (at variableId)',
    ]);
    expect(result.world).toMatchObject({ name: 'Imported world', entries: [{ id: 'bad-id', role: 'custom' }, { id: 'ok', section: 'system-presets' }], variables: [{ id: 'gold', defaultValue: 0 }], rules: [{ id: 'r', actions: [] }] });
  });

  it('a dropped item is named by its path in the input even after earlier items of its list were dropped', () => {
    const world = {
      version: '12.0.0',
      name: 'Paths',
      entries: [],
      variables: [{ id: 'hp', name: 'HP', type: 'number', defaultValue: 3 }],
      rules: [
        { id: 'a', name: 'A', trigger: { type: 'keyword', keywords: [] }, actions: [] },
        { id: 'b', name: 'B', trigger: { type: 'keyword', keywords: ['x'] }, actions: [{ type: 'modify-variable', variableId: 'mp', operation: 'add', value: 1 }] },
        { id: 'c', name: 'C', trigger: { type: 'teleport' }, actions: [] },
      ],
    };
    const result = imported(world);
    expect(lines(result)).toEqual(
      expect.arrayContaining([
        'dropped rules[0]: could not be kept: must have at least 1 item (at trigger.keywords)',
        'dropped rules[1].actions[0]: could not be kept: names variable "mp", which this world does not define (at variableId)',
        expect.stringMatching(/^dropped rules\[2\]: could not be kept: .*teleport/),
      ]),
    );
    expect(result.world.rules.map((rule) => rule.id)).toEqual(['b']);
  });

  it('input that is not a world at all is still refused whole', () => {
    expect(importWorld('{"hello": "there"}')).toMatchObject({ ok: false, issues: [{ path: 'version' }] });
    expect(importWorld('[]')).toMatchObject({ ok: false, issues: [{ path: '' }] });
  });
});
