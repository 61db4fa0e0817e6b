import { describe, expect, it } from 'vitest';
import { acceptQuote, resemblesCredential } from './quote.ts';

describe('quote acceptance', () => {
  it('accepts a short exact quote of the current message, in any supported language', () => {
    expect(acceptQuote('I love sunflowers', 'Honestly, I love sunflowers the most.')).toEqual({ accepted: true, text: 'I love sunflowers' });
    expect(acceptQuote('  我最喜欢向日葵 ', '说真的，我最喜欢向日葵了')).toEqual({ accepted: true, text: '我最喜欢向日葵' });
    expect(acceptQuote('me encantan los girasoles', 'Sí, me encantan los girasoles.').accepted).toBe(true);
    expect(acceptQuote('I love pineapple', 'I love pineapple on pizza').accepted).toBe(true);
  });

  it('rejects a quote that is not exactly in the message', () => {
    expect(acceptQuote('i love sunflowers', 'I love sunflowers')).toEqual({ accepted: false, reason: 'not-in-message' });
    expect(acceptQuote('I won the level', 'I almost won')).toEqual({ accepted: false, reason: 'not-in-message' });
    expect(acceptQuote('', 'anything')).toEqual({ accepted: false, reason: 'empty' });
    expect(acceptQuote(42, 'anything 42')).toEqual({ accepted: false, reason: 'empty' });
    const long = 'a'.repeat(161);
    expect(acceptQuote(long, long)).toEqual({ accepted: false, reason: 'too-long' });
  });

  it.each([
    ['sk-proj-AbCdEf1234567890xyz', 'my key: sk-proj-AbCdEf1234567890xyz'],
    ['ghp_abcdefghijklmnopqrstu1234', 'token ghp_abcdefghijklmnopqrstu1234'],
    ['AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE is mine'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abc123def456', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abc123def456'],
    ['my password is hunter2', 'hey, my password is hunter2'],
    ['hunter2', 'my password is hunter2'],
    ['mi contraseña es gato', 'mi contraseña es gato'],
    ['我的密码是1234', '我的密码是1234'],
    ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    ['Xk29fLq8Zp3Vw7Rt5Yn1Bm4C', 'use Xk29fLq8Zp3Vw7Rt5Yn1Bm4C now'],
    ['https://bob:s3cret@example.com', 'https://bob:s3cret@example.com'],
  ])('rejects credential-like text: %s', (quote, message) => {
    expect(acceptQuote(quote, message)).toEqual({ accepted: false, reason: 'credential-like' });
  });

  it('does not flag ordinary words that contain secret-like fragments', () => {
    for (const text of ['spinning sunflowers', 'I can pass this level', 'the tokenless wallnut is cute', 'opinion: peas rule']) {
      expect(resemblesCredential(text), text).toBe(false);
    }
  });
});
