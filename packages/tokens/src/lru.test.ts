import { describe, expect, it } from 'vitest';
import { intBetween, seededRandom } from '../testdata/seeded-random.ts';
import { CountLru, LRU_MAX_CHARS, LRU_MAX_ENTRIES } from './lru.ts';

describe('CountLru', () => {
  it('uses the contract bounds by default', () => {
    const lru = new CountLru();
    expect([lru.maxEntries, lru.maxChars]).toEqual([1024, 2_000_000]);
    expect([LRU_MAX_ENTRIES, LRU_MAX_CHARS]).toEqual([1024, 2_000_000]);
  });

  it('keeps both bounds under a fuzzed workload and stays consistent with a model', () => {
    const random = seededRandom(42);
    const lru = new CountLru();
    const big = 'x'.repeat(300_000);
    let maxEntries = 0;
    let maxChars = 0;
    for (let step = 0; step < 20_000; step++) {
      // phases: small keys only (pushes the entry limit), then a mix with large keys (pushes the character limit)
      const roll = step % 10_000 < 4_000 ? 0 : random();
      // keys: many small ones, some mid-size, a few huge (key characters count toward the budget)
      const size = roll < 0.8 ? intBetween(random, 1, 40) : roll < 0.98 ? intBetween(random, 1_000, 20_000) : intBetween(random, 100_000, 299_999);
      const id = intBetween(random, 0, 5000);
      const key = `${id}:${big.slice(0, size)}`;
      if (random() < 0.5) {
        const got = lru.get(key);
        if (got !== undefined) expect(got).toBe(id * 7 + size);
      } else lru.set(key, id * 7 + size);
      maxEntries = Math.max(maxEntries, lru.size);
      maxChars = Math.max(maxChars, lru.totalChars);
      expect(lru.size).toBeLessThanOrEqual(1024);
      expect(lru.totalChars).toBeLessThanOrEqual(2_000_000);
    }
    // the workload really pushed on both limits
    expect(maxEntries).toBe(1024);
    expect(maxChars).toBeGreaterThan(1_700_000);
  });

  it('does not cache an entry larger than the character budget, and keeps what it has', () => {
    const lru = new CountLru(10, 100);
    lru.set('a', 1);
    lru.set('y'.repeat(101), 5);
    expect(lru.get('y'.repeat(101))).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.totalChars).toBe(1);
  });

  it('evicts the least recently used entry first', () => {
    const lru = new CountLru(3, 1000);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect(lru.get('a')).toBe(1); // a is now the newest
    lru.set('d', 4);
    expect(lru.get('b')).toBeUndefined();
    expect([lru.get('a'), lru.get('c'), lru.get('d')]).toEqual([1, 3, 4]);
  });

  it('evicts by characters as well as by entries, and re-setting a key does not double count it', () => {
    const lru = new CountLru(100, 10);
    lru.set('aaaa', 1);
    lru.set('bbbb', 2);
    lru.set('aaaa', 3);
    expect(lru.totalChars).toBe(8);
    lru.set('ccc', 4); // 11 > 10: the oldest (bbbb) goes
    expect(lru.get('bbbb')).toBeUndefined();
    expect(lru.totalChars).toBe(7);
  });
});
