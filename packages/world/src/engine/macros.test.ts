import { describe, expect, it } from 'vitest';
import { expandMacros, MAX_MACRO_DEPTH, type MacroContext, resolveUserName } from './macros.ts';
import { createRandom } from './random.ts';
import { buildMacroContext } from './session-context.ts';
import { createInitialState } from './state.ts';
import type { EngineWorld } from './world-types.ts';

function context(overrides: Partial<MacroContext> = {}): MacroContext {
  return {
    charName: 'Aria',
    userName: 'Sam',
    persona: { name: 'Sam', appearance: 'tall, red coat', personality: 'curious', backstory: 'a wandering cartographer' },
    now: new Date('2026-03-05T14:07:09Z'),
    timeZone: 'UTC',
    lastUserMessageAt: '2026-03-05T13:52:00Z',
    turnCount: 7,
    model: 'gpt-test',
    lastMessage: 'the last one',
    lastUserMessage: 'I open the door',
    lastCharMessage: 'The door creaks.',
    variables: { hp: 42, name: 'Lina', alive: true, inventory: { gold: 5, items: ['rope'] } },
    variableIds: new Set(['hp', 'name', 'alive', 'inventory']),
    random: createRandom('test'),
    pickSeed: 'seed|session|7',
    ...overrides,
  };
}

describe('macros: each macro (table)', () => {
  it.each([
    ['char', '{{char}}', 'Aria'],
    ['user', '{{user}}', 'Sam'],
    ['persona_name', '{{persona_name}}', 'Sam'],
    ['persona_appearance', '{{persona_appearance}}', 'tall, red coat'],
    ['persona_personality', '{{persona_personality}}', 'curious'],
    ['persona_backstory', '{{persona_backstory}}', 'a wandering cartographer'],
    ['persona (built from the fields)', '{{persona}}', 'Name: Sam\nAppearance: tall, red coat\nPersonality: curious\nBackstory: a wandering cartographer'],
    ['time HH:MM', '{{time}}', '14:07'],
    ['date', '{{date}}', 'March 5, 2026'],
    ['weekday', '{{weekday}}', 'Thursday'],
    ['isodate', '{{isodate}}', '2026-03-05'],
    ['isotime', '{{isotime}}', '14:07:09'],
    ['idle since last player message', '{{idle}}', '15 minutes'],
    ['turnCount', '{{turnCount}}', '7'],
    ['model', '{{model}}', 'gpt-test'],
    ['lastMessage', '{{lastMessage}}', 'the last one'],
    ['lastUserMessage', '{{lastUserMessage}}', 'I open the door'],
    ['lastCharMessage', '{{lastCharMessage}}', 'The door creaks.'],
    ['number variable', 'HP {{hp}}', 'HP 42'],
    ['string variable', '{{name}}', 'Lina'],
    ['boolean variable', '{{alive}}', 'true'],
    ['json variable serialized', '{{inventory}}', '{"gold":5,"items":["rope"]}'],
    ['comment removed', 'a{{// the author note}}b', 'ab'],
    ['trim collapses surrounding whitespace', 'line one  \n\n{{trim}}\n  line two', 'line oneline two'],
    ['unknown macro stays literal', 'x {{nonsense}} y', 'x {{nonsense}} y'],
    ['unknown macro with args stays literal', '{{foo::bar}}', '{{foo::bar}}'],
    ['unclosed braces stay literal', 'a {{char', 'a {{char'],
    ['nested macros resolve inside out', '{{pick::{{char}}}}', 'Aria'],
  ])('%s', (_name, input, expected) => {
    expect(expandMacros(input, context())).toBe(expected);
  });

  it('time macros honour the time zone', () => {
    expect(expandMacros('{{time}} {{weekday}}', context({ timeZone: 'Asia/Tokyo' }))).toBe('23:07 Thursday');
  });

  it('random picks one of the options and re-rolls with a new turn seed', () => {
    const options = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const text = `{{random::${options.join('::')}}}`;
    const seen = new Set<string>();
    for (let turn = 0; turn < 40; turn++) {
      const value = expandMacros(text, context({ random: createRandom(`s|${turn}`) }));
      expect(options).toContain(value);
      seen.add(value);
    }
    expect(seen.size).toBeGreaterThan(3);
  });

  it('random accepts a comma list', () => {
    expect(['x', 'y']).toContain(expandMacros('{{random::x, y}}', context()));
  });

  it('pick is stable within a turn and session, and varies across sessions', () => {
    const text = '{{pick::red::green::blue::amber::violet::teal}}';
    const first = expandMacros(text, context({ pickSeed: 'w|alice|3' }));
    expect(expandMacros(`${text} ${text}`, context({ pickSeed: 'w|alice|3' }))).toBe(`${first} ${first}`);
    const perSession = new Set<string>();
    for (let session = 0; session < 30; session++) perSession.add(expandMacros(text, context({ pickSeed: `w|player-${session}|3` })));
    expect(perSession.size).toBeGreaterThan(1);
  });

  it.each([
    ['roll::1d6', 1, 6],
    ['roll::2d6+3', 5, 15],
    ['roll::d20', 1, 20],
    ['roll::3d4-2', 1, 10],
  ])('dice %s stays within [%i, %i] and reaches both ends', (spec, low, high) => {
    const seen = new Set<number>();
    const random = createRandom(spec);
    for (let index = 0; index < 2000; index++) {
      const value = Number(expandMacros(`{{${spec}}}`, context({ random })));
      expect(value).toBeGreaterThanOrEqual(low);
      expect(value).toBeLessThanOrEqual(high);
      seen.add(value);
    }
    expect(seen.has(low) && seen.has(high)).toBe(true);
  });

  it('an invalid dice spec stays literal', () => {
    expect(expandMacros('{{roll::banana}}', context())).toBe('{{roll::banana}}');
  });

  it('random of {{char}} and {{user}} resolves the inner macros first', () => {
    for (let index = 0; index < 10; index++) {
      expect(['Aria', 'Sam']).toContain(expandMacros('{{random::{{char}}::{{user}}}}', context({ random: createRandom(String(index)) })));
    }
  });

  it('an unknown inner macro stays literal while the outer one resolves', () => {
    expect(expandMacros('{{pick::{{mystery}}}}', context())).toBe('{{mystery}}');
  });

  it(`nesting deeper than ${MAX_MACRO_DEPTH} stays literal instead of recursing without end`, () => {
    const deep = `${'{{pick::'.repeat(MAX_MACRO_DEPTH + 3)}x${'}}'.repeat(MAX_MACRO_DEPTH + 3)}`;
    const result = expandMacros(deep, context());
    expect(result).toContain('{{');
    expect(result.endsWith('}}')).toBe(true);
    const shallow = `${'{{pick::'.repeat(MAX_MACRO_DEPTH)}x${'}}'.repeat(MAX_MACRO_DEPTH)}`;
    expect(expandMacros(shallow, context())).toBe('x');
  });

  it.each([
    ['persona name first', { name: 'Nova' }, 'acct', 'Traveler', 'Nova'],
    ['then the account username', null, 'acct', 'Traveler', 'acct'],
    ["then the world's playerName", null, null, 'Traveler', 'Traveler'],
    ['then "Player" when playerName is empty', null, null, '', 'Player'],
  ])('user resolves: %s', (_name, persona, account, playerName, expected) => {
    expect(resolveUserName(persona, account, playerName)).toBe(expected);
  });

  it('buildMacroContext uses the world name as char and settings.playerName as user', () => {
    const world: EngineWorld = { name: 'Ravenhold', entries: [], variables: [], settings: { playerName: 'User' } };
    const macros = buildMacroContext(world, createInitialState(world), { now: 0 }, 1, { lastMessage: '', lastUserMessage: '', lastCharMessage: '' });
    expect(expandMacros('{{char}}/{{user}}', macros)).toBe('Ravenhold/User');
  });
});
