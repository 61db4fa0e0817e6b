import { describe, expect, it } from 'vitest';
import { coverArt, MOTIFS } from './generated-cover.tsx';

/** The hue distance on the colour wheel (0–180°). */
const apart = (a: number, b: number) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));

describe('generated covers', () => {
  it('are the same for the same world every time', () => {
    expect(coverArt('wld_sample_willow_street')).toEqual(coverArt('wld_sample_willow_street'));
  });

  it('differ between worlds: the three samples, and 300 ids in a row', () => {
    const samples = ['wld_sample_willow_street', 'wld_sample_ashen_depths', 'wld_sample_changan_nights'].map(coverArt);
    for (const [i, a] of samples.entries()) {
      for (const b of samples.slice(i + 1)) expect(a.motif !== b.motif || apart(a.hues[0], b.hues[0]) >= 30).toBe(true);
    }
    const arts = Array.from({ length: 300 }, (_, i) => coverArt(`wld_${i.toString(36).padStart(8, '0')}`));
    // Every motif is used, and hardly two ids share a motif and a background hue (within 10°).
    expect(new Set(arts.map((a) => a.motif))).toEqual(new Set(MOTIFS));
    const signatures = new Set(arts.map((a) => `${a.motif}:${Math.floor(a.hues[0] / 10)}`));
    expect(signatures.size).toBeGreaterThan(150);
  });
});
