import { describe, expect, it } from 'vitest';
import {
  acceptOffer,
  availableOffers,
  challengeDig,
  challengeWaveCleared,
  cherryBombPrice,
  type InteractionFlags,
  type LevelOffers,
  type NativeState,
  NO_FLAGS,
  newLevelOffers,
  type Offer,
  offerRefusal,
} from './offers.ts';

const native = (over: Partial<NativeState> = {}): NativeState => ({
  sun: 80,
  conveyor: false,
  cherryBombUnlocked: true,
  nextWave: 3,
  totalWaves: 10,
  nativeLoss: false,
  ...over,
});

function accept(kind: Offer['kind'], offers: LevelOffers, flags: InteractionFlags, n: NativeState) {
  const offer = availableOffers(offers, flags, n).find((o) => o.kind === kind);
  expect(offer, `${kind} should be offered`).toBeDefined();
  return acceptOffer(offer!, offers, flags, n);
}

describe('sun gift', () => {
  it('costs 50 sun; the first gift only while sun is below 100', () => {
    const offers = newLevelOffers(12, 1);
    expect(offerRefusal('gift', offers, NO_FLAGS, native({ sun: 100 }))).toBe('first-gift-needs-low-sun');
    expect(offerRefusal('gift', offers, NO_FLAGS, native({ sun: 49 }))).toBe('not-enough-sun');
    const r = accept('gift', offers, NO_FLAGS, native({ sun: 99 }));
    expect(r.ok && r.effects).toEqual([
      { type: 'take-sun', amount: 50 },
      { type: 'reaction', kind: 'gift' },
    ]);
    expect(r.ok && r.flags.giftGiven).toBe(true);
    // Later gifts (another level) no longer need low sun.
    const later = newLevelOffers(13, 1);
    expect(offerRefusal('gift', later, { ...NO_FLAGS, giftGiven: true }, native({ sun: 500 }))).toBeNull();
  });

  it('is never available on conveyor levels', () => {
    expect(offerRefusal('gift', newLevelOffers(10, 1), NO_FLAGS, native({ conveyor: true }))).toBe('conveyor');
  });

  it('accepting twice (or retrying) never charges a second gift on the level', () => {
    const offers = newLevelOffers(12, 1);
    const first = accept('gift', offers, NO_FLAGS, native());
    if (!first.ok) throw new Error('expected ok');
    const retry = acceptOffer({ kind: 'gift', price: 50, forWave: 3 }, first.offers, first.flags, native());
    expect(retry).toEqual({ ok: false, reason: 'already-used' });
    expect(first.record.key).toBe('offer:12:1:gift');
  });
});

describe('punch and apology', () => {
  it('a punch has no damage and no resource cost; an apology needs a punch first', () => {
    const offers = newLevelOffers(8, 1);
    expect(offerRefusal('apology', offers, NO_FLAGS, native())).toBe('no-punch');
    const punch = accept('punch', offers, NO_FLAGS, native({ conveyor: true }));
    if (!punch.ok) throw new Error('expected ok');
    expect(punch.effects).toEqual([{ type: 'reaction', kind: 'punch' }]);
    expect(punch.flags).toEqual({ giftGiven: false, punched: true, apologized: false });
    const sorry = accept('apology', punch.offers, punch.flags, native({ conveyor: true }));
    if (!sorry.ok) throw new Error('expected ok');
    expect(sorry.flags.apologized).toBe(true);
    expect(offerRefusal('apology', newLevelOffers(9, 1), sorry.flags, native())).toBe('no-punch');
    expect(offerRefusal('punch', sorry.offers, sorry.flags, native())).toBe('already-used');
  });
});

describe('Cherry Bomb offer', () => {
  it('costs 100 to 150 sun, varied per level, and grants a temporary seed packet', () => {
    const prices = new Set<number>();
    for (let level = 1; level <= 50; level++) {
      const p = cherryBombPrice(level, 1);
      expect([100, 125, 150]).toContain(p);
      prices.add(p);
    }
    expect(prices.size).toBe(3);
    const offers = newLevelOffers(14, 2);
    const price = cherryBombPrice(14, 2);
    const r = accept('plant', offers, NO_FLAGS, native({ sun: price }));
    expect(r.ok && r.effects).toEqual([
      { type: 'take-sun', amount: price },
      { type: 'grant-seed', plant: 'cherry-bomb', temporary: true },
      { type: 'reaction', kind: 'plant' },
    ]);
  });

  it('acceptance rechecks unlock, sun, price and wave expiry', () => {
    const offers = newLevelOffers(14, 2);
    const price = cherryBombPrice(14, 2);
    const offer: Offer = { kind: 'plant', price, forWave: 3 };
    expect(acceptOffer(offer, offers, NO_FLAGS, native({ sun: 500, cherryBombUnlocked: false }))).toEqual({ ok: false, reason: 'not-unlocked' });
    expect(acceptOffer(offer, offers, NO_FLAGS, native({ sun: price - 1 }))).toEqual({ ok: false, reason: 'not-enough-sun' });
    expect(acceptOffer({ ...offer, price: price - 25 }, offers, NO_FLAGS, native({ sun: 500 }))).toEqual({ ok: false, reason: 'price-changed' });
    expect(acceptOffer(offer, offers, NO_FLAGS, native({ sun: 500, nextWave: 4 }))).toEqual({ ok: false, reason: 'wave-expired' });
    expect(acceptOffer(offer, offers, NO_FLAGS, native({ sun: 500, conveyor: true }))).toEqual({ ok: false, reason: 'conveyor' });
    expect(acceptOffer(offer, offers, NO_FLAGS, native({ sun: 500 })).ok).toBe(true);
  });
});

describe('no-shovel challenge', () => {
  it('pays 75 sun once when the next scheduled wave is cleared without digging', () => {
    const r = accept('challenge', newLevelOffers(16, 1), NO_FLAGS, native({ nextWave: 4 }));
    if (!r.ok) throw new Error('expected ok');
    expect(r.offers.challenge).toEqual({ status: 'active', targetWave: 4 });
    expect(challengeWaveCleared(r.offers, 3, native()).effects).toEqual([]);
    const won = challengeWaveCleared(r.offers, 4, native());
    expect(won.effects).toContainEqual({ type: 'add-sun', amount: 75 });
    expect(won.offers.challenge.status).toBe('won');
    expect(won.record?.key).toBe('offer:16:1:challenge-won');
    expect(challengeWaveCleared(won.offers, 4, native()).effects).toEqual([]);
  });

  it('digging after acceptance fails it', () => {
    const r = accept('challenge', newLevelOffers(16, 1), NO_FLAGS, native());
    if (!r.ok) throw new Error('expected ok');
    const dug = challengeDig(r.offers);
    expect(dug.offers.challenge.status).toBe('failed');
    expect(challengeWaveCleared(dug.offers, 3, native()).effects).toEqual([]);
    expect(challengeDig(newLevelOffers(16, 1)).record).toBeNull();
  });

  it('is not offered with no wave left or on conveyor levels, and pays nothing after a native loss', () => {
    expect(offerRefusal('challenge', newLevelOffers(16, 1), NO_FLAGS, native({ nextWave: 11 }))).toBe('no-wave-left');
    expect(offerRefusal('challenge', newLevelOffers(16, 1), NO_FLAGS, native({ conveyor: true }))).toBe('conveyor');
    const r = accept('challenge', newLevelOffers(16, 1), NO_FLAGS, native());
    if (!r.ok) throw new Error('expected ok');
    expect(challengeWaveCleared(r.offers, 3, { nativeLoss: true }).effects).toEqual([]);
  });
});

describe('native loss and conveyors', () => {
  it('a native loss disables every companion action', () => {
    const lost = native({ nativeLoss: true, sun: 90 });
    expect(availableOffers(newLevelOffers(12, 1), { ...NO_FLAGS, punched: true }, lost)).toEqual([]);
  });

  it('conveyor levels keep punch and apology but no sun-based offers', () => {
    const kinds = availableOffers(newLevelOffers(10, 1), { ...NO_FLAGS, punched: true }, native({ conveyor: true, sun: 500 })).map((o) => o.kind);
    expect(kinds).toEqual(['punch', 'apology']);
  });

  it('each kind at most once per level', () => {
    let offers = newLevelOffers(22, 1);
    let flags: InteractionFlags = NO_FLAGS;
    const n = native({ sun: 90 });
    for (const kind of ['gift', 'punch', 'apology', 'challenge'] as const) {
      const r = accept(kind, offers, flags, n);
      if (!r.ok) throw new Error(`expected ${kind} ok`);
      offers = r.offers;
      flags = r.flags;
    }
    expect(availableOffers(offers, flags, native({ sun: 1000 })).map((o) => o.kind)).toEqual(['plant']);
  });
});
