import type { BoardMoment } from './eligibility.ts';

/** Test fixture: a calm board moment at `activeMs` of active play (nothing defers an invitation), with overrides. */
export const quietMoment = (activeMs: number, over: Partial<BoardMoment> = {}): BoardMoment => ({
  activeMs,
  paused: false,
  houseDanger: false,
  lastMowerAtMs: null,
  finalWaveSpawned: false,
  companionScene: false,
  modalOpen: false,
  scriptedSequence: false,
  transition: false,
  ...over,
});
