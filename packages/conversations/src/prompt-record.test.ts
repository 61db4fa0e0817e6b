import { describe, expect, it } from 'vitest';
import { historyRuns, INLINE_TEXT, type KeptPrompt, type KeptPromptMessage, packPrompt, promptTextHashes, unpackPrompt } from './prompt-record.ts';

type Role = KeptPromptMessage['role'];

const lore = 'Mina Sato runs the flower shop on Willow Street. She remembers the cafe by the station, the rain, and an umbrella. '.repeat(8);

/** A prompt shaped as sentPromptOf (containers/api/src/conversations/sent-prompt.ts) records one. */
function prompt(roles: readonly Role[], extra: Partial<KeptPrompt> = {}): KeptPrompt {
  const history: KeptPromptMessage[] = roles.map((role, i) => ({ role, step: 10, source: 'history', content: i === roles.length - 1 ? 'Do you remember the cafe by the station, the rain, my umbrella?' : null }));
  // a depth-injected entry sits between the conversation's places (depth 2)
  const depth: KeptPromptMessage = { role: 'system', step: 10, source: 'entry:depth-note', content: 'She is tired today.' };
  if (history.length > 3) history.splice(history.length - 2, 0, depth);
  return {
    model: 'story-model',
    builtAt: '2026-11-29T12:00:00.000Z',
    tokenCount: 4_812,
    droppedHistory: 3,
    historyCount: roles.length,
    messages: [
      { role: 'system', step: 1, source: 'entry:mina-character', content: lore },
      { role: 'system', step: 2, source: 'persona', content: '## Aki\nA regular.' },
      { role: 'system', step: 7, source: 'new-chat', content: '[Start a new chat]' },
      ...history,
      { role: 'system', step: 12, source: 'format:dynamic', content: `trust: 4\n${'mood: calm\n'.repeat(10)}` },
    ],
    firedEntries: [{ entryId: 'mina-character', name: 'Mina', via: 'always', step: 1 }, { entryId: 'cafe-memory', name: 'The cafe by the station', via: 'keyword', keyword: 'cafe', step: 5 }],
    skippedEntries: [],
    ...extra,
  };
}

const alternating = (n: number, first: Role = 'assistant'): Role[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? first : first === 'user' ? 'assistant' : 'user'));
const stored = (p: KeptPrompt) => JSON.parse(packPrompt(p)) as { record: unknown; texts: [string, string][] };
const roundTrip = (p: KeptPrompt) => {
  const { record, texts } = stored(p);
  // through JSON, as PostgreSQL's jsonb gives it back
  return unpackPrompt(JSON.parse(JSON.stringify(record)), new Map(texts));
};

describe('a kept prompt (issue 51, point 7)', () => {
  it('reads back exactly the record the view showed before, for alternating, irregular and random conversations', () => {
    expect(roundTrip(prompt(alternating(41)))).toEqual(prompt(alternating(41)));
    const irregular: Role[] = ['assistant', 'user', 'user', 'assistant', 'assistant', 'assistant', 'user', 'system', 'system', 'user', 'assistant', 'user'];
    expect(roundTrip(prompt(irregular))).toEqual(prompt(irregular));
    expect(roundTrip(prompt([]))).toEqual(prompt([]));
    expect(roundTrip(prompt(['user']))).toEqual(prompt(['user']));
    // a continued reply's text so far comes last
    const continued = prompt(alternating(9), {});
    continued.messages.push({ role: 'assistant', step: 10, source: 'continue', content: 'She pauses' });
    expect(roundTrip(continued)).toEqual(continued);
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let n = 0; n < 200; n++) {
      const roles = Array.from({ length: Math.floor(random() * 60) }, () => (['user', 'assistant', 'assistant', 'user', 'system'] as const)[Math.floor(random() * 5)]!);
      expect(roundTrip(prompt(roles))).toEqual(prompt(roles));
    }
  });

  it('a record from before (version 1) reads as it is', () => {
    const old = prompt(alternating(12));
    expect(unpackPrompt(JSON.parse(JSON.stringify(old)), new Map())).toEqual(old);
    expect(promptTextHashes(old)).toEqual([]);
  });

  it('keeps the same size whatever the conversation’s length, and names the same texts turn after turn', () => {
    const short = stored(prompt(alternating(20)));
    const long = stored(prompt(alternating(2_000)));
    // only the figures' digits differ (the count, the runs' lengths)
    expect(JSON.stringify(long.record).length - JSON.stringify(short.record).length).toBeLessThanOrEqual(6);
    expect(long.texts.map(([h]) => h).sort()).toEqual(short.texts.map(([h]) => h).sort());
    // the lore is a reference, not the text; short texts stay in place
    expect(JSON.stringify(long.record)).not.toContain('flower shop');
    expect(JSON.stringify(long.record)).toContain('[Start a new chat]');
    expect(short.texts.every(([, body]) => body.length > INLINE_TEXT)).toBe(true);
    // a record that names a text that is not kept fails loudly rather than showing something else
    expect(() => unpackPrompt(long.record, new Map())).toThrow(/not kept/);
  });

  it('describes a conversation’s places by runs', () => {
    expect(historyRuns(alternating(2_000, 'user'))).toEqual([['u', 2_000, 1]]);
    expect(historyRuns(['user', 'user', 'user', 'assistant'])).toEqual([['u', 3, 0], ['a', 1, 1]]);
    expect(historyRuns(['assistant', 'user', 'user', 'assistant'])).toEqual([['a', 2, 1], ['u', 2, 1]]);
  });
});
