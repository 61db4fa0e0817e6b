import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnRedis, sharedRedisUrl, testPrefix } from '../../../tests/support/redis.ts';
import { FallbackStore } from './fallback.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis.ts';
import { compareEventIds, eventOf, type Store } from './types.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The one contract both implementations keep. */
function contract(name: string, make: () => Promise<Store>) {
  describe(`${name} store contract`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await make();
    });
    afterAll(() => store?.close());

    it('cache get/set/del with TTL', async () => {
      await store.set('k', 'v', 0.15);
      expect(await store.get('k')).toBe('v');
      await sleep(250);
      expect(await store.get('k')).toBeUndefined();
      await store.set('k2', 'v2', 10);
      await store.del('k2');
      expect(await store.get('k2')).toBeUndefined();
    });

    it('rate limit: allowed up to the limit, then refused with retryAfter seconds', async () => {
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await store.rateLimit('rl', 3, 30));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
      expect(results[3]!.retryAfter).toBeGreaterThanOrEqual(1);
      expect(results[3]!.retryAfter).toBeLessThanOrEqual(30);
      expect(results[0]!.retryAfter).toBe(0);
    });

    it('rate limit window resets', async () => {
      expect((await store.rateLimit('rl2', 1, 1)).allowed).toBe(true);
      expect((await store.rateLimit('rl2', 1, 1)).allowed).toBe(false);
      await sleep(1100);
      expect((await store.rateLimit('rl2', 1, 1)).allowed).toBe(true);
    });

    it('locks: one owner, only the owner renews or releases, expiry frees it', async () => {
      const a = await store.acquireLock('lock', 300);
      expect(a).toBeTypeOf('string');
      expect(await store.acquireLock('lock', 300)).toBeNull();
      expect(await store.releaseLock('lock', 'not-the-owner')).toBe(false);
      expect(await store.renewLock('lock', 'not-the-owner', 300)).toBe(false);
      expect(await store.renewLock('lock', a!, 300)).toBe(true);
      expect(await store.releaseLock('lock', a!)).toBe(true);
      const b = await store.acquireLock('lock', 100);
      expect(b).not.toBeNull();
      await sleep(200);
      expect(await store.acquireLock('lock', 100)).not.toBeNull();
    });

    it('concurrency slots: at most max, released slots free up, expired slots free up', async () => {
      const s1 = await store.acquireSlot('slots', 2, 10_000);
      const s2 = await store.acquireSlot('slots', 2, 10_000);
      expect(s1 && s2).toBeTruthy();
      expect(await store.acquireSlot('slots', 2, 10_000)).toBeNull();
      await store.releaseSlot('slots', s1!);
      expect(await store.acquireSlot('slots', 2, 10_000)).not.toBeNull();
      const t = await store.acquireSlot('slots-exp', 1, 100);
      expect(t).not.toBeNull();
      await sleep(200);
      expect(await store.acquireSlot('slots-exp', 1, 100)).not.toBeNull();
    });

    it('pub/sub notifications reach subscribers until they unsubscribe', async () => {
      const got: string[] = [];
      const off = await store.subscribe('chan', (m) => got.push(m));
      await store.publish('chan', 'one');
      await expect.poll(() => got, { timeout: 2000 }).toEqual(['one']);
      await off();
      await store.publish('chan', 'two');
      await sleep(100);
      expect(got).toEqual(['one']);
    });

    it('event logs: appended entries are published in order with their ids, read back after an id, and capped', async () => {
      const heard: string[] = [];
      const off = await store.subscribe('log-chan', (m) => heard.push(m));
      expect(await store.lastEventId('log')).toBe('0-0');
      expect(await store.readEvents('log', '0-0', 10)).toEqual([]);
      const ids: string[] = [];
      for (const m of ['a', 'b c', 'd', 'e']) ids.push(await store.appendEvent('log', 'log-chan', m, { maxLength: 3, ttlSeconds: 60 }));
      expect([...ids].sort(compareEventIds)).toEqual(ids);
      expect(new Set(ids).size).toBe(4);
      await expect.poll(() => heard.map(eventOf), { timeout: 2000 }).toEqual(ids.map((id, i) => ({ id, message: ['a', 'b c', 'd', 'e'][i] })));
      expect(await store.lastEventId('log')).toBe(ids[3]);
      // after the second: the third and fourth (the first was dropped by the cap, which does not matter here)
      expect(await store.readEvents('log', ids[1]!, 10)).toEqual([
        { id: ids[2], message: 'd' },
        { id: ids[3], message: 'e' },
      ]);
      expect(await store.readEvents('log', ids[1]!, 1)).toEqual([{ id: ids[2], message: 'd' }]);
      // from the dropped first entry on: nothing is missing; from before it, the reader starts over
      expect((await store.readEvents('log', ids[0]!, 10))?.map((e) => e.id)).toEqual(ids.slice(1));
      expect(await store.readEvents('log', '0-0', 10)).toBeNull();
      // a log that expired (or never was) cannot answer "after an id"
      expect(await store.readEvents('no-such-log', ids[0]!, 10)).toBeNull();
      await off();
    });

    it('expiring sets: members stay until removed or their time runs out', async () => {
      await store.touchMember('set', 'x', 10_000);
      await store.touchMember('set', 'y', 100);
      expect((await store.members('set')).sort()).toEqual(['x', 'y']);
      await sleep(200);
      expect(await store.members('set')).toEqual(['x']);
      await store.removeMember('set', 'x');
      expect(await store.members('set')).toEqual([]);
    });
  });
}

contract('memory', async () => new MemoryStore());
contract(
  'redis',
  async () => {
    const s = new RedisStore({ url: sharedRedisUrl, prefix: testPrefix() });
    await s.connect();
    return s;
  },
);

describe('Redis failure behaviour (own redis-server, never the shared one)', () => {
  let own: OwnRedis;
  beforeAll(async () => {
    own = await OwnRedis.start();
  });
  afterAll(() => own?.stop());

  it('a command fails in under 100 ms while Redis is stopped, and at about 3 s against a paused server', async () => {
    const store = new RedisStore({ url: own.url });
    expect(await store.connect()).toBe(true);
    await store.set('x', '1', 10);

    await own.pause(5_000);
    const t0 = performance.now();
    const paused = await store.get('x').catch((e: unknown) => e);
    const pausedMs = performance.now() - t0;
    expect(paused).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(pausedMs).toBeGreaterThan(2_800);
    expect(pausedMs).toBeLessThan(4_000);

    await own.stop();
    await expect.poll(() => store.client.status, { timeout: 3000 }).not.toBe('ready');
    const t1 = performance.now();
    const stopped = await store.get('x').catch((e: unknown) => e);
    expect(stopped).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(performance.now() - t1).toBeLessThan(100);
    await store.close();
    await own.start();
  }, 20_000);

  it('rate limiting falls back to memory while Redis is down and returns to Redis, logging each transition once', async () => {
    const logs: string[] = [];
    const log = { info: (o: { type?: string }) => logs.push(String(o.type)), warn: (o: { type?: string }) => logs.push(String(o.type)) };
    const redis = new RedisStore({ url: own.url, prefix: testPrefix() });
    await redis.connect();
    const store = new FallbackStore(redis, log);

    expect((await store.rateLimit('fb', 2, 60)).count).toBe(1);
    expect(store.degraded).toBe(false);

    await own.stop();
    await expect.poll(() => redis.client.status, { timeout: 3000 }).not.toBe('ready');
    const down = [await store.rateLimit('fb', 2, 60), await store.rateLimit('fb', 2, 60), await store.rateLimit('fb', 2, 60)];
    expect(store.degraded).toBe(true);
    expect(down.map((r) => r.allowed)).toEqual([true, true, false]); // counted in memory
    expect((await store.acquireSlot('fb-slot', 1, 10_000)) !== null).toBe(true);
    expect(await store.get('anything')).toBeUndefined();
    await expect(store.acquireLock('fb-lock', 1000)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(logs).toEqual(['store.fallback']);

    await own.start();
    await expect.poll(() => redis.client.status, { timeout: 5000 }).toBe('ready');
    const back = await store.rateLimit('fb', 2, 60);
    expect(store.degraded).toBe(false);
    // Counted on the (restarted, empty) Redis again, not in memory, where it would be the 4th hit.
    expect(back).toMatchObject({ allowed: true, count: 1 });
    expect(await redis.client.get('fb')).toBe('1');
    expect(logs).toEqual(['store.fallback', 'store.recovered']);
    await store.close();
  }, 20_000);
});
