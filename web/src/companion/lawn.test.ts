import { ADVENTURE_BUDGET_MULTIPLIER, companionContextSchema, waveWeight } from '@yumina/companion';
import { describe, expect, it } from 'vitest';
import {
  advance,
  companionContext,
  concealed,
  type Lawn,
  newLawn,
  originalWaveBudget,
  placePlant,
  plantAt,
  ROWS,
  WAVES_PER_LEVEL,
} from './lawn.ts';

/**
 * A sensible player, as a person would play the first chapter: a Sunflower in every row first,
 * a Peashooter at once in any row a zombie walks into, then two Peashooters per row, then a line
 * of Wall-nuts, saving sun for what comes next rather than spending it on whatever is affordable.
 */
function sensibleMove(lawn: Lawn): void {
  const rows = [...Array(ROWS).keys()];
  const count = (row: number, kind: string) => lawn.plants.filter((p) => p.row === row && p.kind === kind).length;
  const free = (row: number) => [1, 2, 3, 4, 5].find((c) => !plantAt(lawn, row, c)) ?? -1;
  const plant = (kind: 'sunflower' | 'peashooter' | 'wall-nut', row: number, column: number, cost: number) => {
    if (lawn.sun >= cost) expect(placePlant(lawn, kind, row, column)).toBeNull();
  };
  const threatened = rows
    .filter((r) => lawn.zombies.some((z) => z.row === r && z.x < 9.5))
    .sort((a, b) => count(a, 'peashooter') - count(b, 'peashooter'));
  const undefended = threatened.find((r) => count(r, 'peashooter') === 0);
  if (undefended !== undefined) return plant('peashooter', undefended, free(undefended), 100);
  const bare = rows.find((r) => count(r, 'sunflower') === 0);
  if (bare !== undefined) return plant('sunflower', bare, 0, 50);
  for (const want of [1, 2]) {
    const row = [...threatened, ...rows].find((r) => count(r, 'peashooter') < want);
    if (row !== undefined) return plant('peashooter', row, free(row), 100);
  }
  const open = rows.find((r) => !plantAt(lawn, r, 6));
  if (open !== undefined) return plant('wall-nut', open, 6, 50);
}

function play(lawn: Lawn, move: (lawn: Lawn) => void): void {
  for (let t = 0; lawn.result === 'in-progress' && t < 900_000; t += 500) {
    move(lawn);
    advance(lawn, 500);
  }
}

const extra = { locale: 'en' as const, tin: { phase: 'none' as const }, nativeLoss: false, selectedPlants: ['peashooter' as const] };

describe('demo lawn', () => {
  it('is deterministic for a level, cycle and seed, and waves use 4× the weighted budget', () => {
    const a = newLawn(12, 1);
    const b = newLawn(12, 1);
    expect(a.waves).toEqual(b.waves);
    expect(a.waves).toHaveLength(WAVES_PER_LEVEL);
    a.waves.forEach((w, i) => {
      const budget = originalWaveBudget(12, i) * ADVENTURE_BUDGET_MULTIPLIER;
      // The final wave adds its flag zombie on top of the budget.
      expect(waveWeight(w.zombies) - (i === WAVES_PER_LEVEL - 1 ? 1 : 0)).toBe(budget);
    });
    advance(a, 120_000);
    advance(b, 120_000);
    expect(a.sun).toBe(b.sun);
    expect(a.zombies).toEqual(b.zombies);
  });

  it('a level starts with an empty lawn and sun to spend; day levels collect sky sun; conveyor levels deliver seed packets', () => {
    const day = newLawn(6, 1);
    expect(day.plants).toEqual([]);
    expect(day.sun).toBe(50);
    expect(newLawn(12, 1).sun).toBe(150); // night: no sky sun, more to start with
    advance(day, 16_000);
    expect(day.sun).toBe(50 + 50);
    expect(placePlant(day, 'sunflower', 0, 4)).toBeNull();
    expect(day.sun).toBe(50);
    expect(placePlant(day, 'sunflower', 0, 4)).toBe('occupied');
    expect(placePlant(day, 'peashooter', 1, 4)).toBe('not-enough-sun');

    const belt = newLawn(10, 1);
    expect(belt.level.conveyor).toBe(true);
    expect(placePlant(belt, 'peashooter', 0, 5)).toBe('not-on-belt');
    advance(belt, 16_000);
    expect(belt.belt.length).toBeGreaterThan(0);
    const sun = belt.sun;
    const kind = belt.belt[0]!;
    expect(placePlant(belt, kind, 1, 5)).toBeNull();
    expect(belt.sun).toBe(sun);
  });

  it('waves get harder by level', () => {
    const weight = (level: number) => newLawn(level, 1).waves.reduce((sum, w) => sum + waveWeight(w.zombies), 0);
    for (const [easier, harder] of [
      [6, 12],
      [12, 24],
      [24, 41],
    ] as const) {
      expect(originalWaveBudget(harder, 5)).toBeGreaterThan(originalWaveBudget(easier, 5));
      expect(weight(harder), `${easier} < ${harder}`).toBeGreaterThan(weight(easier));
    }
  });

  it('the lawn mower clears a row once; a zombie at the house without one loses the attempt', () => {
    const lawn = newLawn(6, 1);
    const events = advance(lawn, 400_000);
    expect(events.filter((e) => e.type === 'mower').length).toBeGreaterThan(0);
    expect(lawn.lastMowerAtMs).not.toBeNull();
    expect(lawn.result).toBe('lost');
    expect(events.at(-1)).toEqual({ type: 'lost' });
  });

  it('level 1-6 with no input is lost; played sensibly it is won, every wave cleared', () => {
    const careless = newLawn(6, 1);
    play(careless, () => {});
    expect(careless.result).toBe('lost');

    const sensible = newLawn(6, 1);
    const cleared: number[] = [];
    for (let t = 0; sensible.result === 'in-progress' && t < 900_000; t += 500) {
      sensibleMove(sensible);
      for (const e of advance(sensible, 500)) if (e.type === 'wave-cleared') cleared.push(e.wave);
    }
    expect(sensible.result).toBe('won');
    expect(cleared.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
    // Planting only Sunflowers (careless in another way) loses too.
    const greedy = newLawn(6, 1);
    play(greedy, (l) => {
      const row = [...Array(ROWS).keys()].find((r) => !plantAt(l, r, 0) || !plantAt(l, r, 1));
      if (row !== undefined && l.sun >= 50) placePlant(l, 'sunflower', row, plantAt(l, row, 0) ? 1 : 0);
    });
    expect(greedy.result).toBe('lost');
  });

  it('the first chapter is winnable by the same sensible play on its sun-paid levels', () => {
    for (const level of [1, 2, 3, 4, 6, 7, 8, 9]) {
      const lawn = newLawn(level, 1);
      play(lawn, sensibleMove);
      expect(lawn.result, `level ${level}`).toBe('won');
    }
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
