import type { BoardMoment } from './eligibility.ts';
import {
  type AsideSession,
  defeatAside,
  type EncounterEffect,
  type EncounterRejection,
  type EncounterState,
  stepEncounter,
} from './encounter.ts';
import type { LevelDescriptor } from './levels.ts';
import { encounterMilestone, levelCompleteMilestone, lostAttemptMilestone, offerMilestone } from './milestones.ts';
import type { MilestoneInput } from './notebook.ts';
import {
  acceptOffer,
  challengeDig,
  challengeWaveCleared,
  type InteractionFlags,
  type LevelOffers,
  type NativeState,
  type Offer,
  type OfferEffect,
  type OfferRefusal,
} from './offers.ts';
import { closePanel, openPanel, type PauseState, RUNNING } from './panel.ts';
import type { CompanionPreferences, ProactiveState } from './proactive.ts';
import { type CompanionSave, freshAttemptSave, resumeLevel } from './save-chunks.ts';

/**
 * One board (a level attempt) with every companion rule wired together: the item encounter, the
 * offers, the panel pause and the defeat aside. A thin game loop (the demo board, or the real
 * engine's adapter) feeds events and applies the returned effects and notebook milestones.
 */
export interface CompanionBoard {
  boardId: string;
  level: LevelDescriptor;
  cycle: number;
  encounter: EncounterState;
  offers: LevelOffers;
  flags: InteractionFlags;
  proactive: ProactiveState;
  pause: PauseState;
  /** The attempt was lost natively: every companion action is disabled. */
  nativeLoss: boolean;
  giftGivenThisBoard: boolean;
  /** Session memory for the defeat aside cooldown; carry it from board to board. */
  aside: AsideSession;
  result: 'in-progress' | 'won' | 'lost' | 'left';
}

export function startBoard(input: {
  boardId: string;
  level: LevelDescriptor;
  cycle: number;
  save: CompanionSave;
  aside?: AsideSession;
}): CompanionBoard {
  const resumed = resumeLevel(input.save, input.level.level, input.cycle);
  return {
    boardId: input.boardId,
    level: input.level,
    cycle: input.cycle,
    encounter: resumed.encounter,
    offers: resumed.offers,
    flags: input.save.flags,
    proactive: { ...resumed.proactive, silencedBoardId: null },
    pause: RUNNING,
    nativeLoss: false,
    giftGivenThisBoard: false,
    aside: input.aside ?? { lastAsideAtWallMs: null },
    result: 'in-progress',
  };
}

export type BoardEvent =
  | { type: 'tick'; moment: BoardMoment }
  | { type: 'tin-decline' }
  | { type: 'tin-pay'; sun: number; activeMs: number }
  | { type: 'tin-open' }
  | { type: 'offer-accept'; offer: Offer; native: NativeState }
  | { type: 'dig' }
  | { type: 'wave-cleared'; wave: number }
  | { type: 'panel-open' }
  | { type: 'panel-close' }
  | { type: 'level-end'; result: 'won' | 'lost' | 'left'; wallMs: number };

export type BoardEffect =
  | Exclude<EncounterEffect, { type: 'record' }>
  | OfferEffect
  | { type: 'aside'; hideAtWallMs: number };

export interface BoardStep {
  board: CompanionBoard;
  effects: BoardEffect[];
  /** To send to the notebook route (idempotent keys). */
  milestones: MilestoneInput[];
  rejected?: EncounterRejection | OfferRefusal | 'native-loss';
}

const TIN_EVENTS = new Set(['tin-decline', 'tin-pay', 'tin-open']);

export function stepBoard(board: CompanionBoard, event: BoardEvent, prefs: CompanionPreferences): BoardStep {
  const setup = { level: board.level, cycle: board.cycle, visitsEnabled: prefs.occasionalVisits };
  const none: BoardStep = { board, effects: [], milestones: [] };
  if (board.nativeLoss && (TIN_EVENTS.has(event.type) || event.type === 'offer-accept')) {
    return { ...none, rejected: 'native-loss' };
  }
  const fromEncounter = (encounter: EncounterState, effects: EncounterEffect[], rejected?: EncounterRejection): BoardStep => {
    const milestones: MilestoneInput[] = [];
    const applied: BoardEffect[] = [];
    for (const e of effects) {
      if (e.type === 'record') milestones.push(encounterMilestone(e.milestone, board.level.level, board.cycle, board.boardId));
      else applied.push(e);
    }
    return { board: { ...board, encounter }, effects: applied, milestones, ...(rejected ? { rejected } : {}) };
  };
  switch (event.type) {
    case 'tick': {
      if (board.result !== 'in-progress') return none;
      const s = stepEncounter(board.encounter, { type: 'tick', moment: event.moment }, setup);
      return fromEncounter(s.state, s.effects);
    }
    case 'tin-decline': {
      const s = stepEncounter(board.encounter, { type: 'decline' }, setup);
      return fromEncounter(s.state, s.effects, s.rejected);
    }
    case 'tin-pay': {
      const s = stepEncounter(board.encounter, { type: 'pay', sun: event.sun, activeMs: event.activeMs }, setup);
      return fromEncounter(s.state, s.effects, s.rejected);
    }
    case 'tin-open': {
      const s = stepEncounter(board.encounter, { type: 'open' }, setup);
      return fromEncounter(s.state, s.effects, s.rejected);
    }
    case 'offer-accept': {
      const r = acceptOffer(event.offer, board.offers, board.flags, { ...event.native, nativeLoss: board.nativeLoss || event.native.nativeLoss });
      if (!r.ok) return { ...none, rejected: r.reason };
      return {
        board: { ...board, offers: r.offers, flags: r.flags, giftGivenThisBoard: board.giftGivenThisBoard || event.offer.kind === 'gift' },
        effects: r.effects,
        milestones: [offerMilestone(r.record)],
      };
    }
    case 'dig': {
      const c = challengeDig(board.offers);
      return { board: { ...board, offers: c.offers }, effects: c.effects, milestones: c.record ? [offerMilestone(c.record)] : [] };
    }
    case 'wave-cleared': {
      const c = challengeWaveCleared(board.offers, event.wave, { nativeLoss: board.nativeLoss });
      return { board: { ...board, offers: c.offers }, effects: c.effects, milestones: c.record ? [offerMilestone(c.record)] : [] };
    }
    case 'panel-open':
      return { ...none, board: { ...board, pause: openPanel(board.pause) } };
    case 'panel-close':
      return { ...none, board: { ...board, pause: closePanel(board.pause) } };
    case 'level-end': {
      if (board.result !== 'in-progress') return none;
      const s = stepEncounter(board.encounter, { type: 'level-end', result: event.result }, setup);
      const step = fromEncounter(s.state, s.effects);
      let next: CompanionBoard = { ...step.board, result: event.result };
      if (event.result === 'won') step.milestones.push(levelCompleteMilestone(board.level.level, board.cycle));
      if (event.result === 'lost') {
        next = { ...next, nativeLoss: true };
        step.milestones.push(lostAttemptMilestone(board.level.level, board.cycle, board.boardId));
        const tinOpenedEmpty = board.encounter.phase === 'opened' && board.encounter.outcome === 'empty';
        const aside = defeatAside(board.aside, { tinOpenedEmpty, giftGiven: board.giftGivenThisBoard }, event.wallMs);
        next = { ...next, aside: aside.session };
        if (aside.show) step.effects.push({ type: 'aside', hideAtWallMs: aside.hideAtWallMs! });
      }
      return { ...step, board: next };
    }
  }
}

/** The save chunks of this board's companion state. A lost board is not saved over the playable save. */
export function boardSave(board: CompanionBoard): CompanionSave {
  return {
    companion: { offers: board.offers, proactive: { count: board.proactive.count, lastAtSimMs: board.proactive.lastAtSimMs } },
    flags: board.flags,
    encounter: board.encounter,
  };
}

/**
 * The save once this board's attempt has ended (seed 001 §3.1: a sealed tin is gone when its level
 * ends): the next attempt, after "Try again" or a reload, starts without this attempt's tin and
 * offers. It is not the defeated board: nothing of the lost lawn is in it.
 */
export function endedAttemptSave(board: CompanionBoard): CompanionSave {
  return freshAttemptSave(boardSave(board));
}
