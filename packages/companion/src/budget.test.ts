import { describe, expect, it } from 'vitest';
import { adventureWaveBudget, composeWave, waveWeight, ZOMBIE_WEIGHTS } from './budget.ts';

function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

describe('adventure wave budget', () => {
  it('is four times the original weighted budget, not five', () => {
    expect(adventureWaveBudget(6)).toBe(24);
    expect(adventureWaveBudget(6)).not.toBe(30);
  });

  it('fills the weighted budget exactly when a weight-1 zombie is allowed, with fewer than 4× the bodies when heavy zombies appear', () => {
    const allowed = ['zombie', 'conehead-zombie', 'buckethead-zombie'];
    let heavier = 0;
    for (let seed = 1; seed <= 50; seed++) {
      const wave = composeWave(adventureWaveBudget(5), allowed, seeded(seed));
      expect(waveWeight(wave)).toBe(20);
      if (wave.length < 20) heavier++;
    }
    expect(heavier).toBeGreaterThan(40);
  });

  it('never exceeds the budget and ignores unknown names', () => {
    const wave = composeWave(9, ['football-zombie', 'nonsense'], seeded(3));
    expect(wave).toEqual(['football-zombie']);
    expect(waveWeight(wave)).toBeLessThanOrEqual(9);
    expect(ZOMBIE_WEIGHTS.gargantuar).toBe(10);
  });
});
