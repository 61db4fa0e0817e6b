/**
 * Every number the companion rules and routes depend on (seed 001 §2.1, §3, §8), in one place.
 * Times are milliseconds. "Active" and "simulation" times only advance while the board plays;
 * "wall" times are real elapsed time. Nothing here reads a clock: callers pass times in.
 */

const KiB = 1024;

export const COMPANION_LIMITS = {
  /** Generation request body (HTTP). */
  generationBodyMaxBytes: 24 * KiB,
  /** Notebook mutation request body (HTTP). */
  notebookBodyMaxBytes: 12 * KiB,
  /** Stored notebook JSON, enforced by a database CHECK constraint. */
  notebookStoredMaxBytes: 64 * KiB,
  generationsPerMinute: 8,
  activeGenerationsPerAccount: 1,
  notebookRequestsPerMinute: 60,
  generationDeadlineMs: 20_000,
  outputTokens: 500,
  /** Saved dialogue messages placed into one prompt. */
  promptDialogueMessages: 12,
} as const;

export const NOTEBOOK_BOUNDS = {
  turns: 24,
  milestones: 80,
  pinnedNotes: 8,
  statements: 8,
  chapterMarkers: 30,
  /** Per-entry text caps (UTF-8 bytes). Turns are the only entries trimmed by the byte budget. */
  turnTextMaxBytes: 4 * KiB,
  noteTextMaxBytes: 512,
  statementMaxChars: 160,
  milestoneDetailMaxBytes: 256,
} as const;

export const TIN = {
  /** Sun the player must hold to buy. */
  sunNeeded: 100,
  /** Sun taken by the purchase (the disclosed cost). */
  cost: 25,
  /** Sun added when a lucky tin is opened. */
  reward: 75,
  invitationVisibleMs: 8_000,
  /** The offer stays acceptable for this much active play. */
  offerValidMs: 30_000,
  idleMinMs: 60_000,
  idleMaxMs: 120_000,
  /** No invitation while a lawn mower fired within this window (simulation time). */
  mowerWindowMs: 20_000,
  asideMs: 6_000,
  /** Session (wall-clock) cooldown between two defeat asides. */
  asideCooldownMs: 120_000,
  /** Outcome buckets out of which `luckyBuckets` pay the reward: three of four. */
  outcomeBuckets: 4,
  luckyBuckets: 3,
} as const;

export const OFFERS = {
  giftSun: 50,
  /** The first gift ever is only offered while the player holds less than this. */
  firstGiftBelowSun: 100,
  cherryBombMinSun: 100,
  cherryBombMaxSun: 150,
  cherryBombStepSun: 25,
  challengeRewardSun: 75,
} as const;

export const PROACTIVE = {
  maxPerLevel: 2,
  minGapSimMs: 90_000,
} as const;

/** Adventure difficulty: four times the original weighted zombie budget (not 5×, not 4× bodies). */
export const ADVENTURE_BUDGET_MULTIPLIER = 4;
