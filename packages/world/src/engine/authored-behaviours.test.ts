/**
 * Engine behaviours that worlds of the public format rely on (issue 21, items 2–4, 6, 7): ids as
 * authors write them, one state per event for rules and reactions, "contains" keyword triggers,
 * the world id, lorebookScanDepth in turns, and prototype keys that change nothing.
 */
import { completeState, isSandboxState, validArguments } from '@yumina/sandbox';
import { describe, expect, it } from 'vitest';
import { validateWorld, type WorldDefinition, type WorldDefinitionInput } from '../schema/index.ts';
import { assemblePrompt } from './prompt.ts';
import { dispatchEvents, runTurn, startSession } from './turn.ts';

const NOW = '2026-03-01T12:00:00Z';
const session = { now: NOW, seed: 1, sessionId: 's' };

function world(input: Omit<WorldDefinitionInput, 'version' | 'name'> & { name?: string }): WorldDefinition {
  const result = validateWorld({ version: '20.0.0', name: 'Test', ...input });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.world;
}

describe('a shop with mutually exclusive rules', () => {
  const shop = world({
    variables: [
      { id: 'gold', name: 'Gold', type: 'number', defaultValue: 10, min: 0 },
      { id: 'potions', name: 'Potions', type: 'number', defaultValue: 0 },
    ],
    rules: [
      {
        id: 'Bought a potion',
        name: 'Bought',
        trigger: { type: 'action', actionId: 'buy-potion' },
        conditions: [{ variableId: 'gold', operator: 'gte', value: 5 }],
        actions: [
          { type: 'modify-variable', variableId: 'gold', operation: 'subtract', value: 5 },
          { type: 'modify-variable', variableId: 'potions', operation: 'add', value: 1 },
          { type: 'notify-player', style: 'achievement', message: 'Bought a potion.' },
        ],
        priority: 10,
      },
      {
        id: 'Not enough gold',
        name: 'Too poor',
        trigger: { type: 'action', actionId: 'buy-potion' },
        conditions: [{ variableId: 'gold', operator: 'lt', value: 5 }],
        actions: [{ type: 'notify-player', style: 'warning', message: 'Not enough gold.' }],
      },
    ],
  });

  it('fires exactly one of them per purchase', () => {
    let state = startSession(shop, session).state;
    const fired: string[][] = [];
    const gold: unknown[] = [];
    for (let purchase = 0; purchase < 3; purchase++) {
      const result = dispatchEvents(shop, state, [{ type: 'action', actionId: 'buy-potion' }], session);
      fired.push(result.firedRules.map((rule) => rule.ruleId));
      gold.push(result.state.variables.gold);
      state = result.state;
    }
    expect(fired).toEqual([['Bought a potion'], ['Bought a potion'], ['Not enough gold']]);
    expect(gold).toEqual([5, 0, 0]);
    expect(state.variables.potions).toBe(2);
  });
});

describe('a four-phase clock', () => {
  const phases = ['morning', 'noon', 'evening', 'night'];
  const clock = world({
    variables: [{ id: 'time_of_day', name: 'Time of day', type: 'string', defaultValue: 'morning' }],
    rules: phases.map((phase, index) => ({
      id: `${phase} → ${phases[(index + 1) % 4]}`,
      name: phase,
      trigger: { type: 'every-turn' as const },
      conditions: [{ variableId: 'time_of_day', operator: 'eq' as const, value: phase }],
      actions: [{ type: 'modify-variable' as const, variableId: 'time_of_day', operation: 'set' as const, value: phases[(index + 1) % 4] }],
    })),
  });

  it('advances one phase per turn', () => {
    let state = startSession(clock, session).state;
    const seen: unknown[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const result = runTurn(clock, state, { ...session, userMessage: 'wait', aiReply: 'Time passes.' });
      expect(result.firedRules).toHaveLength(1);
      seen.push(result.state.variables.time_of_day);
      state = result.state;
    }
    expect(seen).toEqual(['noon', 'evening', 'night', 'morning', 'noon']);
  });

  it('reactions on one event also see the state before any rule acted', () => {
    const both = world({
      variables: [{ id: 'lamp', name: 'Lamp', type: 'boolean', defaultValue: false }, { id: 'log', name: 'Log', type: 'string', defaultValue: '' }],
      rules: [
        {
          id: 'light',
          name: 'Light',
          trigger: { type: 'every-turn' },
          actions: [{ type: 'modify-variable', variableId: 'lamp', operation: 'set', value: true }],
        },
      ],
      reactions: [
        {
          id: 'dark',
          name: 'Dark',
          when: { eventType: 'turn:complete' },
          conditions: [{ variableId: 'lamp', operator: 'eq', value: false }],
          then: [{ type: 'set', path: 'log', operation: 'append', value: 'dark;' }],
        },
      ],
    });
    const first = runTurn(both, startSession(both, session).state, { ...session, userMessage: 'a', aiReply: 'b' });
    expect(first.state.variables).toEqual({ lamp: true, log: 'dark;' });
    const second = runTurn(both, first.state, { ...session, userMessage: 'a', aiReply: 'b' });
    expect(second.state.variables.log).toBe('dark;');
  });
});

describe('snake_case ids', () => {
  const snake = world({
    entries: [
      { id: 'status_line', name: 'Status', content: 'HP: {{player_hp}} of {{max_hp}}', section: 'system-presets' },
      {
        id: 'low_hp_hint',
        name: 'Low HP',
        content: 'The player is badly hurt.',
        section: 'post-history',
        conditions: [{ variableId: 'player_hp', operator: 'lt', value: 10 }],
      },
    ],
    variables: [
      { id: 'player_hp', name: 'HP', type: 'number', defaultValue: 12, min: 0, max: 20 },
      { id: 'max_hp', name: 'Max HP', type: 'number', defaultValue: 20 },
      { id: 'bag_items', name: 'Bag', type: 'json', defaultValue: { rope: 1 } },
    ],
    rules: [
      {
        id: 'hurt_badly',
        name: 'Hurt',
        trigger: { type: 'state-change', variableId: 'player_hp' },
        conditions: [{ variableId: 'player_hp', operator: 'lt', value: 10 }],
        actions: [{ type: 'notify-player', style: 'danger', message: 'Only {{player_hp}} HP left!' }],
      },
    ],
    audioTracks: [
      { id: 'battle_theme', name: 'Battle', type: 'bgm', url: 'https://example.test/battle.mp3' },
      { id: 'calm_theme', name: 'Calm', type: 'bgm', url: 'https://example.test/calm.mp3' },
    ],
  });

  it('validate, and work in directives, macros, conditions and audio', () => {
    const turn = runTurn(snake, null, {
      ...session,
      userMessage: 'I charge.',
      aiReply: 'A blow lands. [player_hp: -5] [bag_items.coins: set 3] [audio: battle_theme play chain:calm_theme]',
    });
    expect(turn.displayText).toBe('A blow lands.');
    expect(turn.malformedDirectives).toEqual([]);
    expect(turn.state.variables).toEqual({ player_hp: 7, max_hp: 20, bag_items: { rope: 1, coins: 3 } });
    expect(turn.notifications).toMatchObject([{ style: 'danger', message: 'Only 7 HP left!' }]);
    expect(turn.audioCommands[0]).toMatchObject({ action: 'play', trackId: 'battle_theme', chainTo: 'calm_theme' });
    const prompt = assemblePrompt(snake, turn.state, { ...session, history: [{ role: 'user', content: 'next' }] });
    const contents = prompt.messages.map((message) => message.content);
    expect(contents).toContain('HP: 7 of 20');
    expect(contents).toContain('The player is badly hurt.');
  });

  it('reach the interface as the keys of its variables object', () => {
    const started = startSession(snake, session);
    const state = completeState({ variables: started.state.variables }, { id: 'w', name: 'Test' });
    expect(isSandboxState(state)).toBe(true);
    expect(Object.keys(state.variables)).toEqual(['player_hp', 'max_hp', 'bag_items']);
    expect(state.variables.player_hp).toBe(12);
    expect(validArguments('setVariable', ['player_hp', 5])).toBe(true);
  });
});

describe('prototype keys in paths', () => {
  const validated = world({
    variables: [
      { id: 'inv', name: 'Inventory', type: 'json', defaultValue: { torch: 1 } },
      { id: 'hp', name: 'HP', type: 'number', defaultValue: 10 },
    ],
    reactions: [
      {
        id: 'sneaky',
        name: 'Sneaky',
        when: { eventType: 'turn:complete' },
        then: [
          { type: 'set', path: 'inv.__proto__.polluted', value: 1 },
          { type: 'set', path: 'inv.constructor.prototype.polluted', value: 1 },
          { type: 'set', path: 'inv.rope', value: 2 },
        ],
      },
    ],
  });
  // The validator refuses an entry named "__proto__"; the engine must be safe without it.
  const sneaky = validated.reactions?.[0];
  const bagWorld: WorldDefinition = {
    ...validated,
    reactions: sneaky ? [{ ...sneaky, then: [...sneaky.then.slice(0, 2), { type: 'set', path: '@prompt.entry.__proto__', value: true }, ...sneaky.then.slice(2)] }] : [],
  };

  it('[inv.__proto__.x: set 1] and [inv.constructor.prototype.x: set 1] change nothing, stay as text, and later directives still apply', () => {
    const reply = 'Hm. [inv.__proto__.x: set 1] [inv.constructor.prototype.x: set 1] [inv.prototype: set 1] [hp: -3]';
    const result = runTurn(bagWorld, null, { ...session, userMessage: 'a', aiReply: reply });
    expect(result.displayText).toBe('Hm. [inv.__proto__.x: set 1] [inv.constructor.prototype.x: set 1] [inv.prototype: set 1]');
    expect(result.state.variables.hp).toBe(7);
    expect(result.state.variables.inv).toEqual({ torch: 1, rope: 2 });
    for (const value of Object.values(result.state.variables)) {
      if (typeof value === 'object' && value !== null) {
        for (const key of ['__proto__', 'constructor', 'prototype']) expect(Object.hasOwn(value, key)).toBe(false);
        expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      }
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(result.state.entryEnabled, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(result.state.entryEnabled)).toBe(Object.prototype);
    expect(result.warnings.map((warning) => warning.message)).toEqual([
      'inv.__proto__.polluted: "__proto__.polluted" names a prototype key; nothing was changed',
      'inv.constructor.prototype.polluted: "constructor.prototype.polluted" names a prototype key; nothing was changed',
      '"@prompt.entry.__proto__" names a prototype key; nothing was changed',
    ]);
  });

  it('a merged object loses its own __proto__ key', () => {
    const result = runTurn(bagWorld, null, { ...session, userMessage: 'a', aiReply: '[inv: merge {"__proto__": {"x": 1}, "lamp": 1}]' });
    expect(result.state.variables.inv).toEqual({ torch: 1, lamp: 1, rope: 2 });
    expect(Object.hasOwn(result.state.variables.inv as object, '__proto__')).toBe(false);
  });
});

describe('seed values read exactly', () => {
  it('a world without an id gets a UUID; one with an id keeps it', () => {
    const first = world({});
    expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(world({}).id).not.toBe(first.id);
    expect(world({ id: first.id }).id).toBe(first.id);
    expect(validateWorld({ version: '20.0.0', name: 'x', id: 'w:1' })).toMatchObject({ ok: false, issues: [{ path: 'id', message: 'must be a UUID' }] });
  });

  it('lorebookScanDepth counts turns: the default 2 scans the last two exchanges plus the new message', () => {
    const lore = world({
      entries: [{ id: 'dragon', name: 'Dragon', content: 'Dragons hoard gold.', section: 'chat-history', keywords: ['dragon'] }],
    });
    const sent = (history: { role: 'user' | 'assistant'; content: string }[]) =>
      assemblePrompt(lore, null, { ...session, history }).messages.some((message) => message.content === 'Dragons hoard gold.');
    const exchanges = (first: string) => [
      { role: 'user' as const, content: first },
      { role: 'assistant' as const, content: 'ok' },
      { role: 'user' as const, content: 'two' },
      { role: 'assistant' as const, content: 'ok' },
      { role: 'user' as const, content: 'now' },
    ];
    expect(sent(exchanges('a dragon'))).toBe(true);
    expect(sent([{ role: 'user', content: 'a dragon' }, { role: 'assistant', content: 'ok' }, ...exchanges('zero')])).toBe(false);
    const shallow = { ...lore, settings: { ...lore.settings, lorebookScanDepth: 0 } };
    expect(assemblePrompt(shallow, null, { ...session, history: [{ role: 'user', content: 'dragon?' }] }).messages.some((m) => m.content === 'Dragons hoard gold.')).toBe(true);
    expect(
      assemblePrompt(shallow, null, { ...session, history: [{ role: 'user', content: 'dragon?' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'now' }] }).messages.some(
        (m) => m.content === 'Dragons hoard gold.',
      ),
    ).toBe(false);
  });
});
