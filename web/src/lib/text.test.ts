import { describe, expect, it } from 'vitest';
import { count, excerpt } from './text.ts';

describe('excerpt', () => {
  it('leaves a text that fits as it is (trimmed)', () => {
    expect(excerpt('  A harbour town.  ', 140)).toBe('A harbour town.');
    expect(excerpt('x'.repeat(140), 140)).toBe('x'.repeat(140));
  });

  it('ends a longer text at a word, within the limit, with an ellipsis', () => {
    const text = 'A slow-burn story about you and Mina, the florist across the street, told over a rainy autumn. Affection and trust move with every conversation.';
    const short = excerpt(text, 140);
    expect(short).toBe('A slow-burn story about you and Mina, the florist across the street, told over a rainy autumn. Affection and trust move with every…');
    expect(Array.from(short).length).toBeLessThanOrEqual(140);
  });

  it('cuts text without spaces (CJK) at a character, never inside an emoji', () => {
    const cjk = '天宝年间的长安城，宵禁鼓声响过之后，西市接连发生离奇命案。';
    expect(excerpt(cjk, 10)).toBe('天宝年间的长安城…');
    const emoji = '😀'.repeat(20);
    const short = excerpt(emoji, 10);
    expect(short).toBe(`${'😀'.repeat(9)}…`);
    expect(short).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('cuts a single long word rather than leaving almost nothing', () => {
    expect(excerpt(`Go ${'a'.repeat(50)}`, 20)).toBe(`Go ${'a'.repeat(16)}…`);
  });
});

describe('count', () => {
  it('names one, none and many, with thousands separated', () => {
    expect(count(1, 'message')).toBe('1 message');
    expect(count(0, 'message')).toBe('0 messages');
    expect(count(3, 'issue')).toBe('3 issues');
    expect(count(1204, 'player')).toBe('1,204 players');
    expect(count(2, 'entry', 'entries')).toBe('2 entries');
  });
});
