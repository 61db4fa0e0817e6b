import { z } from 'zod';
import { COLUMNS, type Lawn, newLawn, ROWS } from './lawn.ts';

/**
 * The lawn's own progress as a save chunk of the demo board, written together with the companion
 * chunks 21–23 so that a reload resumes the lawn at the same moment as the tin and the used offers
 * (never the lawn at 0 s with the tin of a later moment). The level's waves are not stored: they
 * are rebuilt from the level and cycle, which makes them identical.
 */
export const LAWN_CHUNK = 100;

const finite = z.number().finite();
const count = z.number().int().min(0);
const plantKind = z.enum(['sunflower', 'peashooter', 'wall-nut', 'cherry-bomb']);
const row = z.number().int().min(0).max(ROWS - 1);

const snapshotSchema = z.strictObject({
  version: z.literal(1),
  level: z.number().int().min(1).max(50),
  cycle: z.number().int().min(1).max(999),
  simMs: count,
  sun: count.max(1_000_000),
  plants: z
    .array(z.strictObject({ id: count, kind: plantKind, row, column: z.number().int().min(0).max(COLUMNS - 1), hp: finite, nextAtMs: finite }))
    .max(ROWS * COLUMNS),
  zombies: z.array(z.strictObject({ id: count, kind: z.string().max(40), row, x: finite, hp: finite, wave: count })).max(500),
  peas: z.array(z.strictObject({ row, x: finite })).max(500),
  mowers: z.array(z.boolean()).length(ROWS),
  lastMowerAtMs: count.nullable(),
  nextWave: count,
  clearedWaves: z.array(count).max(100),
  nextSkySunAtMs: count,
  belt: z.array(plantKind).max(10),
  nextBeltAtMs: count,
  bonusSeeds: z.array(plantKind).max(10),
  rng: count,
  nextId: count,
});

export type LawnSnapshot = z.infer<typeof snapshotSchema>;

/** The state to save; only for a lawn still being played (an ended attempt is never resumed). */
export function lawnSnapshot(lawn: Lawn): LawnSnapshot | null {
  if (lawn.result !== 'in-progress') return null;
  return {
    version: 1,
    level: lawn.level.level,
    cycle: lawn.cycle,
    simMs: lawn.simMs,
    sun: lawn.sun,
    plants: lawn.plants.map((p) => ({ ...p })),
    zombies: lawn.zombies.map((z) => ({ ...z })),
    peas: lawn.peas.map((p) => ({ ...p })),
    mowers: [...lawn.mowers],
    lastMowerAtMs: lawn.lastMowerAtMs,
    nextWave: lawn.nextWave,
    clearedWaves: [...lawn.clearedWaves],
    nextSkySunAtMs: lawn.nextSkySunAtMs,
    belt: [...lawn.belt],
    nextBeltAtMs: lawn.nextBeltAtMs,
    bonusSeeds: [...lawn.bonusSeeds],
    rng: lawn.rng,
    nextId: lawn.nextId,
  };
}

/** A lawn from a saved snapshot, or null when it is unreadable or does not fit the level's waves. */
export function restoreLawn(raw: unknown): Lawn | null {
  const parsed = snapshotSchema.safeParse(raw);
  if (!parsed.success) return null;
  const s = parsed.data;
  const lawn = newLawn(s.level, s.cycle);
  if (s.nextWave > lawn.waves.length) return null;
  return {
    ...lawn,
    simMs: s.simMs,
    sun: s.sun,
    plants: s.plants,
    zombies: s.zombies,
    peas: s.peas,
    mowers: s.mowers,
    lastMowerAtMs: s.lastMowerAtMs,
    nextWave: s.nextWave,
    clearedWaves: s.clearedWaves,
    nextSkySunAtMs: s.nextSkySunAtMs,
    belt: s.belt,
    nextBeltAtMs: s.nextBeltAtMs,
    bonusSeeds: s.bonusSeeds,
    rng: s.rng,
    nextId: s.nextId,
  };
}
