import { describe, expect, it } from 'vitest';
import { invitationDelayMs, levelGetsInvitation, tinOutcome, type TinOutcome } from './eligibility.ts';
import {
  defeatAside,
  type EncounterSetup,
  type EncounterState,
  invitationVisible,
  mayWritePlayableSave,
  newEncounter,
  offerOpen,
  revealedTin,
  stepEncounter,
} from './encounter.ts';
import { adventureLevel } from './levels.ts';
import { TIN } from './limits.ts';
import { quietMoment } from './test-moments.ts';

const quiet = quietMoment;

/** An invited level (and cycle) whose tin holds `want`, found through the public rules. */
function invitedLevel(want: TinOutcome): { level: number; cycle: number } {
  for (let cycle = 1; cycle < 50; cycle++) {
    for (let level = 1; level <= 50; level++) {
      if (levelGetsInvitation(adventureLevel(level), cycle) && tinOutcome(level, cycle) === want) return { level, cycle };
    }
  }
  throw new Error('no such level');
}

function setupFor(level: number, cycle: number, visitsEnabled = true): EncounterSetup {
  return { level: adventureLevel(level), cycle, visitsEnabled };
}

/** Drive a fresh encounter to the offered phase; returns the state and the active time of the offer. */
function offered(want: TinOutcome) {
  const { level, cycle } = invitedLevel(want);
  const setup = setupFor(level, cycle);
  const at = invitationDelayMs(level, cycle);
  const step = stepEncounter(newEncounter(level, cycle), { type: 'tick', moment: quiet(at) }, setup);
  expect(step.state.phase).toBe('offered');
  return { setup, state: step.state, at, step };
}

describe('item encounter: no offer → offered', () => {
  it('waits for the varied quiet period, then offers with an 8 s invitation valid for 30 s of active play', () => {
    const { level, cycle } = invitedLevel('sun');
    const setup = setupFor(level, cycle);
    const delay = invitationDelayMs(level, cycle);
    expect(delay).toBeGreaterThanOrEqual(TIN.idleMinMs);
    expect(delay).toBeLessThanOrEqual(TIN.idleMaxMs);
    const before = stepEncounter(newEncounter(level, cycle), { type: 'tick', moment: quiet(delay - 1) }, setup);
    expect(before.state.phase).toBe('pending');
    expect(before.effects).toEqual([]);

    const step = stepEncounter(before.state, { type: 'tick', moment: quiet(delay) }, setup);
    expect(step.state).toMatchObject({ phase: 'offered', offeredAtMs: delay, outcome: 'sun' });
    expect(step.effects).toContainEqual({
      type: 'show-invitation',
      visibleUntilMs: delay + 8_000,
      validUntilMs: delay + 30_000,
    });
    expect(step.effects.some((e) => e.type === 'take-sun')).toBe(false);
    expect(invitationVisible(step.state, delay + 7_999)).toBe(true);
    expect(invitationVisible(step.state, delay + 8_000)).toBe(false);
    expect(offerOpen(step.state, delay + 29_999)).toBe(true);
    expect(offerOpen(step.state, delay + 30_000)).toBe(false);
  });

  it('fixes the contents when the offer appears, before any purchase', () => {
    expect(offered('empty').state.outcome).toBe('empty');
    expect(offered('sun').state.outcome).toBe('sun');
  });

  it.each([
    ['paused', { paused: true }],
    ['house-danger', { houseDanger: true }],
    ['final-wave', { finalWaveSpawned: true }],
    ['companion-scene', { companionScene: true }],
    ['modal', { modalOpen: true }],
    ['scripted-sequence', { scriptedSequence: true }],
    ['transition', { transition: true }],
  ] as const)('is deferred by %s and offered once the moment is quiet', (reason, over) => {
    const { level, cycle } = invitedLevel('sun');
    const setup = setupFor(level, cycle);
    const at = invitationDelayMs(level, cycle) + 5_000;
    const deferred = stepEncounter(newEncounter(level, cycle), { type: 'tick', moment: quiet(at, over) }, setup);
    expect(deferred.deferredBy).toBe(reason);
    expect(deferred.state.phase).toBe('pending');
    expect(stepEncounter(deferred.state, { type: 'tick', moment: quiet(at + 100) }, setup).state.phase).toBe('offered');
  });

  it('is deferred for 20 s after a lawn mower fired', () => {
    const { level, cycle } = invitedLevel('sun');
    const setup = setupFor(level, cycle);
    const at = invitationDelayMs(level, cycle) + 1_000;
    const mower = quiet(at, { lastMowerAtMs: at - 19_999 });
    expect(stepEncounter(newEncounter(level, cycle), { type: 'tick', moment: mower }, setup).deferredBy).toBe('mower-recent');
    const later = quiet(at, { lastMowerAtMs: at - 20_000 });
    expect(stepEncounter(newEncounter(level, cycle), { type: 'tick', moment: later }, setup).state.phase).toBe('offered');
  });

  it('never offers when occasional visits are switched off or the level has no invitation', () => {
    const { level, cycle } = invitedLevel('sun');
    const off = stepEncounter(newEncounter(level, cycle), { type: 'tick', moment: quiet(200_000) }, setupFor(level, cycle, false));
    expect(off.state.phase).toBe('pending');
    for (const excluded of [1, 2, 3, 4, 10, 35, 50]) {
      const step = stepEncounter(newEncounter(excluded, 1), { type: 'tick', moment: quiet(500_000) }, setupFor(excluded, 1));
      expect(step.state.phase).toBe('pending');
    }
  });

  it('refuses events for another level or cycle', () => {
    const { state } = offered('sun');
    const other = setupFor(state.level, state.cycle + 1);
    expect(stepEncounter(state, { type: 'pay', sun: 500, activeMs: state.offeredAtMs! }, other).rejected).toBe('wrong-level');
  });
});

describe('item encounter: offered → no offer', () => {
  it('declining charges nothing and uses up the level’s invitation', () => {
    const { state, setup, at } = offered('sun');
    const step = stepEncounter(state, { type: 'decline' }, setup);
    expect(step.state.phase).toBe('passed');
    expect(step.effects.filter((e) => e.type === 'take-sun' || e.type === 'add-sun')).toEqual([]);
    expect(stepEncounter(step.state, { type: 'tick', moment: quiet(at + 100_000) }, setup).state.phase).toBe('passed');
  });

  it('ignoring it for 30 s of active play lets it lapse, charging nothing', () => {
    const { state, setup, at } = offered('sun');
    expect(stepEncounter(state, { type: 'tick', moment: quiet(at + 29_999) }, setup).state.phase).toBe('offered');
    const lapsed = stepEncounter(state, { type: 'tick', moment: quiet(at + 30_000) }, setup);
    expect(lapsed.state.phase).toBe('passed');
    expect(lapsed.effects.some((e) => e.type === 'take-sun')).toBe(false);
  });

  it('paying after the offer lapsed is refused', () => {
    const { state, setup, at } = offered('sun');
    const late = stepEncounter(state, { type: 'pay', sun: 300, activeMs: at + 30_000 }, setup);
    expect(late.rejected).toBe('offer-expired');
    expect(late.effects).toEqual([]);
  });
});

describe('item encounter: offered → sealed → opened / gone', () => {
  it('needs at least 100 sun and takes 25, leaving 75 of 100', () => {
    const { state, setup, at } = offered('sun');
    const poor = stepEncounter(state, { type: 'pay', sun: 99, activeMs: at + 1 }, setup);
    expect(poor.rejected).toBe('not-enough-sun');
    expect(poor.state).toBe(state);
    const paid = stepEncounter(state, { type: 'pay', sun: 100, activeMs: at + 1 }, setup);
    expect(paid.state.phase).toBe('sealed');
    const taken = paid.effects.find((e) => e.type === 'take-sun');
    expect(taken).toEqual({ type: 'take-sun', amount: 25 });
    expect(100 - (taken as { amount: number }).amount).toBe(75);
    expect(paid.state.outcome).toBe(state.outcome);
  });

  it('opening a lucky tin adds 75 sun, once', () => {
    const { state, setup, at } = offered('sun');
    const sealed = stepEncounter(state, { type: 'pay', sun: 150, activeMs: at }, setup).state;
    const open = stepEncounter(sealed, { type: 'open' }, setup);
    expect(open.state.phase).toBe('opened');
    expect(open.effects).toContainEqual({ type: 'add-sun', amount: 75 });
    const again = stepEncounter(open.state, { type: 'open' }, setup);
    expect(again.rejected).toBe('not-sealed');
    expect(again.effects).toEqual([]);
  });

  it('opening an empty tin has no effect beyond the disclosed 25 sun', () => {
    const { state, setup, at } = offered('empty');
    const sealed = stepEncounter(state, { type: 'pay', sun: 150, activeMs: at }, setup).state;
    const open = stepEncounter(sealed, { type: 'open' }, setup);
    expect(open.state.phase).toBe('opened');
    expect(open.effects.filter((e) => e.type === 'add-sun' || e.type === 'take-sun')).toEqual([]);
    expect(open.effects).toContainEqual({ type: 'record', milestone: 'tin-opened-empty' });
  });

  it('a sealed tin is gone when the level ends: it cannot be opened later', () => {
    const { state, setup, at } = offered('sun');
    const sealed = stepEncounter(state, { type: 'pay', sun: 150, activeMs: at }, setup).state;
    const gone = stepEncounter(sealed, { type: 'level-end', result: 'won' }, setup);
    expect(gone.state.phase).toBe('gone');
    expect(gone.effects).toEqual([{ type: 'record', milestone: 'tin-gone' }]);
    expect(stepEncounter(gone.state, { type: 'open' }, setup).rejected).toBe('not-sealed');
  });

  it('an open offer at level end lapses; an opened tin stays opened', () => {
    const { state, setup, at } = offered('sun');
    expect(stepEncounter(state, { type: 'level-end', result: 'lost' }, setup).state.phase).toBe('passed');
    const opened = stepEncounter(stepEncounter(state, { type: 'pay', sun: 100, activeMs: at }, setup).state, { type: 'open' }, setup).state;
    expect(stepEncounter(opened, { type: 'level-end', result: 'won' }, setup).state.phase).toBe('opened');
  });
});

describe('what the model may see about the tin', () => {
  it('never includes a sealed tin’s contents; reveals only after opening', () => {
    const { state, setup, at } = offered('sun');
    const sealed = stepEncounter(state, { type: 'pay', sun: 100, activeMs: at }, setup).state;
    expect(revealedTin(sealed)).toEqual({ phase: 'sealed' });
    expect(JSON.stringify(revealedTin(sealed))).not.toMatch(/sun|empty|75/);
    expect(JSON.stringify(revealedTin(state))).not.toMatch(/sun|empty/);
    const opened = stepEncounter(sealed, { type: 'open' }, setup).state;
    expect(revealedTin(opened)).toEqual({ phase: 'opened', contents: 'sun', sun: 75 });
    const gone: EncounterState = { ...sealed, phase: 'gone' };
    expect(revealedTin(gone)).toEqual({ phase: 'gone' });
  });
});

describe('defeat aside', () => {
  it('shows a 6 s aside after an empty tin or a gift, at most once per 2 minutes of session time', () => {
    const first = defeatAside({ lastAsideAtWallMs: null }, { tinOpenedEmpty: true, giftGiven: false }, 1_000_000);
    expect(first).toMatchObject({ show: true, hideAtWallMs: 1_006_000 });
    const soon = defeatAside(first.session, { tinOpenedEmpty: false, giftGiven: true }, 1_000_000 + 119_999);
    expect(soon.show).toBe(false);
    expect(soon.session).toBe(first.session);
    const later = defeatAside(first.session, { tinOpenedEmpty: false, giftGiven: true }, 1_000_000 + 120_000);
    expect(later.show).toBe(true);
  });

  it('shows nothing without an empty tin or gift', () => {
    expect(defeatAside({ lastAsideAtWallMs: null }, { tinOpenedEmpty: false, giftGiven: false }, 5).show).toBe(false);
  });

  it('a defeated board never overwrites the playable save', () => {
    expect(mayWritePlayableSave('lost')).toBe(false);
    expect(mayWritePlayableSave('won')).toBe(true);
    expect(mayWritePlayableSave('in-progress')).toBe(true);
  });
});

describe('item encounter: the whole transition table', () => {
  const { level, cycle } = invitedLevel('sun');
  const setup = setupFor(level, cycle);
  const at = invitationDelayMs(level, cycle);
  const inPhase = (phase: EncounterState['phase']): EncounterState => ({
    level,
    cycle,
    phase,
    outcome: phase === 'pending' ? null : 'sun',
    offeredAtMs: phase === 'pending' ? null : at,
  });
  const events = {
    decline: { type: 'decline' },
    pay: { type: 'pay', sun: 500, activeMs: at + 1_000 },
    open: { type: 'open' },
    'level-end': { type: 'level-end', result: 'won' },
  } as const;
  type Row = [EncounterState['phase'], keyof typeof events, EncounterState['phase'], string | undefined, string[]];
  // phase, event → next phase, refusal, effects (take/add sun amounts and recorded milestones)
  const table: Row[] = [
    ['pending', 'decline', 'pending', 'not-offered', []],
    ['pending', 'pay', 'pending', 'not-offered', []],
    ['pending', 'open', 'pending', 'not-sealed', []],
    ['pending', 'level-end', 'passed', undefined, []],
    ['offered', 'decline', 'passed', undefined, ['record:tin-passed']],
    ['offered', 'pay', 'sealed', undefined, ['take-sun:25', 'record:tin-bought']],
    ['offered', 'open', 'offered', 'not-sealed', []],
    ['offered', 'level-end', 'passed', undefined, []],
    ['sealed', 'decline', 'sealed', 'not-offered', []],
    ['sealed', 'pay', 'sealed', 'not-offered', []],
    ['sealed', 'open', 'opened', undefined, ['add-sun:75', 'record:tin-opened-sun']],
    ['sealed', 'level-end', 'gone', undefined, ['record:tin-gone']],
    ['opened', 'decline', 'opened', 'not-offered', []],
    ['opened', 'pay', 'opened', 'not-offered', []],
    ['opened', 'open', 'opened', 'not-sealed', []],
    ['opened', 'level-end', 'opened', undefined, []],
    ['passed', 'decline', 'passed', 'not-offered', []],
    ['passed', 'pay', 'passed', 'not-offered', []],
    ['passed', 'open', 'passed', 'not-sealed', []],
    ['passed', 'level-end', 'passed', undefined, []],
    ['gone', 'decline', 'gone', 'not-offered', []],
    ['gone', 'pay', 'gone', 'not-offered', []],
    ['gone', 'open', 'gone', 'not-sealed', []],
    ['gone', 'level-end', 'gone', undefined, []],
  ];

  it.each(table)('%s + %s → %s (refused: %s)', (phase, event, next, refusal, effects) => {
    const before = inPhase(phase);
    const step = stepEncounter(before, events[event], setup);
    expect(step.state.phase).toBe(next);
    expect(step.rejected).toBe(refusal);
    expect(step.effects.map((e) => ('milestone' in e ? `${e.type}:${e.milestone}` : `${e.type}:${'amount' in e ? e.amount : ''}`))).toEqual(effects);
    if (refusal) expect(step.state).toEqual(before); // a refused event changes nothing
  });

  it('an event for another level or cycle is refused and changes nothing', () => {
    const state = inPhase('offered');
    for (const other of [setupFor(level + 1, cycle), setupFor(level, cycle + 1)]) {
      const step = stepEncounter(state, events.pay, other);
      expect(step.rejected).toBe('wrong-level');
      expect(step.state).toEqual(state);
      expect(step.effects).toEqual([]);
    }
  });
});
