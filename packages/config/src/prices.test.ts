import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parsePrices } from './index.ts';

/** AI_PRICES (issue 47 point 4): the platform's price table, validated once at start. */
describe('AI_PRICES', () => {
  it('reads credits per million tokens per model, a cache read defaulting to a tenth of input and a cache write to input', () => {
    expect(parsePrices(undefined)).toEqual({});
    expect(parsePrices('{"claude": {"input": 3000, "cacheRead": 300, "cacheWrite": 3750, "output": 15000}, "*": {"input": 1000, "output": 2000}}')).toEqual({
      claude: { input: 3000, cacheRead: 300, cacheWrite: 3750, output: 15000 },
      '*': { input: 1000, cacheRead: 100, cacheWrite: 1000, output: 2000 },
    });
    const config = loadConfig({ NODE_ENV: 'test', AI_PRICES: '{"m": {"input": 10, "output": 20}}' }, '0', {});
    expect(config.ai.prices).toEqual({ m: { input: 10, cacheRead: 1, cacheWrite: 10, output: 20 } });
  });

  it('a malformed table refuses to start, naming the setting and what is wrong', () => {
    const cases: Array<[string, RegExp]> = [
      ['not json', /AI_PRICES must be a JSON object/],
      ['{"m": {"input": -1, "output": 2}}', /AI_PRICES m\.input: /],
      ['{"m": {"input": 1}}', /AI_PRICES m\.output: /],
      ['{"m": {"input": 1, "output": 2, "reasoning": 3}}', /AI_PRICES m: /],
      ['[1, 2]', /AI_PRICES/],
    ];
    for (const [raw, says] of cases) {
      const err = (() => {
        try {
          parsePrices(raw);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(says);
    }
  });
});
