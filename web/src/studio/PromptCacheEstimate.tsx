import { useMemo } from 'react';
import { type EngineWorld, estimatePromptCaching } from '@yumina/world';
import type { Obj } from './fields.tsx';

const pct = (share: number) => `${Math.round(share * 100)}\u00a0%`;

/**
 * Beside the cache-friendly placement setting (issue 47): what it would save on this world, from
 * a simulated 20-turn session that mentions the lorebook's keywords (estimatePromptCaching).
 */
export function PromptCacheEstimate({ world }: { world: Obj }) {
  const estimate = useMemo(() => {
    try {
      return estimatePromptCaching({ ...(world as unknown as EngineWorld), entries: Array.isArray(world.entries) ? (world.entries as EngineWorld['entries']) : [], variables: Array.isArray(world.variables) ? (world.variables as EngineWorld['variables']) : [] });
    } catch {
      return null; // a draft the engine cannot read yet: nothing to estimate
    }
  }, [world]);
  if (!estimate) return null;
  const on = (world.settings as Obj | undefined)?.cacheFriendlyPlacement === true;
  return (
    <p className="hint" data-testid="prompt-cache-estimate">
      Cache-friendly placement writes each lorebook entry into the story where it first fires, instead of above the history, so the prompt repeats from turn to turn and
      providers read it from their prompt cache (about a tenth of the input price). In a simulated 20-turn session mentioning {estimate.entriesMentioned} of this world&apos;s
      entries: <strong>{pct(estimate.off.repeated)}</strong> of the prompt repeats with it off, <strong>{pct(estimate.on.repeated)}</strong> with it on — input cost about{' '}
      <strong>{pct(estimate.off.inputCost)}</strong> vs <strong>{pct(estimate.on.inputCost)}</strong> of an uncached prompt{on ? ' (on for this world)' : ''}. Entries then stay in
      the story once fired.
      {estimate.changingHead.length > 0 && (
        <>
          {' '}
          <span data-testid="prompt-cache-changing">
            These always-sent entries change during play, and each change makes the whole prompt after them new to the cache:{' '}
            {estimate.changingHead.map((entry) => `${entry.name} (${entry.macros.join(', ')})`).join('; ')}. Showing changing values in a post-history entry keeps
            them out of the repeated part.
          </span>
        </>
      )}
    </p>
  );
}
