import { describe, expect, it } from 'vitest';
import { PoolShare } from './pool-share.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** A task that runs until `finish()` is called, recording when it started. */
function gated(started: number[], id: number) {
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  return { task: () => (started.push(id), done.then(() => id)), finish: () => finish() };
}

describe('PoolShare: a bounded queue in front of a share of the pool', () => {
  it('runs at most `slots` at once, queues `queue` more in order, and refuses the next at once', async () => {
    const share = new PoolShare(2, 3, () => Object.assign(new Error('busy'), { code: 'BUSY' }));
    const started: number[] = [];
    const tasks = Array.from({ length: 5 }, (_, i) => gated(started, i));
    const runs = tasks.map((t) => share.run(t.task));
    await tick();
    expect(started).toEqual([0, 1]);
    expect([share.active, share.waiting]).toEqual([2, 3]);
    await expect(share.run(async () => 'late')).rejects.toMatchObject({ code: 'BUSY' });
    tasks[1]!.finish();
    await tick();
    expect(started).toEqual([0, 1, 2]); // the first in the queue takes the freed slot
    expect([share.active, share.waiting]).toEqual([2, 2]);
    for (const t of tasks) t.finish();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect([share.active, share.waiting]).toEqual([0, 0]);
  });

  it('a failed task gives its slot back; `always` waits even when the queue is full', async () => {
    const share = new PoolShare(1, 0, () => new Error('busy'));
    const started: number[] = [];
    const first = gated(started, 1);
    const running = share.run(first.task);
    await expect(share.run(async () => 2)).rejects.toThrow('busy');
    const background = share.run(async () => 3, { always: true });
    first.finish();
    expect(await running).toBe(1);
    expect(await background).toBe(3);
    await expect(share.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(share.active).toBe(0);
    expect(await share.run(async () => 4)).toBe(4);
  });

  it('queryable(): every query of the wrapped database is admitted', async () => {
    const share = new PoolShare(1, 1, () => new Error('busy'));
    let inFlight = 0;
    let most = 0;
    const db = {
      query: async () => {
        most = Math.max(most, ++inFlight);
        await tick();
        inFlight--;
        return { rows: [], rowCount: 0 } as never;
      },
    };
    const bounded = share.queryable(db);
    const results = await Promise.allSettled([bounded.query('select 1'), bounded.query('select 2'), bounded.query('select 3')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(most).toBe(1);
  });
});
