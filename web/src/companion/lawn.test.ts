import { ADVENTURE_BUDGET_MULTIPLIER, companionContextSchema, waveWeight } from '@yumina/companion';
import { describe, expect, it } from 'vitest';
import { advance, companionContext, concealed, digPlant, newLawn, placePlant, WAVES_PER_LEVEL } from './lawn.ts';

const extra = { locale: 'en' as const, tin: { phase: 'none' as const }, nativeLoss: false, selectedPlants: ['peashooter' as const] };

describe('demo lawn', () => {
  it('is deterministic for a level, cycle and seed, and waves use 4× the weighted budget', () => {
    const a = newLawn(12, 1);
    const b = newLawn(12, 1);
    expect(a.waves).toEqual(b.waves);
    expect(a.waves).toHaveLength(WAVES_PER_LEVEL);
    a.waves.forEach((w, i) => {
      const budget = Math.ceil((i + 1) / 2) * ADVENTURE_BUDGET_MULTIPLIER;
      // The final wave adds its flag zombie on top of the budget.
      expect(waveWeight(w.zombies) - (i === WAVES_PER_LEVEL - 1 ? 1 : 0)).toBe(budget);
    });
    advance(a, 120_000);
    advance(b, 120_000);
    expect(a.sun).toBe(b.sun);
    expect(a.zombies).toEqual(b.zombies);
  });

  it('day levels collect sky sun; conveyor levels deliver seed packets and take no sun for plants', () => {
    const day = newLawn(6, 1);
    advance(day, 16_000);
    expect(day.sun).toBe(150 + 50);
    expect(placePlant(day, 'sunflower', 0, 4)).toBeNull();
    expect(day.sun).toBe(150);
    expect(placePlant(day, 'sunflower', 0, 4)).toBe('occupied');

    const belt = newLawn(10, 1);
    expect(belt.level.conveyor).toBe(true);
    expect(placePlant(belt, 'peashooter', 0, 5)).toBe('not-on-belt');
    advance(belt, 16_000);
    expect(belt.sun).toBe(150);
    expect(belt.belt.length).toBeGreaterThan(0);
    const kind = belt.belt[0]!;
    expect(placePlant(belt, kind, 1, 5)).toBeNull();
    expect(belt.sun).toBe(150);
  });

  it('the lawn mower clears a row once; a zombie at the house without one loses the attempt', () => {
    const lawn = newLawn(6, 1);
    for (let row = 0; row < 5; row++) for (const c of [1, 2]) digPlant(lawn, row, c);
    const events = advance(lawn, 400_000);
    expect(events.filter((e) => e.type === 'mower').length).toBeGreaterThan(0);
    expect(lawn.lastMowerAtMs).not.toBeNull();
    expect(lawn.result).toBe('lost');
    expect(events.at(-1)).toEqual({ type: 'lost' });
  });

  it('the demo garden wins an unattended level and reports cleared waves', () => {
    const lawn = newLawn(24, 1);
    const events = advance(lawn, 400_000);
    expect(lawn.result).toBe('won');
    expect(events.filter((e) => e.type === 'wave-cleared').map((e) => (e as { wave: number }).wave).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('fog conceals the right of the lawn; the context passes the strict adventure schema', () => {
    const fog = newLawn(33, 1);
    expect(fog.fogFromColumn).toBe(5);
    expect(concealed(fog, 4)).toBe(false);
    expect(concealed(fog, 5)).toBe(true);
    advance(fog, 40_000);
    const ctx = companionContext(fog, extra);
    expect(companionContextSchema.parse(ctx)).toEqual(ctx);
    expect(ctx.lawn.fogFromColumn).toBe(5);
    expect(companionContextSchema.parse(companionContext(newLawn(6, 1), extra)).lawn.fogFromColumn).toBeNull();
  });
});
