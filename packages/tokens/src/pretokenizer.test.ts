import { describe, expect, it } from 'vitest';
import { intBetween, pick, seededRandom } from '../testdata/seeded-random.ts';
import { CL100K_PATTERN_SOURCE } from './cl100k.ts';
import { pieceEnd } from './pretokenizer.ts';

function scan(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const end = pieceEnd(text, i);
    expect(end).toBeGreaterThan(i);
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

const regexPieces = (text: string) => [...text.matchAll(new RegExp(CL100K_PATTERN_SOURCE, 'gu'))].map((m) => m[0]);

describe('cl100k pre-tokenizer scanner', () => {
  it.each([
    "I'm sure they'll say it's what we'd've DONE'S 'RE 'Ve 'x",
    'Hello, world!\n\n  Indented   text\t\ttabs \r\n\r\n trailing   ',
    '12345 3.14159 ١٢٣٤ ½ Ⅻ 1,000,000',
    '(word) "quoted" [x] {y} <|endoftext|> a+b=c; --flag ...',
    '日本語のテキスト、中文。한국어! 𝐀𝐁𝐂 𠀀𠀁 😀👍🏽 a\u200db',
    '\u00a0nbsp \u3000ideographic\u2028line\u2029para \ufeffbom \u000bvt\u000cff',
    '\uD800 lone \uDC00 surrogates \uD83D',
    '   ',
    ' \n ',
    'x ',
    '\n',
  ])('splits %j exactly like the regex', (text) => {
    expect(scan(text)).toEqual(regexPieces(text));
  });

  it('splits 3,000 random strings exactly like the regex', () => {
    const random = seededRandom(99);
    const alphabet = [
      ...'aZq',
      ...'09',
      ' ',
      ' ',
      '\t',
      '\n',
      '\r',
      '\r\n',
      '\u00a0',
      '\u3000',
      '\u2028',
      '\ufeff',
      '\u000b',
      ...".,;!?'\"()-_/\\|<>@#$%^&*+=~`",
      "'s",
      "'LL",
      "'re",
      "'d",
      'é',
      'ß',
      '日',
      'カ',
      '한',
      '٣',
      '½',
      'Ⅻ',
      '𝐀',
      '𠀀',
      '😀',
      '🏽',
      '\u200d',
      '\u0301',
      '\uD800',
      '\uDC00',
    ];
    for (let run = 0; run < 3000; run++) {
      let text = '';
      const len = intBetween(random, 1, 40);
      for (let i = 0; i < len; i++) text += pick(random, alphabet);
      expect(scan(text), JSON.stringify(text)).toEqual(regexPieces(text));
    }
  });
});
