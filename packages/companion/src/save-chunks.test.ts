import { describe, expect, it } from 'vitest';
import { invitationDelayMs, levelGetsInvitation, tinOutcome } from './eligibility.ts';
import { newEncounter, stepEncounter, type EncounterState } from './encounter.ts';
import { CompanionSaveChunkError } from './errors.ts';
import { adventureLevel } from './levels.ts';
import { acceptOffer, NO_FLAGS, newLevelOffers } from './offers.ts';
import {
  type CompanionSave,
  decodeCompanionChunk,
  decodeCompanionSave,
  decodeEncounterChunk,
  decodeInteractionChunk,
  EMPTY_COMPANION_SAVE,
  encodeCompanionChunk,
  encodeCompanionSave,
  encodeEncounterChunk,
  encodeInteractionChunk,
  resumeLevel,
} from './save-chunks.ts';
import { quietMoment } from './test-moments.ts';

const sample: CompanionSave = {
  companion: {
    offers: { level: 17, cycle: 3, used: ['gift', 'challenge'], challenge: { status: 'active', targetWave: 7 } },
    proactive: { count: 2, lastAtSimMs: 123_456 },
  },
  flags: { giftGiven: true, punched: true, apologized: false },
  encounter: { level: 17, cycle: 3, phase: 'sealed', outcome: 'empty', offeredAtMs: 91_000 },
};

describe('save chunks round-trip', () => {
  it('decodes what it encodes, for every chunk', () => {
    const chunks = encodeCompanionSave(sample);
    expect(Object.keys(chunks).map(Number).sort()).toEqual([21, 22, 23]);
    expect(decodeCompanionSave(chunks)).toEqual(sample);
  });

  it('round-trips every phase, outcome, challenge status and flag combination', () => {
    for (const phase of ['pending', 'offered', 'sealed', 'opened', 'passed', 'gone'] as const) {
      for (const outcome of ['sun', 'empty'] as const) {
        const s: EncounterState = { level: 9, cycle: 1, phase, outcome, offeredAtMs: phase === 'pending' ? null : 70_000 };
        expect(decodeEncounterChunk(encodeEncounterChunk(s))).toEqual(s);
      }
    }
    for (const status of ['none', 'active', 'won', 'failed'] as const) {
      const c = { offers: { ...newLevelOffers(6, 2), challenge: { status, targetWave: 3 } }, proactive: { count: 1, lastAtSimMs: null } };
      expect(decodeCompanionChunk(encodeCompanionChunk(c))).toEqual(c);
    }
    for (let bits = 0; bits < 8; bits++) {
      const flags = { giftGiven: (bits & 1) > 0, punched: (bits & 2) > 0, apologized: (bits & 4) > 0 };
      expect(decodeInteractionChunk(encodeInteractionChunk(flags))).toEqual(flags);
    }
  });

  it('writes a version byte first and little-endian fields', () => {
    const bytes = encodeEncounterChunk(sample.encounter);
    expect(bytes[0]).toBe(1);
    expect(bytes[1]).toBe(17); // level, low byte first
    expect(bytes[2]).toBe(0);
    const level300 = encodeEncounterChunk({ ...sample.encounter!, level: 300 });
    expect([level300[1], level300[2]]).toEqual([300 & 0xff, 300 >> 8]);
    expect(encodeInteractionChunk(sample.flags)).toEqual(new Uint8Array([1, 0b011]));
  });
});

describe('old saves', () => {
  it('without chunks 21–23 default to empty companion state and zero flags', () => {
    expect(decodeCompanionSave({})).toEqual(EMPTY_COMPANION_SAVE);
    expect(decodeCompanionSave({})).toEqual({
      companion: { offers: null, proactive: { count: 0, lastAtSimMs: null } },
      flags: { giftGiven: false, punched: false, apologized: false },
      encounter: null,
    });
  });

  it('with chunk 21 but without chunk 22 keep chunk 21 and get zero flags', () => {
    const only21 = { 21: encodeCompanionChunk(sample.companion) };
    const decoded = decodeCompanionSave(only21);
    expect(decoded.companion).toEqual(sample.companion);
    expect(decoded.flags).toEqual(NO_FLAGS);
    expect(decoded.encounter).toBeNull();
  });

  it('chunk 22 leaves chunk 21’s payload unchanged', () => {
    const withoutFlags = encodeCompanionSave({ ...sample, flags: NO_FLAGS })[21];
    const withFlags = encodeCompanionSave(sample)[21];
    expect(withFlags).toEqual(withoutFlags);
    expect(withFlags).toEqual(encodeCompanionChunk(sample.companion));
  });

  it('an empty state encodes to chunks that decode back to the defaults', () => {
    expect(decodeCompanionSave(encodeCompanionSave(EMPTY_COMPANION_SAVE))).toEqual(EMPTY_COMPANION_SAVE);
  });
});

describe('format evolution and damage', () => {
  it('a newer version that appends fields is read by its known prefix', () => {
    const bytes = encodeEncounterChunk(sample.encounter);
    const newer = new Uint8Array(bytes.length + 5);
    newer.set(bytes);
    newer[0] = 2;
    newer.fill(0xab, bytes.length);
    expect(decodeEncounterChunk(newer)).toEqual(sample.encounter);
  });

  it('truncated or nonsensical chunks raise a typed error', () => {
    const cut = encodeCompanionChunk(sample.companion).slice(0, 6);
    expect(() => decodeCompanionChunk(cut)).toThrow(CompanionSaveChunkError);
    try {
      decodeCompanionChunk(cut);
    } catch (e) {
      expect((e as CompanionSaveChunkError).code).toBe('COMPANION_SAVE_CHUNK_INVALID');
      expect((e as CompanionSaveChunkError).chunk).toBe(21);
    }
    expect(() => decodeInteractionChunk(new Uint8Array([0, 1]))).toThrow(CompanionSaveChunkError);
    const badPhase = encodeEncounterChunk(sample.encounter);
    badPhase[5] = 42;
    expect(() => decodeEncounterChunk(badPhase)).toThrow(/bad phase/);
    const sealedNoContents = encodeEncounterChunk(sample.encounter);
    sealedNoContents[6] = 0;
    expect(() => decodeEncounterChunk(sealedNoContents)).toThrow(/without fixed contents/);
  });

  it('decodes from a view into a larger buffer (offset payloads)', () => {
    const bytes = encodeEncounterChunk(sample.encounter);
    const big = new Uint8Array(bytes.length + 10);
    big.set(bytes, 7);
    expect(decodeEncounterChunk(big.subarray(7, 7 + bytes.length))).toEqual(sample.encounter);
  });
});

describe('the same outcome after reload', () => {
  const quiet = (activeMs: number) => quietMoment(activeMs);

  it('a tin bought before saving opens to the same contents after loading, for many levels', () => {
    let checked = 0;
    for (let cycle = 1; cycle <= 6; cycle++) {
      for (let level = 5; level <= 49; level++) {
        const d = adventureLevel(level);
        if (!levelGetsInvitation(d, cycle)) continue;
        const setup = { level: d, cycle, visitsEnabled: true };
        const at = invitationDelayMs(level, cycle);
        const offered = stepEncounter(newEncounter(level, cycle), { type: 'tick', moment: quiet(at) }, setup).state;
        const sealed = stepEncounter(offered, { type: 'pay', sun: 200, activeMs: at + 1_000 }, setup).state;
        const direct = stepEncounter(sealed, { type: 'open' }, setup);

        const chunks = encodeCompanionSave({ ...EMPTY_COMPANION_SAVE, encounter: sealed });
        const resumed = resumeLevel(decodeCompanionSave(chunks), level, cycle).encounter;
        expect(resumed).toEqual(sealed);
        const reloaded = stepEncounter(resumed, { type: 'open' }, setup);
        expect(reloaded.effects).toEqual(direct.effects);
        expect(reloaded.state.outcome).toBe(tinOutcome(level, cycle));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('the stored contents win over recomputation: reloading never re-rolls', () => {
    const level = 6;
    const cycle = 1;
    const flipped = tinOutcome(level, cycle) === 'sun' ? 'empty' : 'sun';
    const stored: EncounterState = { level, cycle, phase: 'sealed', outcome: flipped, offeredAtMs: 70_000 };
    const resumed = resumeLevel(decodeCompanionSave(encodeCompanionSave({ ...EMPTY_COMPANION_SAVE, encounter: stored })), level, cycle);
    const open = stepEncounter(resumed.encounter, { type: 'open' }, { level: adventureLevel(level), cycle, visitsEnabled: true });
    expect(open.effects.some((e) => e.type === 'add-sun')).toBe(flipped === 'sun');
  });

  it('an offered tin keeps its remaining offer window after reload', () => {
    const level = 6;
    const cycle = 1;
    const s: EncounterState = { level, cycle, phase: 'offered', outcome: 'sun', offeredAtMs: 65_000 };
    const resumed = resumeLevel(decodeCompanionSave(encodeCompanionSave({ ...EMPTY_COMPANION_SAVE, encounter: s })), level, cycle);
    expect(resumed.encounter.offeredAtMs).toBe(65_000);
  });

  it('state saved for another level or cycle starts fresh; offers used stay used on the same level', () => {
    const save = decodeCompanionSave(encodeCompanionSave(sample));
    const same = resumeLevel(save, 17, 3);
    expect(same.offers.used).toEqual(['gift', 'challenge']);
    expect(same.proactive).toEqual({ count: 2, lastAtSimMs: 123_456 });
    const accepted = acceptOffer(
      { kind: 'gift', price: 50, forWave: 2 },
      same.offers,
      save.flags,
      { sun: 60, conveyor: false, cherryBombUnlocked: true, nextWave: 2, totalWaves: 10, nativeLoss: false },
    );
    expect(accepted).toEqual({ ok: false, reason: 'already-used' });
    const other = resumeLevel(save, 18, 3);
    expect(other.offers).toEqual(newLevelOffers(18, 3));
    expect(other.encounter).toEqual(newEncounter(18, 3));
    expect(other.proactive).toEqual({ count: 0, lastAtSimMs: null });
    expect(resumeLevel(save, 17, 4).encounter.phase).toBe('pending');
  });
});
