import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProbe } from './probe.ts';

/** An async operation the test settles by hand. */
function controlled() {
  let starts = 0;
  let resolvers: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  const run = () => {
    starts += 1;
    return new Promise<void>((resolve, reject) => {
      resolvers.push({ resolve, reject });
    });
  };
  return {
    run,
    get starts() {
      return starts;
    },
    resolveAll() {
      for (const r of resolvers) r.resolve();
      resolvers = [];
    },
    rejectAll(e: unknown) {
      for (const r of resolvers) r.reject(e);
      resolvers = [];
    },
  };
}

describe('createProbe', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('1000 concurrent callers share one run; a call 1.1 s later starts a new run', async () => {
    let starts = 0;
    const probe = createProbe('primary', async () => {
      starts += 1;
      await new Promise((r) => setTimeout(r, 20));
    });
    const all = Promise.all(Array.from({ length: 1000 }, () => probe.check()));
    expect(probe.running).toBe(true);
    await vi.advanceTimersByTimeAsync(20);
    const results = await all;
    expect(starts).toBe(1);
    expect(new Set(results.map((r) => r.status))).toEqual(new Set(['up']));
    expect(results[0]!.latencyMs).toBeGreaterThanOrEqual(20);

    // Inside the 1 s cache window: the same result, no new run.
    await vi.advanceTimersByTimeAsync(500);
    const cached = await probe.check();
    expect(starts).toBe(1);
    expect(cached).toBe(results[0]);

    await vi.advanceTimersByTimeAsync(600); // 1.1 s after settling
    const fresh = probe.check();
    expect(starts).toBe(2);
    await vi.advanceTimersByTimeAsync(20);
    expect((await fresh).status).toBe('up');
    expect(probe.runs).toBe(2);
  });

  it('a hanging run times out at the response limit, stays shared, and only a settled result lets a new run start', async () => {
    const op = controlled();
    const probe = createProbe('primary', op.run, { cacheMs: 1000, responseLimitMs: 5000 });

    const first = probe.check();
    let firstResult: unknown;
    void first.then((r) => {
      firstResult = r;
    });
    await vi.advanceTimersByTimeAsync(4999);
    expect(firstResult).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await first).toMatchObject({ name: 'primary', status: 'timeout', latencyMs: 5000 });
    expect(op.starts).toBe(1);
    expect(probe.running).toBe(true);

    // Callers during the hang join the same run: no new operation starts.
    const during = Array.from({ length: 50 }, () => probe.check());
    await vi.advanceTimersByTimeAsync(3000);
    const later = probe.check();
    await vi.advanceTimersByTimeAsync(2000);
    expect((await Promise.all(during)).every((r) => r.status === 'timeout')).toBe(true);
    expect(op.starts).toBe(1);

    // The operation settles (as the 4 s SQL deadline would make it): the waiting caller gets it.
    op.rejectAll(new Error('query timed out'));
    const settled = await later;
    expect(settled).toMatchObject({ status: 'down', error: 'query timed out' });
    expect(probe.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);

    // Cached for 1 s, then the next call runs again.
    expect((await probe.check()).status).toBe('down');
    expect(op.starts).toBe(1);
    await vi.advanceTimersByTimeAsync(1001);
    void probe.check();
    expect(op.starts).toBe(2);
    op.resolveAll();
    await vi.advanceTimersByTimeAsync(0);
  });

  it('clears the response-limit timer when the run succeeds', async () => {
    const op = controlled();
    const probe = createProbe('store', op.run);
    const waiting = Array.from({ length: 10 }, () => probe.check());
    expect(vi.getTimerCount()).toBe(10);
    op.resolveAll();
    const results = await Promise.all(waiting);
    expect(results.every((r) => r.status === 'up')).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports a synchronous throw or rejection as down with its message, never rejecting', async () => {
    const probe = createProbe('read', () => {
      throw new Error('not configured');
    });
    await expect(probe.check()).resolves.toMatchObject({ status: 'down', error: 'not configured' });
    const rejecting = createProbe('read2', () => Promise.reject('plain string'));
    await expect(rejecting.check()).resolves.toMatchObject({ status: 'down', error: 'plain string' });
  });

  it('a run that outlives the limit but succeeds is cached as up once it settles', async () => {
    const op = controlled();
    const probe = createProbe('primary', op.run, { responseLimitMs: 100 });
    const first = probe.check();
    await vi.advanceTimersByTimeAsync(100);
    expect((await first).status).toBe('timeout');
    await vi.advanceTimersByTimeAsync(400);
    op.resolveAll();
    await vi.advanceTimersByTimeAsync(0);
    const after = await probe.check();
    expect(after.status).toBe('up');
    expect(after.latencyMs).toBe(500);
    expect(op.starts).toBe(1);
  });
});
