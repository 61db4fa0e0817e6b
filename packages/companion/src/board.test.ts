import { describe, expect, it } from 'vitest';
import { boardSave, type CompanionBoard, endedAttemptSave, startBoard, stepBoard } from './board.ts';
import { invitationDelayMs, levelGetsInvitation, tinOutcome } from './eligibility.ts';
import { isPaused } from './panel.ts';
import { adventureLevel } from './levels.ts';
import { availableOffers } from './offers.ts';
import { DEFAULT_PREFERENCES } from './proactive.ts';
import { decodeCompanionSave, EMPTY_COMPANION_SAVE, encodeCompanionSave } from './save-chunks.ts';
import { quietMoment } from './test-moments.ts';

const quiet = (activeMs: number) => quietMoment(activeMs);

function findLevel(want: 'sun' | 'empty') {
  for (let level = 5; level <= 49; level++) {
    if (levelGetsInvitation(adventureLevel(level), 1) && tinOutcome(level, 1) === want) return level;
  }
  throw new Error('none');
}

describe('a whole board', () => {
  it('offers, sells and opens a tin, then survives a save and reload', () => {
    const level = findLevel('sun');
    let board: CompanionBoard = startBoard({ boardId: 'b1', level: adventureLevel(level), cycle: 1, save: EMPTY_COMPANION_SAVE });
    const at = invitationDelayMs(level, 1);
    let step = stepBoard(board, { type: 'tick', moment: quiet(at) }, DEFAULT_PREFERENCES);
    expect(step.effects[0]?.type).toBe('show-invitation');
    expect(step.milestones.map((m) => m.kind)).toEqual(['tin-offered']);
    step = stepBoard(step.board, { type: 'panel-open' }, DEFAULT_PREFERENCES);
    expect(isPaused(step.board.pause)).toBe(true);
    step = stepBoard(step.board, { type: 'tin-pay', sun: 120, activeMs: at + 2_000 }, DEFAULT_PREFERENCES);
    expect(step.effects).toEqual([{ type: 'take-sun', amount: 25 }]);
    step = stepBoard(step.board, { type: 'panel-close' }, DEFAULT_PREFERENCES);
    expect(isPaused(step.board.pause)).toBe(false);
    board = step.board;

    const reloaded = startBoard({
      boardId: 'b2',
      level: adventureLevel(level),
      cycle: 1,
      save: decodeCompanionSave(encodeCompanionSave(boardSave(board))),
    });
    const open = stepBoard(reloaded, { type: 'tin-open' }, DEFAULT_PREFERENCES);
    expect(open.effects).toEqual([{ type: 'add-sun', amount: 75 }]);
    expect(open.milestones.map((m) => m.kind)).toEqual(['tin-opened-sun']);
  });

  it('a defeat after an empty tin shows the aside, disables actions and records the lost attempt', () => {
    const level = findLevel('empty');
    let board = startBoard({ boardId: 'b1', level: adventureLevel(level), cycle: 1, save: EMPTY_COMPANION_SAVE });
    const at = invitationDelayMs(level, 1);
    board = stepBoard(board, { type: 'tick', moment: quiet(at) }, DEFAULT_PREFERENCES).board;
    board = stepBoard(board, { type: 'tin-pay', sun: 100, activeMs: at }, DEFAULT_PREFERENCES).board;
    const opened = stepBoard(board, { type: 'tin-open' }, DEFAULT_PREFERENCES);
    expect(opened.effects).toEqual([]);
    const lost = stepBoard(opened.board, { type: 'level-end', result: 'lost', wallMs: 5_000_000 }, DEFAULT_PREFERENCES);
    expect(lost.effects).toEqual([{ type: 'aside', hideAtWallMs: 5_006_000 }]);
    expect(lost.milestones.map((m) => m.kind)).toEqual(['lost-attempt']);
    const native = { sun: 90, conveyor: false, cherryBombUnlocked: true, nextWave: 2, totalWaves: 5, nativeLoss: false };
    const offer = availableOffers(lost.board.offers, lost.board.flags, native).find((o) => o.kind === 'punch')!;
    expect(stepBoard(lost.board, { type: 'offer-accept', offer, native }, DEFAULT_PREFERENCES).rejected).toBe('native-loss');
    // The next board in the same session respects the 2-minute aside cooldown.
    const next = startBoard({ boardId: 'b3', level: adventureLevel(level), cycle: 1, save: EMPTY_COMPANION_SAVE, aside: lost.board.aside });
    const gift = availableOffers(next.offers, next.flags, native).find((o) => o.kind === 'gift')!;
    const gave = stepBoard(next, { type: 'offer-accept', offer: gift, native }, DEFAULT_PREFERENCES);
    expect(gave.effects[0]).toEqual({ type: 'take-sun', amount: 50 });
    const lostAgain = stepBoard(gave.board, { type: 'level-end', result: 'lost', wallMs: 5_060_000 }, DEFAULT_PREFERENCES);
    expect(lostAgain.effects).toEqual([]);
  });

  it('a sealed tin is gone when its level ends: the next attempt (Try again, or a reload) neither has it nor opens it', () => {
    const level = findLevel('sun');
    const at = invitationDelayMs(level, 1);
    for (const result of ['lost', 'won', 'left'] as const) {
      let board = startBoard({ boardId: 'b1', level: adventureLevel(level), cycle: 1, save: EMPTY_COMPANION_SAVE });
      board = stepBoard(board, { type: 'tick', moment: quiet(at) }, DEFAULT_PREFERENCES).board;
      const bought = stepBoard(board, { type: 'tin-pay', sun: 150, activeMs: at }, DEFAULT_PREFERENCES).board;
      expect(bought.encounter.phase).toBe('sealed');
      // The checkpoint save of the attempt holds the sealed tin (with its fixed contents)…
      const checkpoint = decodeCompanionSave(encodeCompanionSave(boardSave(bought)));
      expect(checkpoint.encounter?.phase).toBe('sealed');
      const ended = stepBoard(bought, { type: 'level-end', result, wallMs: 9_000_000 }, DEFAULT_PREFERENCES);
      expect(ended.board.encounter.phase).toBe('gone');
      expect(ended.milestones.map((m) => m.kind)).toContain('tin-gone');
      // …the save written when the attempt ends does not: the next attempt starts without it.
      const save = decodeCompanionSave(encodeCompanionSave(endedAttemptSave(ended.board)));
      expect(save.encounter).toBeNull();
      expect(save.companion.offers).toBeNull();
      const next = startBoard({ boardId: 'b2', level: adventureLevel(level), cycle: 1, save });
      expect(next.encounter.phase, result).toBe('pending');
      const open = stepBoard(next, { type: 'tin-open' }, DEFAULT_PREFERENCES);
      expect(open.rejected).toBe('not-sealed');
      expect(open.effects).toEqual([]);
    }
  });

  it('contract: invitations never pause combat (the tin invitation and its offer window hold no pause)', () => {
    const level = findLevel('sun');
    const at = invitationDelayMs(level, 1);
    let board = startBoard({ boardId: 'b1', level: adventureLevel(level), cycle: 1, save: EMPTY_COMPANION_SAVE });
    const invited = stepBoard(board, { type: 'tick', moment: quiet(at) }, DEFAULT_PREFERENCES);
    expect(invited.effects.map((e) => e.type)).toContain('show-invitation');
    expect(isPaused(invited.board.pause)).toBe(false);
    expect(invited.board.pause.owners).toEqual([]);
    board = invited.board;
    // Through the whole visible invitation and offer window, the board keeps running.
    for (let t = at + 1_000; t < at + 30_000; t += 1_000) {
      board = stepBoard(board, { type: 'tick', moment: quiet(t) }, DEFAULT_PREFERENCES).board;
      expect(isPaused(board.pause), `at ${t}`).toBe(false);
    }
    expect(board.encounter.phase).toBe('offered');
    // Only the player's own opening of the companion pauses.
    expect(isPaused(stepBoard(board, { type: 'panel-open' }, DEFAULT_PREFERENCES).board.pause)).toBe(true);
  });

  it('records the no-shovel challenge outcome and the gift once', () => {
    const board = startBoard({ boardId: 'b1', level: adventureLevel(12), cycle: 1, save: EMPTY_COMPANION_SAVE });
    const native = { sun: 60, conveyor: false, cherryBombUnlocked: false, nextWave: 3, totalWaves: 8, nativeLoss: false };
    const challenge = availableOffers(board.offers, board.flags, native).find((o) => o.kind === 'challenge')!;
    let step = stepBoard(board, { type: 'offer-accept', offer: challenge, native }, DEFAULT_PREFERENCES);
    step = stepBoard(step.board, { type: 'wave-cleared', wave: 3 }, DEFAULT_PREFERENCES);
    expect(step.effects).toContainEqual({ type: 'add-sun', amount: 75 });
    expect(step.milestones.map((m) => m.kind)).toEqual(['offer-challenge-won']);
  });
});
