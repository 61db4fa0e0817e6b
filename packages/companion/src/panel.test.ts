import { describe, expect, it } from 'vitest';
import {
  actionsUnavailable,
  closePanel,
  type CompanionSituation,
  generationCurrent,
  holdPause,
  isPaused,
  openPanel,
  panelUnavailable,
  releasePause,
  replyAcceptable,
  RUNNING,
} from './panel.ts';
import { DEFAULT_PREFERENCES, dismissProactive, NO_PROACTIVE, proactiveRefusal, recordProactiveCall } from './proactive.ts';

describe('panel pause ownership', () => {
  it('opening pauses, closing resumes the pause it owns', () => {
    const open = openPanel(RUNNING);
    expect(isPaused(open)).toBe(true);
    expect(isPaused(closePanel(open))).toBe(false);
  });

  it('closing never resumes a pause the player holds', () => {
    const before = openPanel(holdPause(RUNNING, 'player'));
    expect(isPaused(closePanel(before))).toBe(true);
    const during = holdPause(openPanel(RUNNING), 'player');
    const closed = closePanel(during);
    expect(isPaused(closed)).toBe(true);
    expect(isPaused(releasePause(closed, 'player'))).toBe(false);
    expect(closePanel(RUNNING)).toBe(RUNNING);
  });
});

describe('availability', () => {
  const s: CompanionSituation = {
    disabled: false,
    mode: 'adventure',
    modalOpen: false,
    scriptedSequence: false,
    vasePuzzle: false,
    finalBoss: false,
    transition: false,
    nativeLoss: false,
  };
  it('is unavailable during modals, scripted sequences, puzzles, the final boss, transitions and outside adventure', () => {
    expect(panelUnavailable(s)).toBeNull();
    expect(panelUnavailable({ ...s, modalOpen: true })).toBe('modal');
    expect(panelUnavailable({ ...s, scriptedSequence: true })).toBe('scripted-sequence');
    expect(panelUnavailable({ ...s, vasePuzzle: true })).toBe('vase-puzzle');
    expect(panelUnavailable({ ...s, finalBoss: true })).toBe('final-boss');
    expect(panelUnavailable({ ...s, transition: true })).toBe('transition');
    expect(panelUnavailable({ ...s, mode: 'versus' })).toBe('not-adventure');
    expect(panelUnavailable({ ...s, disabled: true })).toBe('disabled');
  });
  it('conversation stays open after a native loss but actions stop', () => {
    expect(panelUnavailable({ ...s, nativeLoss: true })).toBeNull();
    expect(actionsUnavailable({ ...s, nativeLoss: true })).toBe('native-loss');
  });
});

describe('generation cancellation', () => {
  const pending = { requestId: 'r1', runId: 'run', boardId: 'b1', level: 7 };
  it('navigation or a level change makes a pending generation stale', () => {
    expect(generationCurrent(pending, { runId: 'run', boardId: 'b1', level: 7 })).toBe(true);
    expect(generationCurrent(pending, { runId: 'run', boardId: 'b2', level: 7 })).toBe(false);
    expect(generationCurrent(pending, { runId: 'run', boardId: 'b1', level: 8 })).toBe(false);
    expect(generationCurrent(pending, null)).toBe(false);
  });
  it('applies a reply only when all its ids match the pending request', () => {
    const scope = { runId: 'run', boardId: 'b1', level: 7 };
    expect(replyAcceptable({ requestId: 'r1', runId: 'run', boardId: 'b1' }, pending, scope)).toBe(true);
    expect(replyAcceptable({ requestId: 'r0', runId: 'run', boardId: 'b1' }, pending, scope)).toBe(false);
    expect(replyAcceptable({ requestId: 'r1', runId: 'old', boardId: 'b1' }, pending, scope)).toBe(false);
  });
});

describe('proactive comments', () => {
  const on = { ...DEFAULT_PREFERENCES, proactiveComments: true };
  it('are off by default and separate from occasional visits', () => {
    expect(DEFAULT_PREFERENCES).toEqual({ proactiveComments: false, occasionalVisits: true });
    expect(proactiveRefusal(NO_PROACTIVE, DEFAULT_PREFERENCES, { simMs: 0, paused: false, boardId: 'b' })).toBe('disabled');
    expect(proactiveRefusal(NO_PROACTIVE, { proactiveComments: true, occasionalVisits: false }, { simMs: 0, paused: false, boardId: 'b' })).toBeNull();
  });
  it('at most 2 per level, at least 90 s of simulation apart, never while paused', () => {
    const now = (simMs: number, paused = false) => ({ simMs, paused, boardId: 'b' });
    expect(proactiveRefusal(NO_PROACTIVE, on, now(10_000, true))).toBe('paused');
    const one = recordProactiveCall(NO_PROACTIVE, 10_000);
    expect(proactiveRefusal(one, on, now(99_999))).toBe('too-soon');
    expect(proactiveRefusal(one, on, now(100_000))).toBeNull();
    const two = recordProactiveCall(one, 100_000);
    expect(proactiveRefusal(two, on, now(1_000_000))).toBe('limit');
  });
  it('dismissing silences them for the current board only', () => {
    const silenced = dismissProactive(NO_PROACTIVE, 'b1');
    expect(proactiveRefusal(silenced, on, { simMs: 0, paused: false, boardId: 'b1' })).toBe('silenced');
    expect(proactiveRefusal(silenced, on, { simMs: 0, paused: false, boardId: 'b2' })).toBeNull();
  });
});
