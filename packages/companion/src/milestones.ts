import type { EncounterMilestone } from './encounter.ts';
import type { MilestoneInput } from './notebook.ts';
import type { OfferRecord } from './offers.ts';

/**
 * Notebook milestones for what the game observed. Keys make each record idempotent, so a retried
 * notebook request never records (or charges) anything twice. `boardId` identifies one attempt.
 */

export function encounterMilestone(m: EncounterMilestone, level: number, cycle: number, boardId: string): MilestoneInput {
  return { key: `tin:${boardId}:${m}`, kind: m, level, cycle };
}

export function offerMilestone(record: OfferRecord): MilestoneInput {
  return { key: record.key, kind: `offer-${record.kind}`, level: record.level, cycle: record.cycle };
}

/** A lost attempt is recorded separately from progress; it never changes the playable save. */
export function lostAttemptMilestone(level: number, cycle: number, boardId: string): MilestoneInput {
  return { key: `lost:${boardId}`, kind: 'lost-attempt', level, cycle };
}

export function levelCompleteMilestone(level: number, cycle: number): MilestoneInput {
  return { key: `complete:${level}:${cycle}`, kind: 'level-complete', level, cycle };
}

/** An occasional visit of the companion on a board. */
export function visitMilestone(level: number, cycle: number, boardId: string): MilestoneInput {
  return { key: `visit:${boardId}`, kind: 'visit', level, cycle };
}
