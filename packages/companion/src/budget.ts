import { ADVENTURE_BUDGET_MULTIPLIER } from './limits.ts';

/** Weighted cost of each zombie in the original wave budget. */
export const ZOMBIE_WEIGHTS: Readonly<Record<string, number>> = {
  zombie: 1,
  'flag-zombie': 1,
  'conehead-zombie': 2,
  'pole-vaulting-zombie': 2,
  'buckethead-zombie': 4,
  'newspaper-zombie': 2,
  'screen-door-zombie': 4,
  'football-zombie': 7,
  'dancing-zombie': 5,
  'ducky-tube-zombie': 1,
  'snorkel-zombie': 3,
  zomboni: 7,
  'dolphin-rider-zombie': 3,
  'jack-in-the-box-zombie': 3,
  'balloon-zombie': 2,
  'digger-zombie': 4,
  'pogo-zombie': 4,
  'bungee-zombie': 3,
  'ladder-zombie': 4,
  'catapult-zombie': 5,
  gargantuar: 10,
};

/** Adventure difficulty: 4× the original weighted budget of a wave (not 4× the bodies). */
export function adventureWaveBudget(originalBudget: number): number {
  return originalBudget * ADVENTURE_BUDGET_MULTIPLIER;
}

/**
 * Fill a wave up to `budget` weight from `allowed` zombies. `random` is the simulation's own random
 * generator (returns [0, 1)); heavier zombies fill the budget with fewer bodies.
 */
export function composeWave(budget: number, allowed: readonly string[], random: () => number): string[] {
  const candidates = allowed.filter((name) => (ZOMBIE_WEIGHTS[name] ?? 0) > 0);
  const wave: string[] = [];
  let left = budget;
  for (;;) {
    const fitting = candidates.filter((name) => ZOMBIE_WEIGHTS[name]! <= left);
    if (fitting.length === 0) return wave;
    const pick = fitting[Math.min(fitting.length - 1, Math.floor(random() * fitting.length))]!;
    wave.push(pick);
    left -= ZOMBIE_WEIGHTS[pick]!;
  }
}

export function waveWeight(wave: readonly string[]): number {
  return wave.reduce((sum, name) => sum + (ZOMBIE_WEIGHTS[name] ?? 0), 0);
}
