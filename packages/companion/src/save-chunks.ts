import type { TinOutcome } from './eligibility.ts';
import { type EncounterPhase, type EncounterState, newEncounter } from './encounter.ts';
import { CompanionSaveChunkError } from './errors.ts';
import {
  type ChallengeStatus,
  type InteractionFlags,
  type LevelOffers,
  NO_FLAGS,
  newLevelOffers,
  OFFER_KINDS,
  type OfferKind,
} from './offers.ts';

/**
 * Optional save chunks 21, 22 and 23 (seed §2.2, §9.4). Little-endian, each starting with a format
 * version byte. Newer versions may only append fields, so an older reader takes the prefix it knows.
 * A save without a chunk gets the empty/zero default; no migration is needed. Conversation UI state
 * and request ids are transient and never written.
 */
export const CHUNK_COMPANION = 21;
export const CHUNK_INTERACTIONS = 22;
export const CHUNK_ENCOUNTER = 23;

const VERSION = 1;
const NONE_U32 = 0xffffffff;

/** Chunk 21: offer limits, challenge progress, proactive call counts. */
export interface CompanionChunk {
  offers: LevelOffers | null;
  proactive: { count: number; lastAtSimMs: number | null };
}

export const EMPTY_COMPANION_CHUNK: CompanionChunk = { offers: null, proactive: { count: 0, lastAtSimMs: null } };

export interface CompanionSave {
  companion: CompanionChunk;
  /** Chunk 22 */
  flags: InteractionFlags;
  /** Chunk 23 */
  encounter: EncounterState | null;
}

export const EMPTY_COMPANION_SAVE: CompanionSave = { companion: EMPTY_COMPANION_CHUNK, flags: NO_FLAGS, encounter: null };

const CHALLENGE: readonly ChallengeStatus[] = ['none', 'active', 'won', 'failed'];
const PHASES: readonly EncounterPhase[] = ['pending', 'offered', 'sealed', 'opened', 'passed', 'gone'];
const OUTCOMES: readonly (TinOutcome | null)[] = [null, 'sun', 'empty'];

const u16 = (n: number) => Math.max(0, Math.min(0xffff, Math.trunc(n)));
const u32 = (n: number | null) => (n === null ? NONE_U32 : Math.max(0, Math.min(NONE_U32 - 1, Math.trunc(n))));
const fromU32 = (n: number) => (n === NONE_U32 ? null : n);

function reader(chunk: number, bytes: Uint8Array, size: number): DataView {
  if (bytes.byteLength < 1) throw new CompanionSaveChunkError(chunk, 'empty payload');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint8(0);
  if (version < 1) throw new CompanionSaveChunkError(chunk, `unknown version ${version}`);
  if (bytes.byteLength < size) throw new CompanionSaveChunkError(chunk, `truncated: ${bytes.byteLength} of ${size} bytes`);
  return view;
}

const CHUNK21_SIZE = 14;

export function encodeCompanionChunk(state: CompanionChunk): Uint8Array {
  const out = new Uint8Array(CHUNK21_SIZE);
  const v = new DataView(out.buffer);
  const offers = state.offers;
  v.setUint8(0, VERSION);
  v.setUint16(1, offers ? u16(offers.level) : 0, true);
  v.setUint16(3, offers ? u16(offers.cycle) : 0, true);
  let used = 0;
  for (const kind of offers?.used ?? []) used |= 1 << OFFER_KINDS.indexOf(kind);
  v.setUint8(5, used);
  v.setUint8(6, offers ? CHALLENGE.indexOf(offers.challenge.status) : 0);
  v.setUint16(7, offers ? u16(offers.challenge.targetWave) : 0, true);
  v.setUint8(9, Math.min(255, state.proactive.count));
  v.setUint32(10, u32(state.proactive.lastAtSimMs), true);
  return out;
}

export function decodeCompanionChunk(bytes: Uint8Array | undefined | null): CompanionChunk {
  if (!bytes) return EMPTY_COMPANION_CHUNK;
  const v = reader(CHUNK_COMPANION, bytes, CHUNK21_SIZE);
  const level = v.getUint16(1, true);
  const cycle = v.getUint16(3, true);
  const usedBits = v.getUint8(5);
  const status = CHALLENGE[v.getUint8(6)];
  if (!status) throw new CompanionSaveChunkError(CHUNK_COMPANION, `bad challenge status ${v.getUint8(6)}`);
  const used: OfferKind[] = OFFER_KINDS.filter((_, i) => (usedBits & (1 << i)) !== 0);
  const offers =
    level === 0 ? null : { ...newLevelOffers(level, cycle), used, challenge: { status, targetWave: v.getUint16(7, true) } };
  return { offers, proactive: { count: v.getUint8(9), lastAtSimMs: fromU32(v.getUint32(10, true)) } };
}

const FLAG_GIFT = 1;
const FLAG_PUNCH = 2;
const FLAG_APOLOGY = 4;

export function encodeInteractionChunk(flags: InteractionFlags): Uint8Array {
  return new Uint8Array([
    VERSION,
    (flags.giftGiven ? FLAG_GIFT : 0) | (flags.punched ? FLAG_PUNCH : 0) | (flags.apologized ? FLAG_APOLOGY : 0),
  ]);
}

export function decodeInteractionChunk(bytes: Uint8Array | undefined | null): InteractionFlags {
  if (!bytes) return NO_FLAGS;
  const v = reader(CHUNK_INTERACTIONS, bytes, 2);
  const bits = v.getUint8(1);
  return { giftGiven: (bits & FLAG_GIFT) !== 0, punched: (bits & FLAG_PUNCH) !== 0, apologized: (bits & FLAG_APOLOGY) !== 0 };
}

const CHUNK23_SIZE = 11;

export function encodeEncounterChunk(state: EncounterState | null): Uint8Array {
  const out = new Uint8Array(CHUNK23_SIZE);
  const v = new DataView(out.buffer);
  v.setUint8(0, VERSION);
  if (!state) {
    v.setUint32(7, NONE_U32, true);
    return out;
  }
  v.setUint16(1, u16(state.level), true);
  v.setUint16(3, u16(state.cycle), true);
  v.setUint8(5, PHASES.indexOf(state.phase));
  v.setUint8(6, OUTCOMES.indexOf(state.outcome));
  v.setUint32(7, u32(state.offeredAtMs), true);
  return out;
}

export function decodeEncounterChunk(bytes: Uint8Array | undefined | null): EncounterState | null {
  if (!bytes) return null;
  const v = reader(CHUNK_ENCOUNTER, bytes, CHUNK23_SIZE);
  const level = v.getUint16(1, true);
  if (level === 0) return null;
  const phase = PHASES[v.getUint8(5)];
  const outcome = OUTCOMES[v.getUint8(6)];
  if (!phase) throw new CompanionSaveChunkError(CHUNK_ENCOUNTER, `bad phase ${v.getUint8(5)}`);
  if (outcome === undefined) throw new CompanionSaveChunkError(CHUNK_ENCOUNTER, `bad outcome ${v.getUint8(6)}`);
  const offered = phase === 'offered' || phase === 'sealed' || phase === 'opened' || phase === 'gone';
  if (offered && outcome === null) {
    throw new CompanionSaveChunkError(CHUNK_ENCOUNTER, `phase ${phase} without fixed contents`);
  }
  return { level, cycle: v.getUint16(3, true), phase, outcome, offeredAtMs: fromU32(v.getUint32(7, true)) };
}

/** All three chunks of a save, keyed by chunk id. */
export function encodeCompanionSave(save: CompanionSave): Record<21 | 22 | 23, Uint8Array> {
  return {
    [CHUNK_COMPANION]: encodeCompanionChunk(save.companion),
    [CHUNK_INTERACTIONS]: encodeInteractionChunk(save.flags),
    [CHUNK_ENCOUNTER]: encodeEncounterChunk(save.encounter),
  } as Record<21 | 22 | 23, Uint8Array>;
}

/** Decode whichever chunks a save has; absent chunks (older saves) give empty/zero state. */
export function decodeCompanionSave(chunks: Partial<Record<number, Uint8Array>>): CompanionSave {
  return {
    companion: decodeCompanionChunk(chunks[CHUNK_COMPANION]),
    flags: decodeInteractionChunk(chunks[CHUNK_INTERACTIONS]),
    encounter: decodeEncounterChunk(chunks[CHUNK_ENCOUNTER]),
  };
}

/**
 * The save of a new attempt: the interaction flags (chunk 22) stay, the level's offers, proactive
 * counts and tin (chunks 21 and 23) start empty. Written when an attempt ends (won, lost, left), so
 * the tin of the ended attempt never comes back and never opens, after "Try again" or a reload.
 */
export function freshAttemptSave(save: CompanionSave): CompanionSave {
  return { companion: EMPTY_COMPANION_CHUNK, flags: save.flags, encounter: null };
}

/**
 * The per-level state to continue with after loading a save on `level`/`cycle`: the saved state if
 * it belongs to that level and cycle (the tin's contents are taken from the save, never re-rolled),
 * otherwise a fresh start.
 */
export function resumeLevel(
  save: CompanionSave,
  level: number,
  cycle: number,
): { offers: LevelOffers; encounter: EncounterState; proactive: CompanionChunk['proactive'] } {
  const same = (s: { level: number; cycle: number } | null) => s !== null && s.level === level && s.cycle === cycle;
  return {
    offers: same(save.companion.offers) ? save.companion.offers! : newLevelOffers(level, cycle),
    encounter: same(save.encounter) ? save.encounter! : newEncounter(level, cycle),
    proactive: same(save.companion.offers) ? save.companion.proactive : { count: 0, lastAtSimMs: null },
  };
}
