import { levelHash } from './hash.ts';
import { OFFERS } from './limits.ts';

/** The other offers and actions of seed §3.2, each kind at most once per level. */
export const OFFER_KINDS = ['gift', 'punch', 'apology', 'plant', 'challenge'] as const;
export type OfferKind = (typeof OFFER_KINDS)[number];

/** Kinds that cost or pay sun: disabled on conveyor levels (seed §3.3.6). */
const SUN_BASED: ReadonlySet<OfferKind> = new Set(['gift', 'plant', 'challenge']);

export type ChallengeStatus = 'none' | 'active' | 'won' | 'failed';

/** Per-level offer state (saved in chunk 21). */
export interface LevelOffers {
  level: number;
  cycle: number;
  used: OfferKind[];
  challenge: { status: ChallengeStatus; targetWave: number };
}

/** Native interaction flags that outlive a level (saved in chunk 22). */
export interface InteractionFlags {
  /** The player has given the companion a gift at least once. */
  giftGiven: boolean;
  /** A punch happened and has not been followed by an apology yet. */
  punched: boolean;
  apologized: boolean;
}

export const NO_FLAGS: InteractionFlags = { giftGiven: false, punched: false, apologized: false };

/** The game's own state, re-read at acceptance time. */
export interface NativeState {
  sun: number;
  conveyor: boolean;
  cherryBombUnlocked: boolean;
  /** Index of the next scheduled wave (1-based); waves are numbered by the engine. */
  nextWave: number;
  totalWaves: number;
  /** The attempt has been lost: every companion action is disabled. */
  nativeLoss: boolean;
}

/** An offer as shown to the player: price and wave fixed at that moment. */
export interface Offer {
  kind: OfferKind;
  /** Sun the player pays (0 for punch/apology/challenge). */
  price: number;
  /** The wave that was next when the offer was shown; the offer expires when it spawns. */
  forWave: number;
}

export function newLevelOffers(level: number, cycle: number): LevelOffers {
  return { level, cycle, used: [], challenge: { status: 'none', targetWave: 0 } };
}

/** Cherry Bomb price for this level and cycle: 100, 125 or 150 sun. */
export function cherryBombPrice(level: number, cycle: number): number {
  const steps = (OFFERS.cherryBombMaxSun - OFFERS.cherryBombMinSun) / OFFERS.cherryBombStepSun + 1;
  return OFFERS.cherryBombMinSun + (levelHash('cherry-bomb-price', level, cycle) % steps) * OFFERS.cherryBombStepSun;
}

export type OfferRefusal =
  | 'already-used'
  | 'native-loss'
  | 'conveyor'
  | 'not-enough-sun'
  | 'first-gift-needs-low-sun'
  | 'price-changed'
  | 'not-unlocked'
  | 'wave-expired'
  | 'no-wave-left'
  | 'no-punch';

function priceOf(kind: OfferKind, offers: LevelOffers): number {
  if (kind === 'gift') return OFFERS.giftSun;
  if (kind === 'plant') return cherryBombPrice(offers.level, offers.cycle);
  return 0;
}

/** Why `kind` cannot be offered or accepted right now, or null. The same check runs at both moments. */
export function offerRefusal(
  kind: OfferKind,
  offers: LevelOffers,
  flags: InteractionFlags,
  native: NativeState,
): OfferRefusal | null {
  if (native.nativeLoss) return 'native-loss';
  if (offers.used.includes(kind)) return 'already-used';
  if (native.conveyor && SUN_BASED.has(kind)) return 'conveyor';
  switch (kind) {
    case 'gift':
      if (native.sun < OFFERS.giftSun) return 'not-enough-sun';
      if (!flags.giftGiven && native.sun >= OFFERS.firstGiftBelowSun) return 'first-gift-needs-low-sun';
      return null;
    case 'punch':
      return null;
    case 'apology':
      return flags.punched && !flags.apologized ? null : 'no-punch';
    case 'plant':
      if (!native.cherryBombUnlocked) return 'not-unlocked';
      if (native.sun < priceOf('plant', offers)) return 'not-enough-sun';
      return null;
    case 'challenge':
      return native.nextWave >= 1 && native.nextWave <= native.totalWaves ? null : 'no-wave-left';
  }
}

/** Offers available at this moment, in display order. */
export function availableOffers(offers: LevelOffers, flags: InteractionFlags, native: NativeState): Offer[] {
  return OFFER_KINDS.filter((kind) => offerRefusal(kind, offers, flags, native) === null).map((kind) => ({
    kind,
    price: priceOf(kind, offers),
    forWave: native.nextWave,
  }));
}

/** Closed set of effects; rewards never come from generated text or code. */
export type OfferEffect =
  | { type: 'take-sun'; amount: number }
  | { type: 'add-sun'; amount: number }
  | { type: 'grant-seed'; plant: 'cherry-bomb'; temporary: true }
  | { type: 'reaction'; kind: OfferKind | 'challenge-won' | 'challenge-failed' };

/** What goes into the notebook, once: the key makes a retried write a no-op. */
export interface OfferRecord {
  key: string;
  kind: OfferKind | 'challenge-won' | 'challenge-failed';
  level: number;
  cycle: number;
}

export type OfferAcceptance =
  | { ok: true; offers: LevelOffers; flags: InteractionFlags; effects: OfferEffect[]; record: OfferRecord }
  | { ok: false; reason: OfferRefusal };

export function offerRecordKey(level: number, cycle: number, kind: OfferRecord['kind']): string {
  return `offer:${level}:${cycle}:${kind}`;
}

/**
 * Accept an offer shown earlier. Rechecks native state, price, unlock and wave expiry; marks the
 * kind used for this level, so a repeated accept (or a retried notebook write) never charges twice.
 */
export function acceptOffer(
  offer: Offer,
  offers: LevelOffers,
  flags: InteractionFlags,
  native: NativeState,
): OfferAcceptance {
  const refusal = offerRefusal(offer.kind, offers, flags, native);
  if (refusal) return { ok: false, reason: refusal };
  if (offer.price !== priceOf(offer.kind, offers)) return { ok: false, reason: 'price-changed' };
  if (offer.forWave !== native.nextWave) return { ok: false, reason: 'wave-expired' };

  const used = [...offers.used, offer.kind];
  let nextOffers: LevelOffers = { ...offers, used };
  let nextFlags = flags;
  const effects: OfferEffect[] = [];
  switch (offer.kind) {
    case 'gift':
      effects.push({ type: 'take-sun', amount: offer.price });
      nextFlags = { ...flags, giftGiven: true };
      break;
    case 'punch':
      // A cartoon punch: no damage, no resource penalty.
      nextFlags = { ...flags, punched: true, apologized: false };
      break;
    case 'apology':
      nextFlags = { ...flags, apologized: true };
      break;
    case 'plant':
      effects.push({ type: 'take-sun', amount: offer.price }, { type: 'grant-seed', plant: 'cherry-bomb', temporary: true });
      break;
    case 'challenge':
      nextOffers = { ...nextOffers, challenge: { status: 'active', targetWave: native.nextWave } };
      break;
  }
  effects.push({ type: 'reaction', kind: offer.kind });
  return {
    ok: true,
    offers: nextOffers,
    flags: nextFlags,
    effects,
    record: { key: offerRecordKey(offers.level, offers.cycle, offer.kind), kind: offer.kind, level: offers.level, cycle: offers.cycle },
  };
}

export interface ChallengeStep {
  offers: LevelOffers;
  effects: OfferEffect[];
  record: OfferRecord | null;
}

/** The player dug up a plant: an active no-shovel challenge fails. */
export function challengeDig(offers: LevelOffers): ChallengeStep {
  if (offers.challenge.status !== 'active') return { offers, effects: [], record: null };
  return {
    offers: { ...offers, challenge: { ...offers.challenge, status: 'failed' } },
    effects: [{ type: 'reaction', kind: 'challenge-failed' }],
    record: { key: offerRecordKey(offers.level, offers.cycle, 'challenge-failed'), kind: 'challenge-failed', level: offers.level, cycle: offers.cycle },
  };
}

/** A wave was cleared: clearing the challenge's wave without digging pays 75 sun, once. */
export function challengeWaveCleared(offers: LevelOffers, wave: number, native: Pick<NativeState, 'nativeLoss'>): ChallengeStep {
  if (offers.challenge.status !== 'active' || wave < offers.challenge.targetWave || native.nativeLoss) {
    return { offers, effects: [], record: null };
  }
  return {
    offers: { ...offers, challenge: { ...offers.challenge, status: 'won' } },
    effects: [
      { type: 'add-sun', amount: OFFERS.challengeRewardSun },
      { type: 'reaction', kind: 'challenge-won' },
    ],
    record: { key: offerRecordKey(offers.level, offers.cycle, 'challenge-won'), kind: 'challenge-won', level: offers.level, cycle: offers.cycle },
  };
}
