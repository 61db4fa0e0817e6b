import { levelHash } from './hash.ts';
import type { LevelDescriptor } from './levels.ts';
import { TIN } from './limits.ts';

/** Why a level never gets the item encounter (seed §3.3.1). */
export type LevelExclusion = 'opening-level' | 'conveyor' | 'vase-puzzle' | 'final-boss';

export function levelExclusion(level: LevelDescriptor): LevelExclusion | null {
  if (level.level <= 4) return 'opening-level';
  if (level.conveyor) return 'conveyor';
  if (level.vasePuzzle) return 'vase-puzzle';
  if (level.finalBoss) return 'final-boss';
  return null;
}

export function isLevelEligible(level: LevelDescriptor): boolean {
  return levelExclusion(level) === null;
}

/** About two thirds of eligible levels get one invitation, decided per level and campaign cycle. */
export function levelGetsInvitation(level: LevelDescriptor, cycle: number): boolean {
  return isLevelEligible(level) && levelHash('invitation', level.level, cycle) % 3 !== 0;
}

export type TinOutcome = 'sun' | 'empty';

/**
 * The tin's contents: three of four outcome buckets pay 75 sun. Salted with level and campaign
 * cycle and independent of the simulation random generator, so replaying the same level and cycle
 * repeats the outcome. The encounter fixes it when the offer appears, before any purchase.
 */
export function tinOutcome(level: number, cycle: number): TinOutcome {
  return levelHash('tin-outcome', level, cycle) % TIN.outcomeBuckets < TIN.luckyBuckets ? 'sun' : 'empty';
}

/** The varied quiet period before an invitation: 60 to 120 s of active play, per level and cycle. */
export function invitationDelayMs(level: number, cycle: number): number {
  const span = TIN.idleMaxMs - TIN.idleMinMs;
  return TIN.idleMinMs + (levelHash('idle-delay', level, cycle) % (span + 1));
}

/** The board as seen at one moment of active play; every time is simulation time of this board. */
export interface BoardMoment {
  /** Active play on this board so far (does not advance while paused). */
  activeMs: number;
  paused: boolean;
  /** A zombie is about to reach the house (see `houseInDanger`). */
  houseDanger: boolean;
  /** Active time at which a lawn mower last fired, or null. */
  lastMowerAtMs: number | null;
  /** The final wave has spawned. */
  finalWaveSpawned: boolean;
  /** One of the original authored companion scenes is playing. */
  companionScene: boolean;
  /** Another modal screen (almanac, menu, shop, dialog) is open. */
  modalOpen: boolean;
  /** A scripted sequence (tutorial, cut-in) is running. */
  scriptedSequence: boolean;
  /** A level or chapter transition is running. */
  transition: boolean;
}

export type Deferral =
  | 'paused'
  | 'house-danger'
  | 'mower-recent'
  | 'final-wave'
  | 'companion-scene'
  | 'modal'
  | 'scripted-sequence'
  | 'transition';

/** Why an invitation must wait at this moment, or null if it may appear (seed §3.3.1, §3.3.3). */
export function invitationDeferral(moment: BoardMoment): Deferral | null {
  if (moment.paused) return 'paused';
  if (moment.transition) return 'transition';
  if (moment.modalOpen) return 'modal';
  if (moment.scriptedSequence) return 'scripted-sequence';
  if (moment.companionScene) return 'companion-scene';
  if (moment.finalWaveSpawned) return 'final-wave';
  if (moment.houseDanger) return 'house-danger';
  if (moment.lastMowerAtMs !== null && moment.activeMs - moment.lastMowerAtMs < TIN.mowerWindowMs) {
    return 'mower-recent';
  }
  return null;
}

/**
 * Immediate house danger: a zombie within `columns` lawn columns of the house (column 0 is the
 * house edge, 9 the far right). The engine may pass its own judgement instead.
 */
export function houseInDanger(zombieColumns: readonly number[], columns = 1.5): boolean {
  return zombieColumns.some((c) => c < columns);
}
