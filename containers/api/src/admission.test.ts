import { describe, expect, it } from 'vitest';
import { Admission } from './admission.ts';

const settle = () => new Promise((r) => setImmediate(r));

describe('admission queue', () => {
  it('runs `concurrency` at once, queues `queue` more in order, refuses the rest at once with 503 SERVER_BUSY and Retry-After', async () => {
    const admission = new Admission({ concurrency: 2, queue: 2, maxWaitMs: 10_000 });
    const order: string[] = [];
    const a = await admission.enter();
    const b = await admission.enter();
    expect(admission.running).toBe(2);
    const c = admission.enter().then((release) => (order.push('c'), release));
    const d = admission.enter().then((release) => (order.push('d'), release));
    expect(admission.waiting).toBe(2);
    const started = performance.now();
    const refused = await admission.enter().then(
      () => null,
      (err: { statusCode: number; code: string; headers: Record<string, string> }) => err,
    );
    expect(performance.now() - started).toBeLessThan(20);
    expect(refused).toMatchObject({ statusCode: 503, code: 'SERVER_BUSY', headers: { 'retry-after': '2' } });
    await settle();
    expect(order).toEqual([]);
    a();
    a(); // a second release gives back nothing more
    await settle();
    expect(order).toEqual(['c']);
    expect(admission.running).toBe(2);
    b();
    await settle();
    expect(order).toEqual(['c', 'd']);
    (await c)();
    (await d)();
    expect(admission.running).toBe(0);
    expect(admission.counts).toEqual({ admitted: 4, refused: 1 });
  });

  it('a waiter past maxWaitMs is refused and leaves the queue; run() gives its slot back when the work fails', async () => {
    const admission = new Admission({ concurrency: 1, queue: 5, maxWaitMs: 30 });
    const held = await admission.enter();
    await expect(admission.enter()).rejects.toMatchObject({ code: 'SERVER_BUSY' });
    expect(admission.waiting).toBe(0);
    held();
    await expect(admission.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(admission.running).toBe(0);
    expect(await admission.run(async () => 7)).toBe(7);
  });

  it('the queue shrinks to what the running units drain within half the longest wait, at the hold time measured', async () => {
    const admission = new Admission({ concurrency: 1, queue: 100, maxWaitMs: 400 });
    expect(admission.queueLimit).toBe(100); // nothing measured yet
    const slow = await admission.enter();
    await new Promise((r) => setTimeout(r, 100));
    slow(); // held ~100 ms: one unit drains 2 in 200 ms
    expect(admission.queueLimit).toBeGreaterThanOrEqual(1);
    expect(admission.queueLimit).toBeLessThanOrEqual(2);
    const held = await admission.enter();
    const waiters = Array.from({ length: admission.queueLimit }, () => admission.enter());
    await expect(admission.enter()).rejects.toMatchObject({ code: 'SERVER_BUSY' });
    held();
    for (const w of waiters) (await w)();
    expect(admission.running).toBe(0);
  });
});
