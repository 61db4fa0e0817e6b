import { describe, expect, it } from 'vitest';
import { dispatchEvents, MAX_EVENTS_PER_TURN, runTurn, type TurnResult } from './turn.ts';
import type { EngineReaction, EngineReactionEffect, EngineWorld } from './world-types.ts';

const NOW = '2026-05-01T12:00:00Z';

function reaction(id: string, when: EngineReaction['when'], effects: EngineReactionEffect[], extra: Partial<EngineReaction> = {}): EngineReaction {
  // Note: the seed (§2.7) names a reaction's effect list `then`
  return { id, when, then: effects, ...extra };
}

function worldWith(reactions: EngineReaction[], extra: Partial<EngineWorld> = {}): EngineWorld {
  return {
    name: 'Reactions',
    entries: [{ id: 'garden', content: 'garden', section: 'chat-history', keywords: ['garden'] }],
    variables: [
      { id: 'affection', type: 'number', defaultValue: 10, min: 0, max: 100 },
      { id: 'zone', type: 'string', defaultValue: 'town' },
      { id: 'log', type: 'json', defaultValue: [] },
    ],
    audioTracks: [
      { id: 'birds', type: 'ambient' },
      { id: 'waltz', type: 'bgm' },
      { id: 'chime', type: 'sfx' },
    ],
    rules: [],
    reactions,
    ...extra,
  };
}

/** A turn of a session begun with startSession. */
function turn(world: EngineWorld, user = 'hello', reply = 'hi'): TurnResult {
  return runTurn(world, { sessionStarted: true }, { userMessage: user, aiReply: reply, now: NOW, seed: 3, sessionId: 's' });
}

function logEvent(eventType: string, extra: Record<string, unknown> = {}): EngineReaction {
  return reaction(`log-${eventType.replace(/[^a-z]/g, '-')}`, { eventType, ...extra }, [{ type: 'set', path: 'log', operation: 'push', value: eventType }]);
}

describe('event order after an AI reply', () => {
  it('message:user, message:ai, turn:complete, then state:changed per changed variable', () => {
    const world = worldWith([
      logEvent('state:changed', { variableId: 'zone' }),
      { ...logEvent('state:changed', { variableId: 'affection' }), id: 'log-affection' },
      logEvent('turn:complete'),
      logEvent('message:ai'),
      logEvent('message:user'),
    ]);
    const result = turn(world, 'hi', 'Blush. [affection: +5] [zone: garden]');
    // the reactions' own pushes onto `log` raise state:changed for log, which nothing matches
    expect(result.events.map((event) => (event.type === 'state:changed' ? `state:changed:${String(event.variableId)}` : event.type))).toEqual([
      'message:user',
      'message:ai',
      'turn:complete',
      'state:changed:affection',
      'state:changed:zone',
      'state:changed:log',
      'state:changed:log',
      'state:changed:log',
      'state:changed:log',
      'state:changed:log',
    ]);
    expect(result.state.variables.log).toEqual(['message:user', 'message:ai', 'turn:complete', 'state:changed', 'state:changed']);
    expect(result.events[3]).toEqual({ type: 'state:changed', variableId: 'affection', oldValue: 10, newValue: 15 });
    expect(result.events[4]).toEqual({ type: 'state:changed', variableId: 'zone', oldValue: 'town', newValue: 'garden' });
    expect(result.events[2]).toEqual({ type: 'turn:complete', turnCount: 1 });
  });

  it('without startSession, the first turn starts with session:start', () => {
    const world = worldWith([reaction('opening', { eventType: 'session:start' }, [{ type: 'set', path: 'zone', value: 'door' }])]);
    const result = runTurn(world, null, { userMessage: 'a', aiReply: 'b', now: NOW });
    expect(result.events.map((event) => event.type)).toEqual(['session:start', 'message:user', 'message:ai', 'turn:complete', 'state:changed']);
    expect(result.state.variables.zone).toBe('door');
  });

  it('within one event, rules fire before reactions', () => {
    const world = worldWith([reaction('react', { eventType: 'turn:complete' }, [{ type: 'set', path: 'log', operation: 'push', value: 'reaction' }])], {
      rules: [{ id: 'rule', trigger: { type: 'every-turn' }, actions: [{ type: 'modify-variable', variableId: 'log', operation: 'push', value: 'rule' }] }],
    });
    expect(turn(world).state.variables.log).toEqual(['rule', 'reaction']);
  });
});

describe('reaction matching', () => {
  it('custom event types pass through: spatial:zone-enter with a zone', () => {
    const world = worldWith([
      reaction('enter-garden', { eventType: 'spatial:zone-enter', zone: 'garden' }, [{ type: 'set', path: 'zone', value: 'garden' }]),
      reaction('enter-cave', { eventType: 'spatial:zone-enter', zone: 'cave' }, [{ type: 'set', path: 'zone', value: 'cave' }]),
      reaction('ambience', { eventType: 'spatial:ambience-changed' }, [{ type: 'set', path: '@audio.ambient', value: 'birds' }]),
    ]);
    const result = dispatchEvents(
      world,
      null,
      [
        { type: 'spatial:zone-enter', zone: 'garden' },
        { type: 'spatial:ambience-changed', ambience: 'spring' },
      ],
      { now: NOW },
    );
    expect(result.state.variables.zone).toBe('garden');
    expect(result.firedReactions).toEqual([
      { reactionId: 'enter-garden', eventType: 'spatial:zone-enter' },
      { reactionId: 'ambience', eventType: 'spatial:ambience-changed' },
    ]);
    expect(result.audioCommands).toMatchObject([{ action: 'play', trackId: 'birds', trackType: 'ambient' }]);
    expect(result.events.map((event) => event.type)).toEqual(['spatial:zone-enter', 'spatial:ambience-changed', 'state:changed']);
  });

  it('state:changed reactions match on variableId and honour conditions', () => {
    const world = worldWith([
      reaction('smitten', { eventType: 'state:changed', variableId: 'affection' }, [{ type: 'set', path: '@ui.notification', value: { message: 'Smitten!', style: 'achievement' } }], {
        conditions: [{ variableId: 'affection', operator: 'gte', value: 50 }],
      }),
    ]);
    expect(turn(world, 'hi', '[affection: +10]').notifications).toEqual([]);
    expect(turn(world, 'hi', '[affection: +45]').notifications).toEqual([{ style: 'achievement', message: 'Smitten!', source: 'reaction:smitten' }]);
  });

  it('emit queues a new event that other reactions see, in order', () => {
    const world = worldWith([
      reaction('emitter', { eventType: 'message:user' }, [{ type: 'emit', event: { type: 'story:bell', times: 3 } }]),
      reaction('listener', { eventType: 'story:bell', times: 3 }, [{ type: 'set', path: 'affection', operation: 'add', value: 1 }]),
    ]);
    const result = turn(world);
    expect(result.events.map((event) => event.type)).toEqual(['message:user', 'message:ai', 'turn:complete', 'story:bell', 'state:changed']);
    expect(result.state.variables.affection).toBe(11);
  });

  it(`reactions emitting each other stop after ${MAX_EVENTS_PER_TURN} events with a warning`, () => {
    const world = worldWith([
      reaction('a', { eventType: 'loop:a' }, [{ type: 'emit', event: { type: 'loop:b' } }]),
      reaction('b', { eventType: 'loop:b' }, [{ type: 'emit', event: { type: 'loop:a' } }]),
    ]);
    const result = dispatchEvents(world, null, [{ type: 'loop:a' }], { now: NOW });
    expect(result.events).toHaveLength(MAX_EVENTS_PER_TURN);
    expect(result.warnings.at(-1)?.message).toContain(`more than ${MAX_EVENTS_PER_TURN} events`);
  });
});

describe('set effects on every system path (table)', () => {
  it.each<[string, EngineReactionEffect, (result: TurnResult) => void]>([
    ['variable with operation', { type: 'set', path: 'affection', operation: 'multiply', value: 3 }, (result) => expect(result.state.variables.affection).toBe(30)],
    ['variable, plain set', { type: 'set', path: 'zone', value: 'lake' }, (result) => expect(result.state.variables.zone).toBe('lake')],
    ['@audio.bgm', { type: 'set', path: '@audio.bgm', value: 'waltz' }, (result) => expect(result.audioCommands).toMatchObject([{ action: 'play', trackId: 'waltz', trackType: 'bgm' }])],
    ['@audio.sfx', { type: 'set', path: '@audio.sfx', value: 'chime' }, (result) => expect(result.audioCommands).toMatchObject([{ action: 'play', trackId: 'chime', trackType: 'sfx' }])],
    ['@audio.ambient', { type: 'set', path: '@audio.ambient', value: 'birds' }, (result) => expect(result.audioCommands).toMatchObject([{ action: 'play', trackId: 'birds' }])],
    ['@audio.stop', { type: 'set', path: '@audio.stop', value: 'waltz' }, (result) => expect(result.audioCommands).toMatchObject([{ action: 'stop', trackId: 'waltz' }])],
    [
      '@prompt.directive.<id> injects',
      { type: 'set', path: '@prompt.directive.blush', value: 'She blushes at {{user}}.' },
      (result) => expect(result.state.directives).toMatchObject([{ id: 'blush', content: 'She blushes at Player.', position: 'auto', remainingTurns: null }]),
    ],
    ['@prompt.entry.<id>', { type: 'set', path: '@prompt.entry.garden', value: false }, (result) => expect(result.state.entryEnabled).toEqual({ garden: false })],
    [
      '@prompt.context',
      { type: 'set', path: '@prompt.context', value: 'It is raining.' },
      (result) => expect(result.pendingContext).toEqual([{ role: 'system', content: 'It is raining.', source: 'reaction:r' }]),
    ],
    ['@rules.disabled.<id>', { type: 'set', path: '@rules.disabled.some-rule', value: true }, (result) => expect(result.state.ruleEnabled).toEqual({ 'some-rule': false })],
    ['@ui.notification', { type: 'set', path: '@ui.notification', value: 'Hello {{user}}' }, (result) => expect(result.notifications).toMatchObject([{ style: 'info', message: 'Hello Player' }])],
    ['@ai.request', { type: 'set', path: '@ai.request', value: { prompt: 'continue' } }, (result) => expect(result.aiRequests).toEqual([{ source: 'reaction:r', value: { prompt: 'continue' } }])],
    [
      '@ai.context',
      { type: 'set', path: '@ai.context', value: { message: 'Be shy.', role: 'user' } },
      (result) => expect(result.pendingContext).toEqual([{ role: 'user', content: 'Be shy.', source: 'reaction:r' }]),
    ],
    ['unknown system path is a warning', { type: 'set', path: '@nowhere.x', value: 1 }, (result) => expect(result.warnings[0]?.message).toContain('@nowhere.x')],
  ])('%s', (_name, effect, check) => {
    check(turn(worldWith([reaction('r', { eventType: 'turn:complete' }, [effect])])));
  });

  it('@prompt.directive.<id> with null removes it', () => {
    const world = worldWith([
      reaction('add', { eventType: 'message:user' }, [{ type: 'set', path: '@prompt.directive.mood', value: 'x' }]),
      reaction('remove', { eventType: 'turn:complete' }, [{ type: 'set', path: '@prompt.directive.mood', value: null }]),
    ]);
    expect(turn(world).state.directives).toEqual([]);
  });
});
