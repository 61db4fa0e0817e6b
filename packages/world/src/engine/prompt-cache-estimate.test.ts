import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importWorld } from '../import/import-world.ts';
import { validateWorld } from '../schema/validate-world.ts';
import { estimatePromptCaching } from './prompt-cache-estimate.ts';

describe("the studio's expected saving of cache-friendly placement", () => {
  it('an imported card with a 27-entry lorebook: most of the prompt repeats with the placement on, little without; the input cost falls with it', () => {
    const file = readFileSync(new URL('../../../../tests/fixtures/prompt-cache/saltreach-innkeeper.json', import.meta.url));
    const imported = importWorld(new Uint8Array(file));
    if (!imported.ok) throw new Error('import failed');
    const estimate = estimatePromptCaching(imported.world);
    expect(estimate.entriesMentioned).toBe(24);
    expect(estimate.off.repeated).toBeLessThan(0.5);
    expect(estimate.on.repeated).toBeGreaterThan(0.85);
    expect(estimate.on.inputCost).toBeLessThan(estimate.off.inputCost / 2);
  });

  it('a world without keyword entries gains nothing and loses nothing', () => {
    const world = validateWorld({ version: '20.0.0', name: 'Plain', entries: [{ id: 'a', name: 'A', content: 'You narrate.', section: 'system-presets' }] });
    if (!world.ok) throw new Error('invalid');
    const estimate = estimatePromptCaching(world.world);
    expect(estimate.entriesMentioned).toBe(0);
    expect(estimate.on.repeated).toBeCloseTo(estimate.off.repeated, 5);
  });
});
