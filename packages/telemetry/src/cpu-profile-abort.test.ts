import { describe, expect, it } from 'vitest';
import { startCpuProfile } from './cpu-profile.ts';
import { createIdentity } from './identity.ts';
import { createCollectingSink } from './sink.ts';

// A file of its own: the profile is one-shot per process and vitest runs each file in its own fork.
describe('startCpuProfile on shutdown', () => {
  it('an abort signal ends a long profile early and still logs what was sampled', async () => {
    const sink = createCollectingSink();
    const shutdown = new AbortController();
    const started = performance.now();
    const running = startCpuProfile(120, sink, { identity: createIdentity({ region: 'r', deploymentId: 'd' }), signal: shutdown.signal });
    setTimeout(() => shutdown.abort(), 300);
    const event = await running;
    expect(performance.now() - started).toBeLessThan(3000);
    expect(event).toMatchObject({ type: 'runtime.cpu_profile', seconds: 120 });
    expect(event!.totalSamples).toBeGreaterThan(0);
    expect(sink.events).toHaveLength(1);
  });
});
