import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kData from 'js-tiktoken/ranks/cl100k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { intBetween, pick, seededRandom } from '../testdata/seeded-random.ts';
import { CL100K_PATTERN_SOURCE, Cl100kEncoder, OVERSIZED_PIECE_BYTES, utf8Length } from './cl100k.ts';

const corpusDir = join(import.meta.dirname, '../testdata');
const corpus = ['english.txt', 'code.txt', 'cjk.txt', 'emoji.txt'].map((name) => ({ name, text: readFileSync(join(corpusDir, name), 'utf8') }));

let encoder: Cl100kEncoder;
let reference: Tiktoken;
const referenceCount = (text: string) => reference.encode(text, [], []).length;

beforeAll(() => {
  encoder = Cl100kEncoder.fromRankData(cl100kData);
  reference = new Tiktoken(cl100kData);
});

describe('cl100k counting against js-tiktoken', () => {
  it('uses the same pre-tokenizer as js-tiktoken (contraction group made non-capturing)', () => {
    expect(cl100kData.pat_str.replace(/^\(/, '(?:')).toBe(CL100K_PATTERN_SOURCE);
    expect(encoder.vocabularySize).toBe(100_256);
  });

  it.each(corpus)('counts $name exactly, with identical token sequences', ({ text }) => {
    expect(text.length).toBeGreaterThan(500);
    const expected = reference.encode(text, [], []);
    expect(encoder.encode(text)).toEqual(expected);
    expect(encoder.count(text)).toBe(expected.length);
    // line by line too (different piece boundaries at the edges)
    for (const line of text.split('\n')) expect(encoder.count(line)).toBe(referenceCount(line));
  });

  it('counts the whole corpus concatenated exactly, twice (the piece cache changes nothing)', () => {
    const all = corpus.map((c) => c.text).join('\n');
    const expected = referenceCount(all);
    expect(encoder.count(all)).toBe(expected);
    expect(encoder.count(all)).toBe(expected);
    encoder.clearPieceCache();
    expect(encoder.count(all)).toBe(expected);
  });

  it('counts special-token literals as plain text and never throws', () => {
    for (const text of ['<|endoftext|>', 'a<|endoftext|>b', '<|fim_prefix|><|fim_middle|><|fim_suffix|>', '<|endofprompt|>', '<|im_start|>system']) {
      expect(() => encoder.count(text)).not.toThrow();
      expect(encoder.count(text)).toBe(referenceCount(text));
      expect(encoder.count(text)).toBeGreaterThan(1);
    }
  });

  it('counts U+FEFF as one token like cl100k (gpt-tokenizer 4.0.0 says 2)', () => {
    expect(encoder.count('\uFEFF')).toBe(1);
    expect(encoder.count('\uFEFFhello')).toBe(referenceCount('\uFEFFhello'));
  });

  it('handles lone surrogates as U+FFFD like TextEncoder', () => {
    for (const text of ['\uD800', 'a\uDC00b', 'x\uD83D', '\uD83D\uD83D\uDE00']) {
      expect(encoder.count(text)).toBe(referenceCount(text));
    }
    expect(utf8Length('\uD800')).toBe(3);
    expect(utf8Length('😀')).toBe(4);
  });

  it('matches js-tiktoken on 400 random strings from a mixed alphabet (pieces up to 256 bytes)', () => {
    const random = seededRandom(7);
    const alphabet = [
      ...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789',
      ...'     \n\n\t\r.,;:!?\'"()[]{}<>|-_=+*/\\@#$%^&~`',
      ...'éüßñçøåœ',
      ...'日本語中文한국어かなカナ',
      '😀',
      '👍🏽',
      '\u200d',
      '\uFEFF',
      "'s",
      "'LL",
      '<|endoftext|>',
    ];
    for (let i = 0; i < 400; i++) {
      let text = '';
      const len = intBetween(random, 1, 120);
      for (let j = 0; j < len; j++) text += pick(random, alphabet);
      expect(encoder.count(text), JSON.stringify(text)).toBe(referenceCount(text));
    }
  });
});

describe('oversized pieces', () => {
  it('counts a piece over 256 bytes by its UTF-8 length, never under the exact count', () => {
    const random = seededRandom(11);
    const letters = 'abcdefghijklmnopqrstuvwxyzéßñ日本語';
    for (let i = 0; i < 25; i++) {
      let piece = '';
      const len = intBetween(random, 200, 700);
      for (let j = 0; j < len; j++) piece += pick(random, [...letters]);
      const pieces = [...piece.matchAll(new RegExp(CL100K_PATTERN_SOURCE, 'gu'))];
      expect(pieces).toHaveLength(1); // one unbroken letter run
      const bytes = utf8Length(piece);
      const exact = referenceCount(piece);
      const counted = encoder.count(piece);
      if (bytes > OVERSIZED_PIECE_BYTES) expect(counted).toBe(bytes);
      else expect(counted).toBe(exact);
      expect(counted).toBeGreaterThanOrEqual(exact);
    }
  });

  it('counts exactly at 256 bytes and by bound at 257', () => {
    const at = 'q'.repeat(256);
    expect(encoder.count(at)).toBe(referenceCount(at));
    const over = 'q'.repeat(257);
    expect(encoder.count(over)).toBe(257);
    expect(referenceCount(over)).toBeLessThan(257);
  });

  it('counts a 1 MB input without spaces in well under a second (linear, not quadratic)', () => {
    const random = seededRandom(3);
    const chars: string[] = [];
    for (let i = 0; i < 1_000_000; i++) chars.push(String.fromCharCode(97 + Math.floor(random() * 26)));
    const text = chars.join('');
    const started = performance.now();
    expect(encoder.count(text)).toBe(1_000_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
