import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateWorld, type WorldDefinition } from '../schema/index.ts';
import { assemblePrompt } from './prompt.ts';
import type { WorldState } from './state.ts';
import { dispatchEvents, runTurn, startSession, type TurnResult } from './turn.ts';

const SAMPLES = join(import.meta.dirname, '../../samples');
const options = { now: '2026-05-01T12:00:00Z', seed: 1, sessionId: 'sample' };

function load(name: string): WorldDefinition {
  const result = validateWorld(JSON.parse(readFileSync(join(SAMPLES, `${name}.json`), 'utf8')));
  if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.issues)}`);
  return result.world;
}

/** One full turn as the service runs it: prompt (for skipped entries), then the reply. */
function play(world: WorldDefinition, state: WorldState, userMessage: string, aiReply: string): TurnResult {
  const prompt = assemblePrompt(world, state, { ...options, history: [{ role: 'user', content: userMessage }] });
  return runTurn(world, state, { ...options, userMessage, aiReply, skippedEntries: prompt.skippedEntries });
}

describe('sample: The Ashen Depths (dungeon crawler)', () => {
  const world = load('ashen-depths');

  it('clamps numbers, edits the JSON inventory, fires rules and switches music', () => {
    const session = startSession(world, options);
    expect(session.firedRules.map((fired) => fired.ruleId)).toEqual(['opening']);
    expect(session.audioCommands.map((command) => command.action === 'play' && command.trackId)).toEqual(['dungeon-ambience', 'explore-theme']);

    const first = play(world, session.state, 'I attack the goblin and open the chest', 'The goblin strikes! [hp: -175] [gold: +15] [inventory.items: push "goblin-ear"] [Note: ouch]');
    expect(first.displayText).toBe('The goblin strikes! [Note: ouch]');
    expect(first.state.variables.hp).toBe(0);
    expect((first.state.variables.inventory as { items: string[] }).items).toContain('goblin-ear');
    expect(first.state.variables.gold).toBe(30);
    expect(first.firedRules.map((fired) => fired.ruleId)).toEqual(['treasure-bonus', 'low-hp-warning']);
    expect(first.notifications[0]?.style).toBe('danger');
    expect(first.state.directives.map((directive) => directive.id)).toEqual(['wounded']);
    expect(first.audioCommands.filter((command) => command.source.startsWith('conditional-bgm')).map((command) => `${command.action}:${'trackId' in command ? command.trackId : ''}`)).toEqual([
      'stop:explore-theme',
      'play:danger-theme',
    ]);

    const prompt = assemblePrompt(world, first.state, { ...options, history: [{ role: 'user', content: 'I rest' }] });
    expect(prompt.messages.some((message) => message.source === 'directive:wounded' && message.step === 1)).toBe(true);

    // treasure-bonus has cooldownTurns 2: not on turn 2, again on turn 3
    const second = play(world, first.state, 'I rest and count the loot', 'You recover. [hp: +60]');
    expect(second.firedRules.map((fired) => fired.ruleId)).toContain('recovered');
    expect(second.firedRules.map((fired) => fired.ruleId)).not.toContain('treasure-bonus');
    expect(second.state.directives).toEqual([]);
    // fallback "previous" resumes what played before the danger music
    expect(second.audioCommands.map((command) => `${command.action}:${'trackId' in command ? command.trackId : ''}`)).toEqual(['stop:danger-theme', 'play:explore-theme']);

    const third = play(world, second.state, 'Treasure!', 'More gold. [gold: +1]');
    expect(third.firedRules.map((fired) => fired.ruleId)).toContain('treasure-bonus');
  });

  it('the drink-potion interface action and the dragon-lair zone event run between turns', () => {
    const { state } = startSession(world, options);
    const wounded = { ...state, variables: { ...state.variables, hp: 40 } };
    const potion = dispatchEvents(world, wounded, [{ type: 'action', actionId: 'drink-potion' }], options);
    // healing past 50 also crosses the "recovered" threshold
    expect(potion.firedRules.map((fired) => fired.ruleId)).toEqual(['drink-potion', 'recovered']);
    expect(potion.state.variables.hp).toBeGreaterThan(40);
    const enter = [{ type: 'spatial:zone-enter', zone: 'dragon-lair' }];
    // the reaction needs depth-level 8 or more
    expect(dispatchEvents(world, state, enter, options).firedReactions).toEqual([]);
    const deep = { ...state, variables: { ...state.variables, 'depth-level': 9 } };
    const lair = dispatchEvents(world, deep, enter, options);
    expect(lair.firedReactions.map((fired) => fired.reactionId)).toEqual(['boss-room-enter']);
    expect(lair.state.variables['last-room']).toBe("Ossgrim's lair");
    expect(lair.state.directives).toMatchObject([{ id: 'lair', position: 'before_char' }]);
    expect(lair.audioCommands[0]).toMatchObject({ action: 'play', trackId: 'boss-theme' });
  });
});

describe('sample: Rain on Willow Street (relationship story)', () => {
  const world = load('willow-street');

  it('greets, reacts to affection milestones, and turns on the tender music', () => {
    const session = startSession(world, options);
    expect(session.greetings[0]).toContain('Mina');
    expect(session.state.variables.mood).toBe('cheerful');
    const first = play(world, session.state, 'I brought you coffee. I promise to visit again.', 'Mina smiles. [affection: +65] [mood: happy] [memories: push "coffee"]');
    expect(first.firedReactions.map((fired) => fired.reactionId)).toEqual(['crush-milestone', 'milestone-effects']);
    expect(first.notifications).toMatchObject([{ style: 'achievement' }]);
    expect(first.audioCommands.map((command) => command.action)).toEqual(['play', 'playlist-stop', 'play']);
    expect(first.state.directives.map((directive) => directive.id)).toEqual(['blushing']);
    const second = play(world, first.state, 'Do you remember the cafe?', 'She laughs. Jun waves from the door. [trust: +5]');
    expect(second.firedRules.map((fired) => fired.ruleId)).toEqual(['meets-jun']);
    expect(second.state.variables['met-family']).toBe(true);
  });

  it('conditional entries apply only while their conditions hold, and say why not', () => {
    const { state } = startSession(world, options);
    const text = 'I am sorry, I love you and remember your family';
    const prompt = (variables: Record<string, unknown>) =>
      assemblePrompt(world, { ...state, variables: { ...state.variables, ...variables } }, { ...options, history: [{ role: 'user', content: text }] });
    const sources = (result: ReturnType<typeof prompt>) => result.messages.map((message) => message.source);
    const low = prompt({ affection: -100, trust: 0 });
    expect(sources(low)).toContain('entry:cold-shoulder');
    expect(sources(low)).not.toContain('entry:family-secret');
    expect(low.skippedEntries).toMatchObject([{ entryId: 'family-secret', reason: 'conditions' }]);
    const high = prompt({ affection: 100, trust: 100 });
    expect(sources(high)).toContain('entry:family-secret');
    expect(sources(high)).not.toContain('entry:cold-shoulder');
    // confession-arc starts disabled; the milestone reaction enables it
    expect(sources(high)).not.toContain('entry:confession-arc');
    const enabled = assemblePrompt(world, { ...state, variables: { ...state.variables, affection: 100, trust: 100 }, entryEnabled: { 'confession-arc': true } }, {
      ...options,
      history: [{ role: 'user', content: text }],
    });
    expect(enabled.messages.find((message) => message.source === 'entry:confession-arc')?.step).toBe(10);
  });
});

describe('sample: 长安夜话 (Chinese)', () => {
  const world = load('changan-nights');

  it('matches Chinese keywords without spaces in entries, rules and music', () => {
    const session = startSession(world, options);
    expect(session.audioCommands[0]).toMatchObject({ action: 'playlist-start', mode: 'shuffle' });
    const prompt = assemblePrompt(world, session.state, { ...options, history: [{ role: 'user', content: '我们去西市查药铺' }] });
    expect(prompt.messages.some((message) => message.source === 'entry:west-market')).toBe(true);
    const result = play(world, session.state, '我们去西市查药铺', '裴少卿拔刀。[suspicion: +75] [clues: push "砒霜"] [current-place: 西市]');
    expect(result.displayText).toBe('裴少卿拔刀。');
    expect(result.state.variables.clues).toEqual(['砒霜', '药铺账簿']);
    expect(result.firedRules.map((fired) => fired.ruleId)).toEqual(['search-pharmacy', 'suspect-flees']);
    expect(result.audioCommands.at(-1)).toMatchObject({ action: 'play', trackId: 'tension' });
  });
});
