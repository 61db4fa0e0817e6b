import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  houseInDanger,
  invitationDelayMs,
  invitationDeferral,
  isLevelEligible,
  levelExclusion,
  levelGetsInvitation,
  tinOutcome,
} from './eligibility.ts';
import { fnv1a32, levelHash } from './hash.ts';
import { ADVENTURE_LEVELS, adventureLevel } from './levels.ts';
import { quietMoment } from './test-moments.ts';

afterEach(() => vi.restoreAllMocks());

describe('level eligibility (§3.3.1)', () => {
  it('excludes levels 1 to 4, conveyor levels, vase puzzles and the final boss', () => {
    for (const level of [1, 2, 3, 4]) expect(levelExclusion(adventureLevel(level))).toBe('opening-level');
    for (const level of [10, 20, 30, 40]) expect(levelExclusion(adventureLevel(level))).toBe('conveyor');
    expect(levelExclusion(adventureLevel(35))).toBe('vase-puzzle');
    expect(levelExclusion({ ...adventureLevel(50), conveyor: false })).toBe('final-boss');
    expect(levelExclusion({ ...adventureLevel(12), vasePuzzle: true })).toBe('vase-puzzle');
    expect(isLevelEligible(adventureLevel(6))).toBe(true);
    for (let level = 1; level <= ADVENTURE_LEVELS; level++) {
      const d = adventureLevel(level);
      if (d.conveyor || d.vasePuzzle || d.finalBoss || level <= 4) {
        for (let cycle = 1; cycle <= 20; cycle++) expect(levelGetsInvitation(d, cycle)).toBe(false);
      }
    }
  });

  it('invites about two thirds of eligible levels', () => {
    let eligible = 0;
    let invited = 0;
    for (let cycle = 1; cycle <= 300; cycle++) {
      for (let level = 1; level <= ADVENTURE_LEVELS; level++) {
        const d = adventureLevel(level);
        if (!isLevelEligible(d)) continue;
        eligible++;
        if (levelGetsInvitation(d, cycle)) invited++;
      }
    }
    expect(invited / eligible).toBeGreaterThan(2 / 3 - 0.02);
    expect(invited / eligible).toBeLessThan(2 / 3 + 0.02);
  });
});

describe('tin outcome (§3.3.2)', () => {
  it('gives 75 sun for 75% ± 2% of 10,000 (level, cycle) pairs', () => {
    let lucky = 0;
    let pairs = 0;
    for (let cycle = 1; cycle <= 200; cycle++) {
      for (let level = 1; level <= ADVENTURE_LEVELS; level++) {
        pairs++;
        if (tinOutcome(level, cycle) === 'sun') lucky++;
      }
    }
    expect(pairs).toBe(10_000);
    expect(lucky / pairs).toBeGreaterThanOrEqual(0.73);
    expect(lucky / pairs).toBeLessThanOrEqual(0.77);
  });

  it('depends on both level and cycle, and replaying the same pair repeats it', () => {
    const row = (cycle: number) => Array.from({ length: 50 }, (_, i) => tinOutcome(i + 1, cycle)).join();
    expect(row(1)).toBe(row(1));
    expect(row(1)).not.toBe(row(2));
    const column = (level: number) => Array.from({ length: 50 }, (_, i) => tinOutcome(level, i + 1)).join();
    expect(column(7)).not.toBe(column(8));
  });

  it('is independent of the simulation random generator', () => {
    const before = Array.from({ length: 200 }, (_, i) => tinOutcome((i % 50) + 1, Math.floor(i / 50) + 1));
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const after = Array.from({ length: 200 }, (_, i) => tinOutcome((i % 50) + 1, Math.floor(i / 50) + 1));
    expect(after).toEqual(before);
  });

  it('uses a stable hash (FNV-1a reference values)', () => {
    // Published FNV-1a 32-bit test vectors.
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    expect(levelHash('x', 5, 1)).not.toBe(levelHash('x', 5, 2));
  });
});

describe('idle delay', () => {
  it('varies between 60 and 120 s of active play', () => {
    const delays = new Set<number>();
    for (let level = 1; level <= 50; level++) {
      const d = invitationDelayMs(level, 1);
      expect(d).toBeGreaterThanOrEqual(60_000);
      expect(d).toBeLessThanOrEqual(120_000);
      delays.add(Math.floor(d / 10_000));
    }
    expect(delays.size).toBeGreaterThanOrEqual(5);
  });
});

describe('deferrals', () => {
  const base = quietMoment(100_000);
  it('names the reason an invitation waits', () => {
    expect(invitationDeferral(base)).toBeNull();
    expect(invitationDeferral({ ...base, paused: true })).toBe('paused');
    expect(invitationDeferral({ ...base, houseDanger: true })).toBe('house-danger');
    expect(invitationDeferral({ ...base, lastMowerAtMs: 85_000 })).toBe('mower-recent');
    expect(invitationDeferral({ ...base, lastMowerAtMs: 80_000 })).toBeNull();
    expect(invitationDeferral({ ...base, finalWaveSpawned: true })).toBe('final-wave');
    expect(invitationDeferral({ ...base, companionScene: true })).toBe('companion-scene');
  });
  it('judges house danger by zombies near the house', () => {
    expect(houseInDanger([5, 8.2])).toBe(false);
    expect(houseInDanger([5, 1.2])).toBe(true);
  });
});
