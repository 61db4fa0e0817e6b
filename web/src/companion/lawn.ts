import {
  ADVENTURE_LEVELS,
  adventureLevel,
  adventureWaveBudget,
  type CompanionContext,
  composeWave,
  houseInDanger,
  type LevelDescriptor,
} from '@yumina/companion';

/**
 * The demo board's lawn: a small, deterministic lawn-defence simulation (sun, plants, zombies,
 * waves, lawn mowers, fog, conveyor belt). It knows nothing about the companion; the page feeds
 * its moments into the companion rules (startBoard / stepBoard). Time advances only through
 * `advance`, which the page calls only while the board is not paused.
 */

export const ROWS = 5;
export const COLUMNS = 9;
export const TICK_MS = 50;

export type PlantKind = 'sunflower' | 'peashooter' | 'wall-nut' | 'cherry-bomb';

export const PLANTS: Record<PlantKind, { name: string; cost: number; hp: number }> = {
  sunflower: { name: 'Sunflower', cost: 50, hp: 6 },
  peashooter: { name: 'Peashooter', cost: 100, hp: 6 },
  'wall-nut': { name: 'Wall-nut', cost: 50, hp: 40 },
  'cherry-bomb': { name: 'Cherry Bomb', cost: 150, hp: 1 },
};

const ZOMBIE_HP: Record<string, number> = { zombie: 10, 'flag-zombie': 10, 'conehead-zombie': 20, 'buckethead-zombie': 40 };
export const ZOMBIE_NAMES: Record<string, string> = {
  zombie: 'Zombie',
  'flag-zombie': 'Flag Zombie',
  'conehead-zombie': 'Conehead Zombie',
  'buckethead-zombie': 'Buckethead Zombie',
};

export interface Plant {
  id: number;
  kind: PlantKind;
  row: number;
  column: number;
  hp: number;
  /** Sim time of the next shot or sun. */
  nextAtMs: number;
}

export interface Zombie {
  id: number;
  kind: string;
  row: number;
  /** Column position, 9 at the street edge, below 0 at the house. */
  x: number;
  hp: number;
  wave: number;
}

export interface Pea {
  row: number;
  x: number;
}

export interface Wave {
  atMs: number;
  zombies: string[];
}

export interface Lawn {
  level: LevelDescriptor;
  cycle: number;
  simMs: number;
  sun: number;
  plants: Plant[];
  zombies: Zombie[];
  peas: Pea[];
  mowers: boolean[];
  lastMowerAtMs: number | null;
  waves: Wave[];
  /** Index of the next wave to spawn (0-based); equals waves.length once all spawned. */
  nextWave: number;
  /** Waves whose zombies have all been defeated (1-based numbers). */
  clearedWaves: number[];
  nextSkySunAtMs: number;
  /** Conveyor levels: seed packets on the belt instead of sun costs. */
  belt: PlantKind[];
  nextBeltAtMs: number;
  /** Temporary seed packets granted by the companion (usable on this level only). */
  bonusSeeds: PlantKind[];
  /** Columns at or right of this are hidden by fog (null without fog). */
  fogFromColumn: number | null;
  rng: number;
  nextId: number;
  result: 'in-progress' | 'won' | 'lost';
}

export type LawnEvent = { type: 'wave-spawned'; wave: number } | { type: 'wave-cleared'; wave: number } | { type: 'mower'; row: number } | { type: 'won' } | { type: 'lost' };

/** The simulation's own random generator (independent of the companion's outcome hashes). */
function nextRandom(lawn: Lawn): number {
  let x = lawn.rng | 0;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  lawn.rng = x >>> 0 || 1;
  return lawn.rng / 0x100000000;
}

export const WAVES_PER_LEVEL = 6;
const FIRST_WAVE_MS = 30_000;
const WAVE_GAP_MS = 24_000;
const ZOMBIE_SPEED_COLUMNS_PER_S = 0.18;
const PEA_SPEED_COLUMNS_PER_S = 5;
const SHOT_MS = 1_000;
const SUNFLOWER_MS = 12_000;
const SKY_SUN_MS = 8_000;
const BELT_MS = 7_000;
const BITE_HP_PER_S = 2;

function allowedZombies(level: LevelDescriptor): string[] {
  if (level.level <= 3) return ['zombie'];
  if (level.level <= 8) return ['zombie', 'conehead-zombie'];
  return ['zombie', 'conehead-zombie', 'buckethead-zombie'];
}

/** Sun at the start of a level: enough for one Sunflower; night and fog (no sky sun) get three. */
export function startingSun(level: LevelDescriptor): number {
  return skySun(level) ? 50 : 150;
}

function skySun(level: LevelDescriptor): boolean {
  return level.chapter !== 'night' && level.chapter !== 'fog';
}

/**
 * The original weighted budget of wave `index` (0-based) on `level`: it grows every other wave and
 * every few levels, so later levels are harder. Adventure spends 4× that budget.
 */
export function originalWaveBudget(level: number, index: number): number {
  return Math.ceil((index + 1) / 2) + Math.floor((level - 1) / 10);
}

/** A new attempt of a level: an empty lawn, sun to spend, five lawn mowers and the level's waves. */
export function newLawn(levelNumber: number, cycle: number, seed = 1): Lawn {
  const level = adventureLevel(Math.min(ADVENTURE_LEVELS, Math.max(1, Math.trunc(levelNumber))));
  const lawn: Lawn = {
    level,
    cycle,
    simMs: 0,
    sun: startingSun(level),
    plants: [],
    zombies: [],
    peas: [],
    mowers: Array.from({ length: ROWS }, () => true),
    lastMowerAtMs: null,
    waves: [],
    nextWave: 0,
    clearedWaves: [],
    nextSkySunAtMs: SKY_SUN_MS,
    belt: [],
    nextBeltAtMs: 2_000,
    bonusSeeds: [],
    fogFromColumn: level.fog ? 5 : null,
    rng: (seed * 2654435761 + level.level * 40503 + cycle) >>> 0 || 1,
    nextId: 1,
    result: 'in-progress',
  };
  // Waves: the original weighted budget; adventure uses 4× that budget (not 4× the bodies).
  for (let i = 0; i < WAVES_PER_LEVEL; i++) {
    const zombies = composeWave(adventureWaveBudget(originalWaveBudget(level.level, i)), allowedZombies(level), () => nextRandom(lawn));
    if (i === WAVES_PER_LEVEL - 1) zombies.unshift('flag-zombie');
    lawn.waves.push({ atMs: FIRST_WAVE_MS + i * WAVE_GAP_MS, zombies });
  }
  return lawn;
}

export function plantAt(lawn: Lawn, row: number, column: number): Plant | undefined {
  return lawn.plants.find((p) => p.row === row && p.column === column);
}

export type PlaceRefusal = 'occupied' | 'not-enough-sun' | 'not-on-belt' | 'off-lawn' | 'over';

/** Places a plant: paid with sun, or taken from the conveyor belt, or from a temporary bonus packet. */
export function placePlant(lawn: Lawn, kind: PlantKind, row: number, column: number): PlaceRefusal | null {
  if (lawn.result !== 'in-progress') return 'over';
  if (row < 0 || row >= ROWS || column < 0 || column >= COLUMNS) return 'off-lawn';
  if (plantAt(lawn, row, column)) return 'occupied';
  const bonus = lawn.bonusSeeds.indexOf(kind);
  if (bonus >= 0) lawn.bonusSeeds.splice(bonus, 1);
  else if (lawn.level.conveyor) {
    const at = lawn.belt.indexOf(kind);
    if (at < 0) return 'not-on-belt';
    lawn.belt.splice(at, 1);
  } else {
    if (lawn.sun < PLANTS[kind].cost) return 'not-enough-sun';
    lawn.sun -= PLANTS[kind].cost;
  }
  if (kind === 'cherry-bomb') {
    // Explodes at once: every zombie within one cell around it.
    lawn.zombies = lawn.zombies.filter((z) => !(Math.abs(z.row - row) <= 1 && Math.abs(z.x - column) <= 1.5));
    return null;
  }
  lawn.plants.push({ id: lawn.nextId++, kind, row, column, hp: PLANTS[kind].hp, nextAtMs: lawn.simMs + (kind === 'sunflower' ? SUNFLOWER_MS / 2 : 0) });
  return null;
}

/** Digs a plant up with the shovel. Returns whether something was dug. */
export function digPlant(lawn: Lawn, row: number, column: number): boolean {
  const before = lawn.plants.length;
  lawn.plants = lawn.plants.filter((p) => !(p.row === row && p.column === column));
  return lawn.plants.length < before;
}

/** Advances the lawn by `ms` of simulation time in fixed ticks. Mutates and returns what happened. */
export function advance(lawn: Lawn, ms: number): LawnEvent[] {
  const events: LawnEvent[] = [];
  let left = ms;
  while (left > 0 && lawn.result === 'in-progress') {
    const dt = Math.min(TICK_MS, left);
    left -= dt;
    tick(lawn, dt, events);
  }
  return events;
}

function tick(lawn: Lawn, dt: number, events: LawnEvent[]): void {
  lawn.simMs += dt;
  const now = lawn.simMs;
  // Sun from the sky (collected automatically), or seed packets on the conveyor.
  if (lawn.level.conveyor) {
    if (now >= lawn.nextBeltAtMs) {
      lawn.nextBeltAtMs += BELT_MS;
      if (lawn.belt.length < 5) {
        const kinds: PlantKind[] = ['peashooter', 'peashooter', 'wall-nut', 'cherry-bomb'];
        lawn.belt.push(kinds[Math.floor(nextRandom(lawn) * kinds.length)]!);
      }
    }
  } else if (now >= lawn.nextSkySunAtMs && skySun(lawn.level)) {
    lawn.nextSkySunAtMs += SKY_SUN_MS;
    lawn.sun += 25;
  }
  // Waves.
  const wave = lawn.waves[lawn.nextWave];
  if (wave && now >= wave.atMs) {
    const number = ++lawn.nextWave;
    for (const kind of wave.zombies) {
      const row = Math.floor(nextRandom(lawn) * ROWS);
      lawn.zombies.push({ id: lawn.nextId++, kind, row, x: COLUMNS + nextRandom(lawn) * 1.5, hp: ZOMBIE_HP[kind] ?? 10, wave: number });
    }
    events.push({ type: 'wave-spawned', wave: number });
  }
  // Plants act.
  for (const p of lawn.plants) {
    if (now < p.nextAtMs) continue;
    if (p.kind === 'sunflower') {
      lawn.sun += 25;
      p.nextAtMs = now + SUNFLOWER_MS;
    } else if (p.kind === 'peashooter' && lawn.zombies.some((z) => z.row === p.row && z.x >= p.column && z.x < COLUMNS)) {
      lawn.peas.push({ row: p.row, x: p.column + 0.5 });
      p.nextAtMs = now + SHOT_MS;
    }
  }
  // Peas fly and hit the first zombie in their row.
  const flying: Pea[] = [];
  for (const pea of lawn.peas) {
    pea.x += (PEA_SPEED_COLUMNS_PER_S * dt) / 1000;
    const target = lawn.zombies.filter((z) => z.row === pea.row && z.x <= pea.x && z.x > pea.x - 1).sort((a, b) => a.x - b.x)[0];
    if (target) target.hp -= 1;
    else if (pea.x < COLUMNS + 1) flying.push(pea);
  }
  lawn.peas = flying;
  // Zombies walk, or eat the plant in front of them.
  for (const z of lawn.zombies) {
    if (z.hp <= 0) continue;
    const blocking = lawn.plants.find((p) => p.row === z.row && p.hp > 0 && z.x - p.column < 0.8 && z.x - p.column > -0.2);
    if (blocking) blocking.hp -= (BITE_HP_PER_S * dt) / 1000;
    else z.x -= (ZOMBIE_SPEED_COLUMNS_PER_S * dt) / 1000;
  }
  lawn.plants = lawn.plants.filter((p) => p.hp > 0);
  // The house edge: a lawn mower clears the row once; without one the attempt is lost.
  for (const z of lawn.zombies) {
    if (z.hp > 0 && z.x < 0) {
      if (lawn.mowers[z.row]) {
        lawn.mowers[z.row] = false;
        lawn.lastMowerAtMs = now;
        for (const other of lawn.zombies) if (other.row === z.row) other.hp = 0;
        events.push({ type: 'mower', row: z.row });
      } else {
        lawn.result = 'lost';
        events.push({ type: 'lost' });
        return;
      }
    }
  }
  const defeated = lawn.zombies.filter((z) => z.hp <= 0);
  lawn.zombies = lawn.zombies.filter((z) => z.hp > 0);
  if (defeated.length) {
    for (let n = 1; n <= lawn.nextWave; n++) {
      if (!lawn.clearedWaves.includes(n) && !lawn.zombies.some((z) => z.wave === n)) {
        lawn.clearedWaves.push(n);
        events.push({ type: 'wave-cleared', wave: n });
      }
    }
  }
  if (lawn.nextWave === lawn.waves.length && lawn.zombies.length === 0) {
    lawn.result = 'won';
    events.push({ type: 'won' });
  }
}

export function finalWaveSpawned(lawn: Lawn): boolean {
  return lawn.nextWave >= lawn.waves.length;
}

export function houseDanger(lawn: Lawn): boolean {
  return houseInDanger(lawn.zombies.map((z) => z.x));
}

/** Whether a lawn cell is hidden by fog. */
export function concealed(lawn: Lawn, column: number): boolean {
  return lawn.fogFromColumn !== null && column >= lawn.fogFromColumn;
}

/** The strict adventure context a generation request carries. Fog-hidden entities are left to the server rules to omit. */
export function companionContext(
  lawn: Lawn,
  extra: { locale: CompanionContext['locale']; tin: CompanionContext['tin']; nativeLoss: boolean; selectedPlants: PlantKind[] },
): CompanionContext {
  const clampColumn = (x: number) => Math.max(0, Math.min(10, Math.round(x * 10) / 10));
  return {
    mode: 'adventure',
    level: lawn.level.level,
    cycle: lawn.cycle,
    locale: extra.locale,
    sun: Math.min(99_999, lawn.sun),
    wave: { next: Math.min(100, lawn.nextWave + 1), total: lawn.waves.length, finalWaveSpawned: finalWaveSpawned(lawn) },
    selectedPlants: extra.selectedPlants.map((k) => PLANTS[k].name),
    lawn: {
      rows: ROWS,
      fogFromColumn: lawn.fogFromColumn,
      plants: lawn.plants.slice(0, 80).map((p) => ({ name: PLANTS[p.kind].name, row: p.row, column: p.column })),
      zombies: lawn.zombies.slice(0, 120).map((z) => ({ name: ZOMBIE_NAMES[z.kind] ?? 'Zombie', row: z.row, column: clampColumn(z.x) })),
    },
    tin: extra.tin,
    nativeLoss: extra.nativeLoss,
  };
}
