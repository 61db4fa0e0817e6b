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
    expect(estimate.changingHead).toEqual([]);
  });

  it('names the always-sent entries whose text changes in play (a variable, a per-turn macro): each change makes the whole prompt new', () => {
    const world = validateWorld({
      version: '20.0.0',
      name: 'Moody',
      variables: [{ id: 'mood', name: 'Mood', type: 'string', defaultValue: 'calm' }],
      entries: [
        { id: 'who', name: 'Who', content: 'Mina is {{mood}} at {{time}}; {{char}} waits. {{random::a::b}}', section: 'system-presets' },
        { id: 'day', name: 'Day', content: 'Today is {{weekday}}.', section: 'system-presets' },
        { id: 'tail', name: 'Tail', content: 'Mood now: {{mood}}.', section: 'post-history' },
      ],
    });
    if (!world.ok) throw new Error(JSON.stringify(world.issues));
    expect(estimatePromptCaching(world.world).changingHead).toEqual([{ entryId: 'who', name: 'Who', macros: ['{{mood}}', '{{time}}', '{{random}}'] }]);
  });
});
