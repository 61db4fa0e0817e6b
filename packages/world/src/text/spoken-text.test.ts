import { describe, expect, it } from 'vitest';
import { spokenText } from './spoken-text.ts';

describe('spokenText', () => {
  it('reads or skips actions between asterisks, keeps bold as words', () => {
    const text = '*She smiles.* Hello **there**, _waves_ friend. [Map](https://x.test/m) ![p](asset:abc)';
    expect(spokenText(text, 'read')).toBe('She smiles. Hello there, waves friend. Map');
    expect(spokenText(text, 'skip')).toBe('Hello there, friend. Map');
  });
  it('drops code blocks and headings marks', () => {
    expect(spokenText('# Title\n```js\nx()\n```\nText `code`')).toBe('Title\nText code');
  });
});
