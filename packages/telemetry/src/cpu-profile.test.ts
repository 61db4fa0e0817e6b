import { url as inspectorUrl } from 'node:inspector';
import { Session } from 'node:inspector/promises';
import { describe, expect, it, vi } from 'vitest';
import {
  assertCpuProfileSeconds,
  CPU_PROFILE_MAX_SECONDS,
  CpuProfileSecondsError,
  heaviestStacks,
  startCpuProfile,
} from './cpu-profile.ts';
import { createIdentity } from './identity.ts';
import { createCollectingSink } from './sink.ts';

const identity = createIdentity({ region: 'ap-1', replicaId: 'r-9', deploymentId: 'd-3' });

/** CPU work in many distinct shapes so there are more than 25 stacks to choose from. */
function burnCpuForProfile(depth: number): number {
  const SOURCE_MARKER = 'zz-source-text-must-not-appear-zz';
  let x = SOURCE_MARKER.length;
  if (depth > 0) return burnCpuForProfile(depth - 1) + x;
  for (let i = 0; i < 200_000; i++) x = (x * 31 + i) % 1_000_003;
  return x;
}

describe('assertCpuProfileSeconds', () => {
  it('accepts 0..180 and refuses 181, negatives and fractions with a clear coded error', () => {
    expect(assertCpuProfileSeconds(0)).toBe(0);
    expect(assertCpuProfileSeconds(180)).toBe(180);
    expect(CPU_PROFILE_MAX_SECONDS).toBe(180);
    for (const bad of [181, -1, 1.5, Number.NaN]) {
      expect(() => assertCpuProfileSeconds(bad)).toThrow(CpuProfileSecondsError);
    }
    try {
      assertCpuProfileSeconds(181);
    } catch (err) {
      expect((err as CpuProfileSecondsError).code).toBe('CPU_PROFILE_SECONDS_INVALID');
      expect((err as Error).message).toMatch(/RUNTIME_CPU_PROFILE_SECONDS.*0.*180.*181/);
    }
  });
});

describe('heaviestStacks', () => {
  it('ranks stacks by self samples, skips idle, and keeps only names and locations', () => {
    const frame = (functionName: string, line: number) => ({ functionName, scriptId: '1', url: 'file:///app/a.js', lineNumber: line, columnNumber: 4 });
    const profile = {
      startTime: 0,
      endTime: 1,
      nodes: [
        { id: 1, callFrame: frame('(root)', -1), children: [2, 3, 5] },
        { id: 2, callFrame: frame('handler', 9), children: [4] },
        { id: 3, callFrame: { ...frame('(idle)', -1), url: '' } },
        { id: 4, callFrame: frame('', 19) },
        { id: 5, callFrame: { ...frame('(garbage collector)', -1), url: '' } },
      ],
      samples: [4, 4, 4, 2, 3, 3, 5],
      timeDeltas: [],
    };
    const { stacks, totalSamples, idleSamples } = heaviestStacks(profile, 2);
    expect(totalSamples).toBe(7);
    expect(idleSamples).toBe(2);
    expect(stacks).toEqual([
      { samples: 3, percent: 60, frames: ['(anonymous) file:///app/a.js:20:5', 'handler file:///app/a.js:10:5'] },
      { samples: 1, percent: 20, frames: ['handler file:///app/a.js:10:5'] },
    ]);
  });
});

describe('startCpuProfile', () => {
  it('a 2 s profile logs at most 25 stacks, no source text, and leaves no inspector session open', async () => {
    const sink = createCollectingSink();
    const sessions: Session[] = [];
    const connect = vi.spyOn(Session.prototype, 'connect').mockImplementation(function (this: Session) {
      sessions.push(this);
      connect.mockRestore();
      return this.connect();
    });
    const running = startCpuProfile(2, sink, { identity });
    const started = performance.now();
    let n = 0;
    while (performance.now() - started < 2300) {
      burnCpuForProfile(n++ % 40);
      await new Promise((r) => setImmediate(r));
    }
    const event = (await running)!;
    expect(event).toBeDefined();
    expect(sink.events).toEqual([event]);
    expect(event).toMatchObject({ type: 'runtime.cpu_profile', region: 'ap-1', replicaId: 'r-9', deploymentId: 'd-3', seconds: 2, samplingIntervalMs: 10 });
    // Sampling every 10 ms for 2 s: about 200 samples (not the ~2000 of the 1 ms default).
    expect(event.totalSamples).toBeGreaterThan(80);
    expect(event.totalSamples).toBeLessThan(400);
    expect(event.stacks.length).toBeGreaterThan(0);
    expect(event.stacks.length).toBeLessThanOrEqual(25);
    const text = JSON.stringify(event);
    expect(text).toContain('burnCpuForProfile');
    expect(text).not.toContain('zz-source-text-must-not-appear-zz');
    expect(text).not.toContain('200_000');
    for (const stack of event.stacks) {
      for (const f of stack.frames) expect(f).toMatch(/^\S+( \S+:\d+:\d+)?$|^\(/);
    }

    // The session it used is disconnected, no debugger port was opened, and the profiler is free.
    expect(sessions).toHaveLength(1);
    await expect(sessions[0]!.post('Runtime.evaluate', { expression: '1' })).rejects.toMatchObject({ code: 'ERR_INSPECTOR_NOT_CONNECTED' });
    expect(inspectorUrl()).toBeUndefined();
    const second = new Session();
    second.connect();
    try {
      await second.post('Profiler.enable');
      await expect(second.post('Profiler.stop')).rejects.toThrow(); // nothing is recording
      await second.post('Profiler.start');
      await second.post('Profiler.stop');
      await second.post('Profiler.disable');
    } finally {
      second.disconnect();
    }

    // One-shot per process: a second request is refused (logged, never thrown).
    const again = createCollectingSink();
    expect(await startCpuProfile(1, again, { identity })).toBeUndefined();
    expect(again.events).toEqual([
      expect.objectContaining({ type: 'error', code: 'CPU_PROFILE_ALREADY_TAKEN', where: 'cpu-profile', replicaId: 'r-9' }),
    ]);
  });

  it('0 means off and 181 is refused without touching the inspector', async () => {
    const connect = vi.spyOn(Session.prototype, 'connect');
    const sink = createCollectingSink();
    expect(await startCpuProfile(0, sink, { identity })).toBeUndefined();
    expect(sink.events).toHaveLength(0);
    expect(await startCpuProfile(181, sink, { identity })).toBeUndefined();
    expect(sink.events).toEqual([expect.objectContaining({ type: 'error', code: 'CPU_PROFILE_SECONDS_INVALID' })]);
    expect(connect).not.toHaveBeenCalled();
    connect.mockRestore();
  });
});
