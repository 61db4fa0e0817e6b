import { describe, expect, it } from 'vitest';
import { displayedText } from './directives.ts';
import { dispatchEvents, runTurn } from './turn.ts';
import type { EngineWorld } from './world-types.ts';

const world: EngineWorld = {
  name: 'Directive World',
  entries: [],
  variables: [
    { id: 'hp', type: 'number', defaultValue: 50, min: 0, max: 100 },
    { id: 'gold', type: 'number', defaultValue: 10 },
    { id: 'lit', type: 'boolean', defaultValue: false },
    { id: 'mood', type: 'string', defaultValue: 'calm' },
    { id: 'bag', type: 'json', defaultValue: { items: ['rope'], stats: { str: 3 }, meta: { a: { deep: 1 }, keep: true } } },
    { id: 'log', type: 'json', defaultValue: ['start'] },
  ],
  audioTracks: [
    { id: 'theme', type: 'bgm' },
    { id: 'battle', type: 'bgm' },
    { id: 'sword-hit', type: 'sfx' },
  ],
};

function turn(reply: string) {
  return runTurn(world, null, { userMessage: 'go', aiReply: reply, now: '2026-01-01T00:00:00Z', seed: 1 });
}

describe('directives: each operation (table)', () => {
  it.each([
    ['set number', '[hp: set 70]', 'hp', 70],
    ['bare number means set', '[hp: 30]', 'hp', 30],
    ['add short form', '[hp: +5]', 'hp', 55],
    ['add long form', '[hp: add 5]', 'hp', 55],
    ['subtract short form', '[hp: -5]', 'hp', 45],
    ['subtract long form', '[hp: subtract 5]', 'hp', 45],
    ['multiply short form', '[gold: *3]', 'gold', 30],
    ['multiply long form', '[gold: multiply 1.5]', 'gold', 15],
    ['set negative number explicitly', '[gold: set -4]', 'gold', -4],
    ['clamp to max', '[hp: +500]', 'hp', 100],
    ['clamp to min', '[hp: -500]', 'hp', 0],
    ['clamp a set', '[hp: set 1000]', 'hp', 100],
    ['quoted number is coerced (unambiguous)', '[hp: set "50"]', 'hp', 50],
    ['toggle boolean', '[lit: toggle]', 'lit', true],
    ['set boolean', '[lit: set true]', 'lit', true],
    ['set boolean from quoted text', '[lit: "TRUE"]', 'lit', true],
    ['set string bare', '[mood: angry]', 'mood', 'angry'],
    ['set string long form', '[mood: set very tired]', 'mood', 'very tired'],
    ['set string quoted', '[mood: set "a \\"quoted\\" word"]', 'mood', 'a "quoted" word'],
    ['append string', '[mood: append  and wary]', 'mood', 'calmand wary'],
    ['set string from a number keeps the text', '[mood: 42]', 'mood', '42'],
    ['set json', '[log: set ["a", {"b": [1, 2]}]]', 'log', ['a', { b: [1, 2] }]],
    ['push json object item', '[log: push {"event": "door", "tags": ["x"]}]', 'log', ['start', { event: 'door', tags: ['x'] }]],
    ['push bare word becomes a string', '[log: push torch]', 'log', ['start', 'torch']],
    ['delete by index', '[log: delete 0]', 'log', []],
    ['delete array item by value', '[bag.items: delete rope]', 'bag', { items: [], stats: { str: 3 }, meta: { a: { deep: 1 }, keep: true } }],
    [
      'merge is shallow: a nested object replaces the key wholesale',
      '[bag: merge {"meta": {"a": {"other": 2}}, "new": [1]}]',
      'bag',
      { items: ['rope'], stats: { str: 3 }, meta: { a: { other: 2 } }, new: [1] },
    ],
    ['delete key', '[bag: delete stats]', 'bag', { items: ['rope'], meta: { a: { deep: 1 }, keep: true } }],
    ['dot path set', '[bag.stats.str: set 9]', 'bag', { items: ['rope'], stats: { str: 9 }, meta: { a: { deep: 1 }, keep: true } }],
    ['dot path add to a number field', '[bag.stats.str: +2]', 'bag', { items: ['rope'], stats: { str: 5 }, meta: { a: { deep: 1 }, keep: true } }],
    ['numeric index in a path', '[bag.items.0: set "lantern"]', 'bag', { items: ['lantern'], stats: { str: 3 }, meta: { a: { deep: 1 }, keep: true } }],
    [
      'missing intermediates are created',
      '[bag.quests.main.stage: set 2]',
      'bag',
      { items: ['rope'], stats: { str: 3 }, meta: { a: { deep: 1 }, keep: true }, quests: { main: { stage: 2 } } },
    ],
    ['push at a path', '[bag.items: push "map"]', 'bag', { items: ['rope', 'map'], stats: { str: 3 }, meta: { a: { deep: 1 }, keep: true } }],
    ['delete at a nested path', '[bag: delete meta.a]', 'bag', { items: ['rope'], stats: { str: 3 }, meta: { keep: true } }],
  ])('%s: %s', (_name, reply, variableId, expected) => {
    const result = turn(`Story. ${reply}`);
    expect(result.malformedDirectives).toEqual([]);
    expect(result.state.variables[variableId]).toEqual(expected);
    expect(result.displayText).toBe('Story.');
  });
});

describe('directives: edge cases (table)', () => {
  it.each([
    ['string into a number is malformed', '[hp: set "fifty"]', 'hp', 'is not a number'],
    ['toggle on a number is a type mismatch', '[hp: toggle]', 'hp', 'toggle does not apply'],
    ['append on a number is a type mismatch', '[hp: append 3]', 'hp', 'append does not apply'],
    ['add on a string is a type mismatch', '[mood: add 3]', 'mood', 'add does not apply'],
    ['merge of a non-object', '[bag: merge [1,2]]', 'bag', 'merge needs a JSON object'],
    ['push onto an object', '[bag: push 3]', 'bag', 'push applies to an array'],
    ['invalid JSON in set', '[log: set {"a": }]', 'log', 'not valid JSON'],
    ['boolean from an ambiguous word', '[lit: set maybe]', 'lit', 'not true or false'],
    ['toggle with a value', '[lit: toggle now]', 'lit', 'toggle takes no value'],
    ['empty directive', '[hp: ]', 'hp', 'no operation or value'],
    ['path into a number variable', '[hp.x: set 3]', 'hp', 'has no fields'],
    ['delete a missing key', '[bag: delete nope]', 'bag', 'no key'],
    ['operation without a value', '[gold: add]', 'gold', 'add needs a value'],
  ])('%s: reported and changes nothing', (_name, reply, variableId, reason) => {
    const result = turn(`Text ${reply} more.`);
    expect(result.malformedDirectives).toHaveLength(1);
    expect(result.malformedDirectives[0]?.variableId).toBe(variableId);
    expect(result.malformedDirectives[0]?.reason).toContain(reason);
    expect(result.stateChanges).toEqual([]);
    expect(result.state.variables[variableId]).toEqual(runTurn(world, null, { userMessage: '', aiReply: '', now: 0 }).state.variables[variableId]);
  });

  it.each([
    ['a note in brackets', 'She smiles. [Note: this is prose]', 'She smiles. [Note: this is prose]'],
    ['an unknown id', 'He waits. [mana: +5] Then leaves.', 'He waits. [mana: +5] Then leaves.'],
    ['a bracket without a colon', 'Footnote [1] here.', 'Footnote [1] here.'],
    ['a markdown link', 'See [the map](http://x) now.', 'See [the map](http://x) now.'],
    ['an id in another case', 'Pain. [HP: -5]', 'Pain. [HP: -5]'],
  ])('brackets that are not directives stay: %s', (_name, reply, expected) => {
    const result = turn(reply);
    expect(result.displayText).toBe(expected);
    expect(result.stateChanges).toEqual([]);
    expect(result.malformedDirectives).toEqual([]);
  });

  it('removes known directives from display text but keeps other brackets, tidying lines', () => {
    const result = turn('You find gold [gold: +5] and a note [Note: old].\n[hp: -10]\n[mood: set wary]\nThe end.');
    expect(result.displayText).toBe('You find gold and a note [Note: old].\nThe end.');
    expect(result.state.variables.gold).toBe(15);
    expect(result.state.variables.hp).toBe(40);
  });

  it.each([
    ['a run of directives mid-sentence', 'Hit! [hp: -1] [gold: +1] [mood: sore] Then quiet.', 'Hit! Then quiet.'],
    ['a run before other brackets', 'Hit! [hp: -1]  [gold: +1] [Note: x]', 'Hit! [Note: x]'],
    ['a run at the start of a line', '[hp: -1][gold: +1] You wince.', 'You wince.'],
    ['before punctuation', 'You lose [gold: -5].', 'You lose.'],
  ])('removal tidies spaces: %s', (_name, reply, expected) => {
    expect(turn(reply).displayText).toBe(expected);
  });

  it('a malformed directive naming a known variable is still removed from the display text', () => {
    const result = turn('Ouch. [hp: set "lots"]');
    expect(result.displayText).toBe('Ouch.');
    expect(result.malformedDirectives[0]?.text).toBe('[hp: set "lots"]');
  });

  it('several directives apply in order and record each change', () => {
    const result = turn('[hp: -10] [hp: *2] [hp: +1]');
    expect(result.state.variables.hp).toBe(81);
    expect(result.stateChanges.map((change) => change.newValue)).toEqual([40, 80, 81]);
  });

  it('brackets inside JSON strings do not end the directive', () => {
    const result = turn('[log: push {"text": "a ] tricky [ value"}]');
    expect(result.state.variables.log).toEqual(['start', { text: 'a ] tricky [ value' }]);
  });

  it('the input state is not mutated', () => {
    const state = { variables: { bag: { items: ['rope'] } } };
    runTurn(world, state, { userMessage: '', aiReply: '[bag.items: push "x"]', now: 0 });
    expect(state.variables.bag.items).toEqual(['rope']);
  });
});

describe('audio directives (table)', () => {
  it.each([
    ['play', '[audio: theme play]', { action: 'play', trackId: 'theme', trackType: 'bgm' }],
    ['play without a verb', '[audio: sword-hit]', { action: 'play', trackId: 'sword-hit', trackType: 'sfx' }],
    ['stop', '[audio: theme stop]', { action: 'stop', trackId: 'theme' }],
    ['crossfade', '[audio: battle crossfade 3]', { action: 'crossfade', trackId: 'battle', seconds: 3 }],
    ['volume', '[audio: theme volume 0.4]', { action: 'volume', trackId: 'theme', volume: 0.4 }],
    ['play chain', '[audio: theme play chain:battle]', { action: 'play', trackId: 'theme', chainTo: 'battle' }],
  ])('%s', (_name, reply, expected) => {
    const result = turn(`Music. ${reply}`);
    expect(result.audioCommands[0]).toMatchObject({ ...expected, source: 'directive' });
    expect(result.displayText).toBe('Music.');
  });

  it.each([
    ['unknown track', '[audio: nope play]', 'unknown audio track'],
    ['volume out of range', '[audio: theme volume 2]', 'volume needs a number from 0 to 1'],
    ['unknown action', '[audio: theme explode]', 'unknown audio action'],
    ['chain to an unknown track', '[audio: theme play chain:ghost]', 'unknown audio track "ghost"'],
  ])('malformed audio: %s', (_name, reply, reason) => {
    const result = turn(reply);
    expect(result.audioCommands).toEqual([]);
    expect(result.malformedDirectives[0]?.reason).toContain(reason);
  });
});

describe('displayedText: the display text from the variable ids alone (custom interfaces, streaming)', () => {
  const ids = world.variables.map((v) => v.id);
  it.each([
    ['a variable directive goes, a note stays', 'The ghoul claws you. [hp: -15] [Note: the air smells of ash]', 'The ghoul claws you. [Note: the air smells of ash]'],
    ['audio and JSON-path directives go', '[audio: theme play] Quiet. [bag.stats.str: +1]', 'Quiet.'],
    ['a malformed directive of a known id goes', 'You rest. [lit: maybe]', 'You rest.'],
    ['an unknown id, wrong case, footnote and link stay', 'Ink [Hp: 5] [mana: +3] [1] [a](b) [Lore: old]', 'Ink [Hp: 5] [mana: +3] [1] [a](b) [Lore: old]'],
    ['a directive alone on its line takes the line', 'One.\n[gold: +5]\nTwo.', 'One.\nTwo.'],
  ])('%s', (_name, reply, expected) => {
    expect(displayedText(reply, ids)).toBe(expected);
  });

  it.each([
    ['an unclosed directive', 'You swing. [hp: -1', 'You swing.'],
    ['an unclosed JSON directive', 'Loot! [bag: merge {"items": ["ro', 'Loot!'],
    ['the start of one', 'You swing. [h', 'You swing.'],
    ['a bare bracket', 'You swing. [', 'You swing.'],
    ['a dotted head', 'You swing. [bag.sta', 'You swing.'],
    ['an audio directive', 'Music: [audio: the', 'Music:'],
  ])('while streaming, hides %s at the end', (_name, reply, expected) => {
    expect(displayedText(reply, ids, { partial: true })).toBe(expected);
    expect(displayedText(reply, ids)).toBe(reply); // a finished reply keeps an unclosed bracket as text, as runTurn does
  });

  it.each([
    ['an unknown head', 'A [Note: the air', 'A [Note: the air'],
    ['a head no id starts with', 'A [x', 'A [x'],
    ['an unclosed one on an earlier line', 'A [hp: 5\nB.', 'A [hp: 5\nB.'],
    ['a closed directive before the end', 'A [hp: 5] B [No', 'A B [No'],
  ])('while streaming, keeps %s', (_name, reply, expected) => {
    expect(displayedText(reply, ids, { partial: true })).toBe(expected);
  });

  it('is what runTurn shows for the same reply', () => {
    const reply = 'Lights! [lit: toggle] [Note: a draft] Then [gold: *2] coins, [bag: merge {"x": [1]}] done. [audio: theme play]';
    expect(displayedText(reply, ids)).toBe(runTurn(world, null, { userMessage: 'go', aiReply: reply, now: 0, seed: 1, sessionId: 's' }).displayText);
  });
});

describe('choices: a reply offers the player options ([choices: A | B])', () => {
  const turn = (aiReply: string, state: Parameters<typeof runTurn>[1] = null, on: EngineWorld = world) => runTurn(on, state, { userMessage: 'go', aiReply, now: 0, seed: 1, sessionId: 's' });

  it('are parsed in order, trimmed, without repeats; hidden from the text; kept as the pending choices', () => {
    const result = turn('The door creaks. [gold: +1]\n[choices: Open the door |  Run away | | Open the door]\n[choices: Call out]');
    expect(result.choices).toEqual(['Open the door', 'Run away', 'Call out']);
    expect(result.state.pendingChoices).toEqual(['Open the door', 'Run away', 'Call out']);
    expect(result.displayText).toBe('The door creaks.');
    expect(result.state.variables.gold).toBe(11);
    expect(displayedText('Pick: [choices: A | B] now', ['gold'])).toBe('Pick: now');
  });

  it('the next reply replaces them; one without choices leaves none pending; an interface action keeps them', () => {
    const first = turn('Left or right? [choices: Left | Right]');
    const kept = dispatchEvents(world, first.state, [{ type: 'action', actionId: 'nothing' }], { now: 0, seed: 1, sessionId: 's' });
    expect(kept.state.pendingChoices).toEqual(['Left', 'Right']);
    expect(turn('Up then. [choices: Climb]', first.state).state.pendingChoices).toEqual(['Climb']);
    expect(turn('You walk on.', first.state).state.pendingChoices).toEqual([]);
  });

  it('an empty one is malformed and removed; more than 8 keep the first 8; a long option is cut at 200 characters', () => {
    const empty = turn('Hm. [choices:  | ]');
    expect(empty.choices).toEqual([]);
    expect(empty.displayText).toBe('Hm.');
    expect(empty.malformedDirectives.map((m) => m.variableId)).toEqual(['choices']);
    const many = turn(`[choices: ${Array.from({ length: 10 }, (_, i) => `Option ${i + 1}`).join(' | ')}]`);
    expect(many.choices).toHaveLength(8);
    expect(many.choices.at(-1)).toBe('Option 8');
    expect(many.malformedDirectives[0]!.reason).toContain('at most 8');
    expect(turn(`[choices: ${'x'.repeat(300)}]`).choices[0]).toHaveLength(200);
  });

  it('a world with its own variable "choices" keeps the directive for that variable', () => {
    const own: EngineWorld = { ...world, variables: [...world.variables, { id: 'choices', type: 'string', defaultValue: '' }] };
    const result = turn('[choices: A | B]', null, own);
    expect(result.choices).toEqual([]);
    expect(result.state.variables.choices).toBe('A | B');
  });

  it('a state stored before choices existed reads as none pending', () => {
    expect(turn('Hello.', { variables: { gold: 3 } }).state.pendingChoices).toEqual([]);
  });
});
