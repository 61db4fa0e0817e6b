import { describe, expect, it } from 'vitest';
import { scanWindow, selectEntries } from './entries.ts';
import { containsKeyword, normalizeForMatch, prepareHaystack } from './keywords.ts';
import { createInitialState, normalizeState } from './state.ts';
import type { EngineEntry, EngineWorld } from './world-types.ts';

function matches(text: string, keyword: string, wholeWords: boolean): boolean {
  return containsKeyword(normalizeForMatch(text), keyword, wholeWords);
}

describe('keyword matching, whole words in Latin and CJK text (table)', () => {
  it.each([
    ['Latin whole word hit', 'The cat sleeps.', 'cat', true, true],
    ['Latin whole word inside another word', 'A category of things', 'cat', true, false],
    ['Latin substring mode hits inside a word', 'A category of things', 'cat', false, true],
    ['case-insensitive', 'The DRAGON roars', 'dragon', true, true],
    ['accented letters are letters, not boundaries', 'un café noir', 'caf', true, false],
    ['accented keyword matches whole', 'un café noir', 'café', true, true],
    ['punctuation is a boundary', '"Dragon!" she cried', 'dragon', true, true],
    ['plural is a different word', 'Dragons everywhere', 'dragon', true, false],
    ['multi-word keyword', 'the old king returns', 'old king', true, true],
    ['Chinese keyword inside a sentence without spaces', '我们在东京塔下见面', '东京', true, true],
    ['Chinese keyword absent', '我们在上海见面', '东京', true, false],
    ['Japanese keyword followed by kana', '東京タワーに行った', '東京', true, true],
    ['Japanese katakana keyword', 'ドラゴンが現れた', 'ドラゴン', true, true],
    ['Latin keyword next to Japanese text', 'Tokyoへ行く', 'tokyo', true, true],
    ['Latin keyword inside a longer Latin word next to CJK', 'Tokyoite住民', 'tokyo', true, false],
    ['full-width Latin matches after NFKC', 'ＤＲＡＧＯＮ appears', 'dragon', true, true],
    ['Korean keyword with an attached particle', '검을 들었다', '검', true, true],
    ['Cyrillic whole word', 'Дракон спит', 'дракон', true, true],
    ['Cyrillic inside a longer word', 'Драконы спят', 'дракон', true, false],
    ['empty keyword never matches', 'anything', '  ', true, false],
  ])('%s', (_name, text, keyword, wholeWords, expected) => {
    expect(matches(text, keyword, wholeWords)).toBe(expected);
  });
});

describe('prepared haystacks answer exactly like a plain scan', () => {
  it('agrees on every keyword of a mixed-script text, both modes', () => {
    const text = 'The old king rode to Tokyoへ, past 東京タワー and the café; ドラゴン! Дракон спит. category cats';
    const keywords = ['king', 'old king', 'tokyo', '東京', 'タワー', 'caf', 'café', 'ドラゴン', 'дракон', 'cat', 'cats', 'gory', 'queen', 'kin', 'ng ro', 'xyz', 'спит', 'the'];
    const prepared = prepareHaystack(text);
    const plain = normalizeForMatch(text);
    for (const keyword of keywords) {
      for (const wholeWords of [true, false]) {
        expect([keyword, wholeWords, containsKeyword(prepared, keyword, wholeWords)]).toEqual([keyword, wholeWords, containsKeyword(plain, keyword, wholeWords)]);
      }
    }
    expect(containsKeyword(prepared, 'queen', false)).toBe(false);
    expect(containsKeyword(prepared, 'ng ro', false)).toBe(true);
  });
});

function chatEntry(id: string, extra: Partial<EngineEntry> = {}): EngineEntry {
  return { id, name: id, content: `${id} content`, section: 'chat-history', keywords: [id], ...extra };
}

function worldOf(entries: EngineEntry[], settings: EngineWorld['settings'] = {}): EngineWorld {
  return {
    name: 'Entries',
    entries,
    variables: [
      { id: 'trust', type: 'number', defaultValue: 10 },
      { id: 'met', type: 'boolean', defaultValue: false },
    ],
    settings,
  };
}

function activeIds(world: EngineWorld, messages: string[], variables?: Record<string, unknown>): string[] {
  const state = normalizeState(world, variables ? { variables } : null);
  return selectEntries(world, state, messages).activated.map((active) => active.entry.id);
}

describe('secondary keyword logic (table)', () => {
  const entry = chatEntry('castle', { keywords: ['castle'], secondaryKeywords: ['night', 'storm'] });
  it.each([
    ['AND_ANY with one secondary', 'AND_ANY', 'the castle at night', true],
    ['AND_ANY with none', 'AND_ANY', 'the castle at noon', false],
    ['AND_ALL with all', 'AND_ALL', 'the castle at night in a storm', true],
    ['AND_ALL with one', 'AND_ALL', 'the castle at night', false],
    ['NOT_ANY with none', 'NOT_ANY', 'the castle at noon', true],
    ['NOT_ANY with one', 'NOT_ANY', 'the castle at night', false],
    ['NOT_ALL with one', 'NOT_ALL', 'the castle at night', true],
    ['NOT_ALL with all', 'NOT_ALL', 'the castle at night in a storm', false],
    ['no primary match at all', 'AND_ANY', 'a storm at night', false],
  ] as const)('%s', (_name, logic, text, expected) => {
    const world = worldOf([{ ...entry, secondaryKeywordLogic: logic }]);
    expect(activeIds(world, [text])).toEqual(expected ? ['castle'] : []);
  });

  it('a primary hit blocked by secondary keywords is reported, not silent', () => {
    const world = worldOf([{ ...entry, secondaryKeywordLogic: 'AND_ALL' }]);
    const selection = selectEntries(world, createInitialState(world), ['the castle']);
    expect(selection.skipped).toMatchObject([{ entryId: 'castle', reason: 'secondary-keywords' }]);
  });
});

describe('entry activation', () => {
  it('scans the new message plus the last lorebookScanDepth turns (exchanges), not messages', () => {
    const world = worldOf([chatEntry('dragon')], { lorebookScanDepth: 2 });
    const user = (content: string) => ({ role: 'user', content });
    const ai = (content: string) => ({ role: 'assistant', content });
    const window = (messages: { role: string; content: string }[], depth: number) => scanWindow(messages, depth);
    // Two exchanges back: still scanned (a message count of 2 would have stopped at "ok").
    expect(activeIds(world, window([user('a dragon'), ai('ok'), user('two'), ai('ok'), user('now')], 2))).toEqual(['dragon']);
    expect(activeIds(world, window([user('a dragon'), ai('ok'), user('one'), ai('ok'), user('two'), ai('ok'), user('now')], 2))).toEqual([]);
    expect(window([ai('greeting'), user('hi'), ai('ok'), user('now')], 2)).toEqual(['greeting', 'hi', 'ok', 'now']);
    expect(window([user('a'), ai('b'), user('now')], 0)).toEqual(['now']);
    expect(window([user('a'), ai('b'), user('now')], 1)).toEqual(['a', 'b', 'now']);
  });

  it('variable conditions gate keyword entries, with all/any logic', () => {
    const all = chatEntry('secret', {
      conditions: [
        { variableId: 'trust', operator: 'gte', value: 50 },
        { variableId: 'met', operator: 'eq', value: true },
      ],
      conditionLogic: 'all',
    });
    const world = worldOf([all, { ...all, id: 'secret-any', keywords: ['secret'], conditionLogic: 'any' }]);
    expect(activeIds(world, ['tell me the secret'], { trust: 60, met: false })).toEqual(['secret-any']);
    expect(activeIds(world, ['tell me the secret'], { trust: 60, met: true })).toEqual(['secret', 'secret-any']);
    const skipped = selectEntries(world, normalizeState(world, { variables: { trust: 0 } }), ['secret']).skipped;
    expect(skipped.map((item) => [item.entryId, item.reason])).toEqual([
      ['secret', 'conditions'],
      ['secret-any', 'conditions'],
    ]);
  });

  it('a chat-history entry with conditions and no keywords applies while the conditions hold', () => {
    const world = worldOf([chatEntry('close', { keywords: [], conditions: [{ variableId: 'trust', operator: 'gt', value: 80 }] })]);
    expect(activeIds(world, ['hello'], { trust: 90 })).toEqual(['close']);
    expect(activeIds(world, ['hello'], { trust: 20 })).toEqual([]);
  });

  it('disabled entries and toggled-off entries do not apply; toggled-on ones do', () => {
    const world = worldOf([chatEntry('a'), chatEntry('b', { enabled: false })]);
    const state = normalizeState(world, { entryEnabled: { a: false, b: true } });
    expect(selectEntries(world, state, ['a b']).activated.map((active) => active.entry.id)).toEqual(['b']);
  });

  it('activated entries come in ascending position', () => {
    const world = worldOf([chatEntry('late', { position: 9 }), chatEntry('early', { position: 1 })]);
    expect(activeIds(world, ['late early'])).toEqual(['early', 'late']);
  });
});

describe('recursion limits and flags (table)', () => {
  const chain = [
    chatEntry('alpha', { content: 'alpha mentions beta' }),
    chatEntry('beta', { content: 'beta mentions gamma' }),
    chatEntry('gamma', { content: 'gamma is last' }),
  ];
  it.each([
    ['depth 0: no recursion', 0, chain, ['alpha']],
    ['depth 1: one level', 1, chain, ['alpha', 'beta']],
    ['depth 2: two levels', 2, chain, ['alpha', 'beta', 'gamma']],
    ['depth 5 stops when nothing new', 5, chain, ['alpha', 'beta', 'gamma']],
    ['preventRecursion: its content triggers nothing', 3, [{ ...chain[0], preventRecursion: true } as EngineEntry, chain[1] as EngineEntry, chain[2] as EngineEntry], ['alpha']],
    ['excludeRecursion: cannot be triggered by entries', 3, [chain[0] as EngineEntry, { ...chain[1], excludeRecursion: true } as EngineEntry, chain[2] as EngineEntry], ['alpha']],
  ])('%s', (_name, depth, entries, expected) => {
    const world = worldOf(entries, { lorebookRecursionDepth: depth });
    expect(activeIds(world, ['I talk about alpha'])).toEqual(expected);
  });

  it('an excludeRecursion entry still triggers from player or AI messages', () => {
    const world = worldOf([chatEntry('beta', { excludeRecursion: true })], { lorebookRecursionDepth: 2 });
    expect(activeIds(world, ['beta!'])).toEqual(['beta']);
  });

  it('recursion marks the level and the way it was reached', () => {
    const world = worldOf(chain, { lorebookRecursionDepth: 2 });
    const selection = selectEntries(world, createInitialState(world), ['alpha']);
    expect(selection.activated.map((active) => [active.entry.id, active.via, active.level])).toEqual([
      ['alpha', 'keyword', 0],
      ['beta', 'recursion', 1],
      ['gamma', 'recursion', 2],
    ]);
  });
});
