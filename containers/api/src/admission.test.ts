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
    // Refused at once: settled before the next turn of the event loop, without waiting for a slot.
    const refusal = admission.enter().then(
      () => null,
      (err: { statusCode: number; code: string; headers: Record<string, string> }) => err,
    );
    const refused = await Promise.race([refusal, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
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

  it('the queue shrinks to what the running units drain within half the longest wait, at the hold time measured, never below the slots', async () => {
    const admission = new Admission({ concurrency: 2, queue: 100, maxWaitMs: 1600 });
    expect(admission.queueLimit).toBe(100); // nothing measured yet
    const slow = await admission.enter();
    await new Promise((r) => setTimeout(r, 100));
    slow(); // held ~100 ms: two units drain ~16 in 800 ms
    expect(admission.queueLimit).toBeGreaterThanOrEqual(10);
    expect(admission.queueLimit).toBeLessThanOrEqual(16);
    const slower = await admission.enter();
    await new Promise((r) => setTimeout(r, 3000));
    slower(); // the average moves a tenth of the way to 3 s: ~390 ms, ~4 in 800 ms; the floor is the 2 slots
    expect(admission.queueLimit).toBeGreaterThanOrEqual(2);
    expect(admission.queueLimit).toBeLessThanOrEqual(5);
    const held = [await admission.enter(), await admission.enter()];
    const waiters = Array.from({ length: admission.queueLimit }, () => admission.enter());
    await expect(admission.enter()).rejects.toMatchObject({ code: 'SERVER_BUSY' });
    for (const h of held) h();
    for (const w of waiters) (await w)();
    expect(admission.running).toBe(0);
  });
});

describe('shedding before routing', () => {
  it('while the queue is full, a turn or a stream open is answered 503 SERVER_BUSY before routing; other requests pass', async () => {
    const { createServer } = await import('node:http');
    const { shedFastPath, admissionOf } = await import('./admission.ts');
    const recorded: unknown[] = [];
    const ctx = { config: { admission: { concurrency: 1, queue: 0, maxWaitMs: 1000 } }, telemetry: { recordRequest: (r: unknown) => recorded.push(r) } } as unknown as Parameters<typeof shedFastPath>[0];
    const shed = shedFastPath(ctx);
    const server = createServer((req, res) => {
      if (!shed(req, res)) res.end('routed');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const send = (path: string, method = 'POST') => fetch(url + path, { method, body: method === 'POST' ? '{"content":"hi"}' : undefined });
      expect(await (await send('/api/sessions/cnv_1/messages')).text()).toBe('routed'); // a slot is free
      const held = await admissionOf(ctx).enter();
      for (const path of ['/api/sessions/cnv_1/messages', '/api/sessions/cnv_1/regenerate', '/api/sessions/cnv_1/continue']) {
        const res = await send(path);
        expect(res.status, path).toBe(503);
        expect(res.headers.get('retry-after')).toBe('2');
        // The error shape of every 5xx: the request's id in the body and as x-request-id.
        const body = (await res.json()) as { error: { requestId: string } };
        expect(body).toEqual({ error: { code: 'SERVER_BUSY', message: expect.stringContaining('busy'), requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
        expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
      }
      expect((await send('/api/worlds/wld_1/updates/events', 'GET')).status).toBe(503);
      for (const path of ['/api/sessions/cnv_1', '/api/sessions/cnv_1/messages/x', '/api/library', '/health/live']) expect(await (await send(path, 'GET')).text(), path).toBe('routed');
      expect(admissionOf(ctx).counts.refused).toBe(4);
      held();
      expect(await (await send('/api/sessions/cnv_1/messages')).text()).toBe('routed');
    } finally {
      server.close();
    }
  });
});
