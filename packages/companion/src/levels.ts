/**
 * Adventure levels as the companion rules see them. Levels are numbered 1..50 across the five
 * chapters (1-1 is level 1, 5-10 is level 50). The game engine owns the real level data; it may
 * pass its own descriptor, and `adventureLevel` gives the default for the original campaign.
 */

export const CHAPTERS = ['day', 'night', 'pool', 'fog', 'roof'] as const;
export type ChapterId = (typeof CHAPTERS)[number];

export const LEVELS_PER_CHAPTER = 10;
export const ADVENTURE_LEVELS = CHAPTERS.length * LEVELS_PER_CHAPTER;

export interface LevelDescriptor {
  /** 1..50 */
  level: number;
  chapter: ChapterId;
  /** 1..10 inside the chapter */
  stage: number;
  /** Seed packets arrive on a conveyor belt instead of being bought with sun. */
  conveyor: boolean;
  vasePuzzle: boolean;
  finalBoss: boolean;
  /** Part of the lawn is concealed by fog. */
  fog: boolean;
}

/** Stage 10 of every chapter and the conveyor mini-games (1-5 bowling, 3-5, 5-5) use a conveyor. */
const CONVEYOR_LEVELS = new Set([5, 10, 20, 25, 30, 40, 45, 50]);
const VASE_LEVELS = new Set([35]);
const FINAL_BOSS_LEVEL = 50;

export function chapterOf(level: number): ChapterId {
  const index = Math.min(CHAPTERS.length - 1, Math.max(0, Math.floor((level - 1) / LEVELS_PER_CHAPTER)));
  return CHAPTERS[index]!;
}

/** First and last level of a chapter (the "chapter boundaries" the prompt receives). */
export function chapterBounds(chapter: ChapterId): { first: number; last: number } {
  const index = CHAPTERS.indexOf(chapter);
  return { first: index * LEVELS_PER_CHAPTER + 1, last: (index + 1) * LEVELS_PER_CHAPTER };
}

export function adventureLevel(level: number): LevelDescriptor {
  if (!Number.isInteger(level) || level < 1 || level > ADVENTURE_LEVELS) {
    throw new RangeError(`adventure level must be an integer 1..${ADVENTURE_LEVELS}, got ${level}`);
  }
  const chapter = chapterOf(level);
  return {
    level,
    chapter,
    stage: ((level - 1) % LEVELS_PER_CHAPTER) + 1,
    conveyor: CONVEYOR_LEVELS.has(level),
    vasePuzzle: VASE_LEVELS.has(level),
    finalBoss: level === FINAL_BOSS_LEVEL,
    fog: chapter === 'fog' && !VASE_LEVELS.has(level),
  };
}

/** "2-3" style label. */
export function levelLabel(level: number): string {
  return `${Math.floor((level - 1) / LEVELS_PER_CHAPTER) + 1}-${((level - 1) % LEVELS_PER_CHAPTER) + 1}`;
}
