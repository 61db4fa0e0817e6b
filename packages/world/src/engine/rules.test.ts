import { describe, expect, it } from 'vitest';
import { MAX_RULE_CHAIN_DEPTH } from './rules.ts';
import type { WorldState } from './state.ts';
import { dispatchEvents, runTurn, startSession, type TurnResult } from './turn.ts';
import type { EngineRule, EngineRuleAction, EngineRuleTrigger, EngineWorld } from './world-types.ts';

const NOW = '2026-05-01T12:00:00Z';

function worldWith(rules: EngineRule[], extra: Partial<EngineWorld> = {}): EngineWorld {
  return {
    name: 'Rules',
    entries: [{ id: 'lore', content: 'lore', section: 'chat-history', keywords: ['lore'] }],
    variables: [
      { id: 'hp', type: 'number', defaultValue: 50, min: 0, max: 100 },
      { id: 'score', type: 'number', defaultValue: 0 },
      { id: 'flag', type: 'boolean', defaultValue: false },
      { id: 'bag', type: 'json', defaultValue: { items: [] } },
    ],
    audioTracks: [{ id: 'fanfare', type: 'sfx', volume: 0.8 }],
    rules,
    ...extra,
  };
}

function rule(id: string, trigger: EngineRuleTrigger, actions: EngineRuleAction[] = [{ type: 'modify-variable', variableId: 'score', operation: 'add', value: 1 }], extra: Partial<EngineRule> = {}): EngineRule {
  return { id, name: id, trigger, actions, ...extra };
}

function play(world: EngineWorld, state: Partial<WorldState> | null, userMessage: string, aiReply: string): TurnResult {
  return runTurn(world, state, { userMessage, aiReply, now: NOW, seed: 7, sessionId: 'session-a' });
}

describe('every trigger type (table)', () => {
  it.each([
    ['keyword: player message contains one', { type: 'keyword', keywords: ['attack'] }, null, 'I attack', 'ok', true],
    ['keyword: "contains", case-insensitive (seed 002 §2.6)', { type: 'keyword', keywords: ['attack'] }, null, 'Counterattacks!', 'ok', true],
    ['ai-keyword: "dragon" fires on "Dragons"', { type: 'ai-keyword', keywords: ['dragon'] }, null, 'look', 'Dragons circle above.', true],
    ['keyword: whole words only when the trigger asks', { type: 'keyword', keywords: ['attack'], matchWholeWords: true }, null, 'counterattacks', 'ok', false],
    ['keyword: only the player message counts', { type: 'keyword', keywords: ['attack'] }, null, 'hello', 'I attack you', false],
    ['ai-keyword: AI reply contains one', { type: 'ai-keyword', keywords: ['treasure'] }, null, 'look', 'You see treasure.', true],
    ['ai-keyword: not from the player', { type: 'ai-keyword', keywords: ['treasure'] }, null, 'treasure?', 'No.', false],
    ['every-turn', { type: 'every-turn' }, null, 'a', 'b', true],
    ['session-start on the first turn when startSession did not run', { type: 'session-start' }, null, 'hi', 'hello', true],
    ['session-start not again once the session started', { type: 'session-start' }, { turnCount: 3, sessionStarted: true }, 'hi', 'hello', false],
    ['turn-count atTurn', { type: 'turn-count', atTurn: 4 }, { turnCount: 3 }, 'a', 'b', true],
    ['turn-count atTurn, other turn', { type: 'turn-count', atTurn: 4 }, { turnCount: 4 }, 'a', 'b', false],
    ['turn-count everyNTurns', { type: 'turn-count', everyNTurns: 3 }, { turnCount: 5 }, 'a', 'b', true],
    ['turn-count everyNTurns, off turn', { type: 'turn-count', everyNTurns: 3 }, { turnCount: 6 }, 'a', 'b', false],
    ['state-change of the named variable', { type: 'state-change', variableId: 'hp' }, null, 'a', 'Hit. [hp: -5]', true],
    ['state-change of another variable', { type: 'state-change', variableId: 'hp' }, null, 'a', '[flag: toggle]', false],
    ['state-change of any variable', { type: 'state-change' }, null, 'a', '[flag: toggle]', true],
    ['variable-crossed drops-below', { type: 'variable-crossed', variableId: 'hp', direction: 'drops-below', threshold: 20 }, null, 'a', '[hp: -40]', true],
    ['variable-crossed drops-below, stays above', { type: 'variable-crossed', variableId: 'hp', direction: 'drops-below', threshold: 20 }, null, 'a', '[hp: -10]', false],
    ['variable-crossed rises-above', { type: 'variable-crossed', variableId: 'hp', direction: 'rises-above', threshold: 60 }, null, 'a', '[hp: +20]', true],
    [
      'variable-crossed rises-above when already above',
      { type: 'variable-crossed', variableId: 'hp', direction: 'rises-above', threshold: 60 },
      { variables: { hp: 70 } },
      'a',
      '[hp: +5]',
      false,
    ],
    ['manual never fires by itself', { type: 'manual' }, null, 'a', '[hp: -1]', false],
    ['action never fires from a turn', { type: 'action', actionId: 'open-door' }, null, 'open-door', 'b', false],
  ] as const)('%s', (_name, trigger, state, user, reply, fires) => {
    const result = play(worldWith([rule('r', trigger as EngineRuleTrigger)]), state as Partial<WorldState> | null, user, reply);
    expect(result.firedRules.map((fired) => fired.ruleId)).toEqual(fires ? ['r'] : []);
    expect(result.state.variables.score).toBe(fires ? 1 : 0);
  });

  it('startSession fires session-start rules so their effects reach the first prompt, and turn 1 does not repeat them', () => {
    const world = worldWith([rule('opening', { type: 'session-start' }, [{ type: 'send-context', message: 'First scene.' }, { type: 'play-audio', trackId: 'fanfare' }])]);
    const session = startSession(world, { now: NOW });
    expect(session.firedRules.map((fired) => fired.ruleId)).toEqual(['opening']);
    expect(session.pendingContext).toMatchObject([{ content: 'First scene.' }]);
    expect(session.audioCommands).toMatchObject([{ action: 'play', trackId: 'fanfare' }]);
    expect(session.state.sessionStarted).toBe(true);
    const first = play(world, session.state, 'hi', 'hello');
    expect(first.firedRules).toEqual([]);
    expect(first.events.map((event) => event.type)).toEqual(['message:user', 'message:ai', 'turn:complete']);
  });

  it('action trigger fires when the interface executes that action', () => {
    const world = worldWith([rule('door', { type: 'action', actionId: 'open-door' }), rule('other', { type: 'action', actionId: 'other' })]);
    const result = dispatchEvents(world, null, [{ type: 'action', actionId: 'open-door' }], { now: NOW });
    expect(result.firedRules.map((fired) => fired.ruleId)).toEqual(['door']);
    expect(result.state.variables.score).toBe(1);
    expect(result.state.turnCount).toBe(0);
  });
});

describe('every action type (table)', () => {
  it.each<[string, EngineRuleAction, (result: TurnResult) => void]>([
    [
      'modify-variable with an operation',
      { type: 'modify-variable', variableId: 'hp', operation: 'subtract', value: 80 },
      (result) => expect(result.state.variables.hp).toBe(0),
    ],
    [
      'modify-variable on a JSON path',
      { type: 'modify-variable', variableId: 'bag.items', operation: 'push', value: { name: 'key' } },
      (result) => expect(result.state.variables.bag).toEqual({ items: [{ name: 'key' }] }),
    ],
    [
      'inject-directive (non-persistent: one turn)',
      { type: 'inject-directive', directiveId: 'fog', content: 'Fog rolls in.', position: 'auto' },
      (result) => expect(result.state.directives).toMatchObject([{ id: 'fog', content: 'Fog rolls in.', position: 'auto', remainingTurns: 1 }]),
    ],
    [
      'inject-directive persistent',
      { type: 'inject-directive', directiveId: 'curse', content: 'Cursed.', position: 'bottom', persistent: true },
      (result) => expect(result.state.directives).toMatchObject([{ id: 'curse', position: 'bottom', remainingTurns: null }]),
    ],
    [
      'inject-directive with a duration',
      { type: 'inject-directive', directiveId: 'rain', content: 'Rain.', position: 'depth', depth: 2, duration: 3 },
      (result) => expect(result.state.directives).toMatchObject([{ id: 'rain', position: 'depth', depth: 2, remainingTurns: 3 }]),
    ],
    [
      'notify-player with style and macros',
      { type: 'notify-player', style: 'achievement', message: 'Level up, {{user}}! HP {{hp}}' },
      (result) => expect(result.notifications).toEqual([{ style: 'achievement', message: 'Level up, Player! HP 50', source: 'rule:r' }]),
    ],
    [
      'play-audio',
      { type: 'play-audio', trackId: 'fanfare', action: 'play' },
      (result) => expect(result.audioCommands).toEqual([{ action: 'play', trackId: 'fanfare', trackType: 'sfx', volume: 0.8, source: 'rule:r' }]),
    ],
    [
      'toggle-entry',
      { type: 'toggle-entry', entryId: 'lore', enabled: false },
      (result) => expect(result.state.entryEnabled).toEqual({ lore: false }),
    ],
    [
      'toggle-rule',
      { type: 'toggle-rule', ruleId: 'other', enabled: false },
      (result) => expect(result.state.ruleEnabled).toEqual({ other: false }),
    ],
    [
      'send-context (one-shot, next turn)',
      { type: 'send-context', message: 'The guard remembers {{user}}.', role: 'user' },
      (result) => expect(result.pendingContext).toEqual([{ role: 'user', content: 'The guard remembers Player.', source: 'rule:r' }]),
    ],
    [
      'fire-rule (extension)',
      { type: 'fire-rule', ruleId: 'other' },
      (result) => expect(result.firedRules).toMatchObject([{ ruleId: 'r' }, { ruleId: 'other', firedBy: 'fire-rule', chainDepth: 1 }]),
    ],
  ])('%s', (_name, action, check) => {
    const world = worldWith([rule('r', { type: 'every-turn' }, [action]), rule('other', { type: 'manual' })]);
    check(play(world, null, 'hello', 'reply'));
  });

  it('an injected directive lasts one turn; one with duration N lasts N; persistent until removed', () => {
    const world = worldWith([
      rule('inject', { type: 'keyword', keywords: ['start'] }, [
        { type: 'inject-directive', directiveId: 'once', content: 'once', position: 'auto' },
        { type: 'inject-directive', directiveId: 'twice', content: 'twice', position: 'auto', duration: 2 },
        { type: 'inject-directive', directiveId: 'always', content: 'always', position: 'auto', persistent: true },
      ]),
      rule('remove', { type: 'keyword', keywords: ['stop'] }, [{ type: 'remove-directive', directiveId: 'always' }]),
    ]);
    const ids = (state: WorldState) => state.directives.map((directive) => directive.id);
    const first = play(world, null, 'start', 'ok');
    expect(ids(first.state)).toEqual(['once', 'twice', 'always']);
    const second = play(world, first.state, 'go on', 'ok');
    expect(ids(second.state)).toEqual(['twice', 'always']);
    const third = play(world, second.state, 'go on', 'ok');
    expect(ids(third.state)).toEqual(['always']);
    const fourth = play(world, third.state, 'stop', 'ok');
    expect(ids(fourth.state)).toEqual([]);
  });

  it('send-context is one-shot: gone after the next turn', () => {
    const world = worldWith([rule('r', { type: 'keyword', keywords: ['whisper'] }, [{ type: 'send-context', message: 'psst' }])]);
    const first = play(world, null, 'whisper', 'ok');
    expect(first.pendingContext).toHaveLength(1);
    expect(play(world, first.state, 'next', 'ok').pendingContext).toEqual([]);
  });

  it('a disabled rule does not fire until another rule enables it', () => {
    const world = worldWith([
      rule('sleeper', { type: 'every-turn' }, undefined, { enabled: false }),
      rule('waker', { type: 'keyword', keywords: ['wake'] }, [{ type: 'toggle-rule', ruleId: 'sleeper', enabled: true }], { priority: 5 }),
    ]);
    const first = play(world, null, 'sleep', 'ok');
    expect(first.firedRules).toEqual([]);
    const second = play(world, first.state, 'wake', 'ok');
    expect(second.firedRules.map((fired) => fired.ruleId)).toEqual(['waker', 'sleeper']);
  });
});

describe('priority, cooldown, maxFireCount', () => {
  it('higher priority fires first, ties in definition order', () => {
    const world = worldWith([
      rule('low', { type: 'every-turn' }, [], { priority: 1 }),
      rule('tie-a', { type: 'every-turn' }, [], { priority: 5 }),
      rule('high', { type: 'every-turn' }, [], { priority: 10 }),
      rule('tie-b', { type: 'every-turn' }, [], { priority: 5 }),
      rule('default', { type: 'every-turn' }, []),
    ]);
    expect(play(world, null, 'a', 'b').firedRules.map((fired) => fired.ruleId)).toEqual(['high', 'tie-a', 'tie-b', 'low', 'default']);
  });

  it('rules on one event see the state before any of them acted; the next turn sees the result', () => {
    const world = worldWith([
      rule('needs-flag', { type: 'every-turn' }, undefined, { conditions: [{ variableId: 'flag', operator: 'eq', value: true }] }),
      rule('sets-flag', { type: 'every-turn' }, [{ type: 'modify-variable', variableId: 'flag', operation: 'set', value: true }], { priority: 1 }),
    ]);
    const first = play(world, null, 'a', 'b');
    expect(first.state.variables).toMatchObject({ flag: true, score: 0 });
    expect(first.firedRules.map((fired) => fired.ruleId)).toEqual(['sets-flag']);
    expect(play(world, first.state, 'a', 'b').state.variables.score).toBe(1);
  });

  it.each([
    ['cooldown 0 fires every turn', 0, [1, 2, 3, 4, 5, 6]],
    ['cooldown 2 fires every other turn', 2, [1, 3, 5]],
    ['cooldown 3', 3, [1, 4]],
  ])('%s', (_name, cooldownTurns, expectedTurns) => {
    const world = worldWith([rule('r', { type: 'every-turn' }, undefined, { cooldownTurns })]);
    let state: WorldState | null = null;
    const firedOn: number[] = [];
    for (let index = 1; index <= 6; index++) {
      const result: TurnResult = play(world, state, 'a', 'b');
      if (result.firedRules.length > 0) firedOn.push(index);
      state = result.state;
    }
    expect(firedOn).toEqual(expectedTurns);
  });

  it.each([
    [1, 1],
    [3, 3],
    [null, 6],
  ])('maxFireCount %s fires %i times over six turns', (maxFireCount, times) => {
    const world = worldWith([rule('r', { type: 'every-turn' }, undefined, { maxFireCount })]);
    let state: WorldState | null = null;
    for (let index = 1; index <= 6; index++) state = play(world, state, 'a', 'b').state;
    expect(state?.variables.score).toBe(times);
    expect(state?.rules.r?.fireCount).toBe(times);
  });

  it('conditions with any/all gate rules', () => {
    const conditions = [
      { variableId: 'hp', operator: 'lt' as const, value: 10 },
      { variableId: 'flag', operator: 'eq' as const, value: true },
    ];
    const world = worldWith([
      rule('all', { type: 'every-turn' }, [], { conditions, conditionLogic: 'all' }),
      rule('any', { type: 'every-turn' }, [], { conditions, conditionLogic: 'any' }),
    ]);
    expect(play(world, { variables: { hp: 5, flag: false } }, 'a', 'b').firedRules.map((fired) => fired.ruleId)).toEqual(['any']);
    expect(play(world, { variables: { hp: 5, flag: true } }, 'a', 'b').firedRules.map((fired) => fired.ruleId)).toEqual(['all', 'any']);
  });
});

describe('fire-rule chains', () => {
  it(`chains stop at depth ${MAX_RULE_CHAIN_DEPTH} with a warning`, () => {
    const rules: EngineRule[] = [rule('link-0', { type: 'every-turn' }, [{ type: 'fire-rule', ruleId: 'link-1' }])];
    for (let index = 1; index <= MAX_RULE_CHAIN_DEPTH + 3; index++) {
      rules.push(rule(`link-${index}`, { type: 'manual' }, [{ type: 'fire-rule', ruleId: `link-${index + 1}` }]));
    }
    const result = play(worldWith(rules), null, 'a', 'b');
    expect(result.firedRules).toHaveLength(MAX_RULE_CHAIN_DEPTH + 1);
    expect(result.firedRules.at(-1)?.chainDepth).toBe(MAX_RULE_CHAIN_DEPTH);
    expect(result.warnings.some((warning) => warning.message.includes('chain deeper'))).toBe(true);
  });

  it('a rule firing itself does not loop: each rule fires at most once per turn', () => {
    const world = worldWith([rule('self', { type: 'every-turn' }, [{ type: 'modify-variable', variableId: 'score', operation: 'add', value: 1 }, { type: 'fire-rule', ruleId: 'self' }])]);
    const result = play(world, null, 'a', 'b');
    expect(result.firedRules).toHaveLength(1);
    expect(result.state.variables.score).toBe(1);
  });

  it('two state-change rules feeding each other terminate', () => {
    const world = worldWith([
      rule('ping', { type: 'state-change', variableId: 'hp' }, [{ type: 'modify-variable', variableId: 'score', operation: 'add', value: 1 }]),
      rule('pong', { type: 'state-change', variableId: 'score' }, [{ type: 'modify-variable', variableId: 'hp', operation: 'add', value: 1 }]),
    ]);
    const result = play(world, null, 'a', '[hp: -10]');
    expect(result.firedRules.map((fired) => fired.ruleId)).toEqual(['ping', 'pong']);
    expect(result.state.variables).toMatchObject({ hp: 41, score: 1 });
  });
});
