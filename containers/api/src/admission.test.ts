import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { performance as nodePerformance } from 'node:perf_hooks';
import { Admission, LoopUtilization } from './admission.ts';

const settle = () => new Promise((r) => setImmediate(r));

/** A raw request as the routes hand it to admitted(): Fastify's request over it (its client address, no login cookie). */
const asRequest = (req: import('node:http').IncomingMessage) => ({ raw: req, ip: '127.0.0.1', cookies: {} }) as unknown as import('fastify').FastifyRequest;

describe('admission queue', () => {
  it('a client holds at most its share of the places: per address and per login, given back with the place (issue 43)', () => {
    const admission = new Admission({ concurrency: 4, queue: 4, maxWaitMs: 1000, perAddress: 3, perAccount: 2 });
    const a = [admission.claim('198.51.100.1', undefined), admission.claim('198.51.100.1', undefined), admission.claim('198.51.100.1', undefined)];
    expect(a.every((give) => give !== null)).toBe(true);
    expect(admission.claim('198.51.100.1', undefined)).toBeNull();
    // another address is not affected
    const login = [admission.claim('198.51.100.2', 'cookie-1'), admission.claim('198.51.100.3', 'cookie-1')];
    expect(login.every((give) => give !== null)).toBe(true);
    // the same login from a third address: over the account's share
    expect(admission.claim('198.51.100.4', 'cookie-1')).toBeNull();
    expect(admission.claim('198.51.100.4', 'cookie-2')).not.toBeNull();
    expect(admission.heldBy('198.51.100.1')).toEqual({ address: 3, login: 0 });
    expect(admission.refusedShares).toBe(2);
    a[0]!();
    a[0]!(); // twice: once
    expect(admission.heldBy('198.51.100.1').address).toBe(2);
    expect(admission.claim('198.51.100.1', undefined)).not.toBeNull();
    login[0]!();
    expect(admission.claim('198.51.100.4', 'cookie-1')).not.toBeNull();
    // once a route read the logins' account, they count together for it
    const learning = new Admission({ concurrency: 4, queue: 4, maxWaitMs: 1000, perAccount: 2 });
    learning.learn('cookie-a', 'acc_1');
    learning.learn('cookie-b', 'acc_1');
    expect(learning.claim('198.51.100.1', 'cookie-a')).not.toBeNull();
    expect(learning.claim('198.51.100.2', 'cookie-b')).not.toBeNull();
    expect(learning.claim('198.51.100.3', 'cookie-a')).toBeNull();
    expect(learning.claim('198.51.100.3', 'cookie-c')).not.toBeNull();
    // no share configured: never refused
    const open = new Admission({ concurrency: 1, queue: 0, maxWaitMs: 1000 });
    for (let i = 0; i < 10; i++) expect(open.claim('198.51.100.9', 'c')).not.toBeNull();
  });

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

describe('the turn gate: whole turns in flight', () => {
  it('at most maxInFlight turns are in flight, their slots given back or not: the next is refused until one is done', async () => {
    const admission = new Admission({ concurrency: 2, queue: 10, maxWaitMs: 1000, maxInFlight: 3 });
    const turns = [admission.tryEnterTurn(), admission.tryEnterTurn(), admission.tryEnterTurn()];
    // Each gives its slot back at once (its prompt is built; the provider's reply runs on).
    for (const t of turns) (await t!.slot)();
    expect(admission.running).toBe(0);
    expect(admission.inFlight).toBe(3);
    // Slots free and the queue empty, yet a fourth turn is refused.
    expect(admission.tryEnterTurn()).toBeNull();
    expect(admission.counts).toEqual({ admitted: 3, refused: 1 });
    expect(admission.refusedTurns).toBe(1);
    turns[0]!.done();
    turns[0]!.done(); // a second done gives back nothing more
    expect(admission.inFlight).toBe(2);
    const next = admission.tryEnterTurn();
    expect(next).not.toBeNull();
    expect(admission.tryEnterTurn()).toBeNull();
    // A stream open (tryEnter) is not a turn: the gate does not apply to it.
    expect(admission.tryEnter()).not.toBeNull();
  });

  it('while the event loop is saturated, a new turn is refused once `concurrency` are in flight, never below that', async () => {
    const loop = { value: 0.2 };
    const admission = new Admission({ concurrency: 2, queue: 10, maxWaitMs: 1000, maxLoopUtilization: 0.9 }, loop);
    const first = admission.tryEnterTurn();
    (await first!.slot)();
    loop.value = 0.97;
    // One in flight, fewer than the slots: a process doing a few turns is never refused for its loop.
    const second = admission.tryEnterTurn();
    expect(second).not.toBeNull();
    (await second!.slot)();
    expect(admission.turnsClosed).toBe(true);
    expect(admission.tryEnterTurn()).toBeNull();
    loop.value = 0.6; // the loop has room again
    expect(admission.tryEnterTurn()).not.toBeNull();
    // With the gate off (1), a saturated loop refuses nothing.
    const open = new Admission({ concurrency: 1, queue: 10, maxWaitMs: 1000, maxLoopUtilization: 1 }, { value: 1 });
    const many = Array.from({ length: 5 }, () => open.tryEnterTurn());
    expect(many.every((t) => t !== null)).toBe(true);
    for (const t of many) (await t!.slot)(); // each waits for the one slot in turn
    expect(open.inFlight).toBe(5);
  });

  it('LoopUtilization reuses a reading for a millisecond (a burst reads it for every refusal)', async () => {
    const loop = new LoopUtilization(50);
    await new Promise((r) => setTimeout(r, 15));
    const spy = vi.spyOn(nodePerformance, 'eventLoopUtilization'); // the global performance object
    // the clock the reading goes by, moved by the test (a busy machine may pause the test between two reads)
    let clock = nodePerformance.now();
    const now = vi.spyOn(nodePerformance, 'now').mockImplementation(() => clock);
    try {
      const first = loop.value;
      const calls = spy.mock.calls.length;
      expect(calls).toBe(2); // one reading: now, and since the snapshot
      clock += 0.03; // 30 µs later, as the next refusal of a burst
      const again = loop.value;
      expect(spy.mock.calls.length).toBe(calls);
      expect(again).toBe(first);
      clock += 1.5;
      void loop.value;
      expect(spy.mock.calls.length).toBe(calls + 2); // read again once the millisecond passed
    } finally {
      now.mockRestore();
      spy.mockRestore();
    }
  });

  it("LoopUtilization reads ~1 after the loop was kept busy and falls once it idles", async () => {
    const loop = new LoopUtilization(50);
    await new Promise((r) => setTimeout(r, 60));
    expect(loop.value).toBeGreaterThanOrEqual(0); // reading it takes the snapshot measured from
    const until = performance.now() + 80;
    while (performance.now() < until); // 80 ms of work without a break
    expect(loop.value).toBeGreaterThan(0.9);
    // Once it idles it falls: other work sharing this worker's loop (a file's leftover timers, a
    // collection, a profiler) can keep one 50 ms window over half busy on a loaded machine (0.57
    // after 120 ms, 0.64 after 400 ms under a profiler), so it is read until it falls (never: fails).
    await new Promise((r) => setTimeout(r, 200));
    await expect.poll(() => loop.value, { timeout: 3_000, interval: 60 }).toBeLessThan(0.5);
  });
});

describe('shedding before routing', () => {
  it('while the queue is full, a turn or a stream open is answered 503 SERVER_BUSY before routing; other requests pass', async () => {
    const { createServer } = await import('node:http');
    const { shedFastPath, admissionOf, holdsSlot } = await import('./admission.ts');
    const recorded: unknown[] = [];
    const ctx = { config: { admission: { concurrency: 1, queue: 0, maxWaitMs: 1000 } }, telemetry: { recordRequest: (r: unknown) => recorded.push(r) } } as unknown as Parameters<typeof shedFastPath>[0];
    const shed = shedFastPath(ctx);
    const slotHeld: boolean[] = [];
    const server = createServer((req, res) => {
      const answered = shed(req, res);
      slotHeld.push(holdsSlot(req));
      if (!answered) res.end('routed');
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
      expect(slotHeld).toEqual([true, false, false, false, false]); // only the turn let through holds a slot
      for (const path of ['/api/sessions/cnv_1', '/api/sessions/cnv_1/messages/x', '/api/library', '/health/live']) expect(await (await send(path, 'GET')).text(), path).toBe('routed');
      expect(admissionOf(ctx).counts.refused).toBe(4);
      held();
      expect(await (await send('/api/sessions/cnv_1/messages')).text()).toBe('routed');
    } finally {
      server.close();
    }
  });

  it('a refusal on a kept-alive connection is one well-formed answer, and the connection serves its next request; a pipelined one waits its turn', async () => {
    const { createServer } = await import('node:http');
    const { connect } = await import('node:net');
    const { shedFastPath, admissionOf } = await import('./admission.ts');
    const ctx = { config: { admission: { concurrency: 1, queue: 0, maxWaitMs: 1000 } }, telemetry: { recordRequest: () => {} } } as unknown as Parameters<typeof shedFastPath>[0];
    const shed = shedFastPath(ctx);
    const server = createServer((req, res) => {
      if (shed(req, res)) return;
      // a routed request answers after a while (a slow page), so a request pipelined behind it waits
      setTimeout(() => res.end(`routed ${req.url}`), req.url === '/slow' ? 150 : 0);
    });
    server.keepAliveTimeout = 5000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const held = await admissionOf(ctx).enter();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const waitFor = (count: number) => expect.poll(() => received.split('HTTP/1.1 ').length - 1, { timeout: 3000, interval: 10 }).toBe(count);
    const turn = 'POST /api/sessions/cnv_1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 16\r\n\r\n{"content":"hi"}';
    try {
      await new Promise((r) => socket.once('connect', r));
      socket.write(turn);
      await waitFor(1);
      await new Promise((r) => setTimeout(r, 50)); // nothing more follows it
      const [head, body, ...rest] = received.split('\r\n\r\n') as [string, string];
      expect(rest).toEqual([]);
      const [status, ...lines] = head.split('\r\n');
      expect(status).toBe('HTTP/1.1 503 Service Unavailable');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      expect(headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'retry-after': '2', 'cache-control': 'no-store', connection: 'keep-alive' });
      expect(new Date(headers.date!).getTime()).toBeGreaterThan(Date.now() - 5000);
      expect(Number(headers['content-length'])).toBe(Buffer.byteLength(body));
      expect(JSON.parse(body)).toEqual({ error: { code: 'SERVER_BUSY', message: expect.stringContaining('busy'), requestId: headers['x-request-id'] } });
      // The same connection serves the next request, routed or refused.
      received = '';
      socket.write('GET /api/library HTTP/1.1\r\nhost: x\r\n\r\n');
      await waitFor(1);
      expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nrouted \/api\/library$/);
      // Pipelined: a slow request, then a turn refused at once; the refusal leaves after the slow answer.
      received = '';
      socket.write(`GET /slow HTTP/1.1\r\nhost: x\r\n\r\n${turn}`);
      await waitFor(2);
      expect(received.indexOf('routed /slow')).toBeGreaterThan(0);
      expect(received.indexOf('HTTP/1.1 503')).toBeGreaterThan(received.indexOf('routed /slow'));
      expect(received.endsWith('"}}')).toBe(true);
      expect(admissionOf(ctx).counts.refused).toBe(2);
    } finally {
      held();
      socket.destroy();
      server.close();
    }
  });

  it('a burst arriving at once: only the slots and the queue reach routing, each holding its place; the rest are refused before routing', async () => {
    const { createServer } = await import('node:http');
    const { shedFastPath, admissionOf, admitted } = await import('./admission.ts');
    const ctx = { config: { admission: { concurrency: 2, queue: 3, maxWaitMs: 5000 } }, telemetry: { recordRequest: () => {} } } as unknown as Parameters<typeof shedFastPath>[0];
    const shed = shedFastPath(ctx);
    let routed = 0;
    const server = createServer((req, res) => {
      if (shed(req, res)) return;
      routed++;
      // As Fastify: the route runs later (after its hooks and the body), then takes the slot the callback reserved.
      setTimeout(() => {
        void admitted(ctx, asRequest(req), res).then((release) => {
          setTimeout(() => {
            release();
            res.end('done');
          }, 400);
        });
      }, 30);
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      // 20 requests, each on its own connection, written in one go: they reach the server in one turn of its event loop.
      const { connect } = await import('node:net');
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          new Promise<string>((resolve, reject) => {
            const socket = connect(Number(new URL(url).port), '127.0.0.1', () => {
              socket.write('POST /api/sessions/cnv_1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}');
            });
            let text = '';
            socket.on('data', (d) => (text += d.toString()));
            socket.on('end', () => resolve(text.split(' ')[1]!));
            socket.on('error', reject);
          }),
        ),
      );
      expect(answers.filter((s) => s === '200')).toHaveLength(5);
      expect(answers.filter((s) => s === '503')).toHaveLength(15);
      expect(routed).toBe(5);
      // Each routed request used the place its callback took: 5 admitted in all, none twice.
      expect(admissionOf(ctx).counts).toEqual({ admitted: 5, refused: 15 });
      expect(admissionOf(ctx).running).toBe(0);
    } finally {
      server.close();
    }
  });

  it('a refusal in a route (SERVER_BUSY) is answered 503 with Retry-After without a log line; other server errors are logged', async () => {
    const { default: Fastify } = await import('fastify');
    const { installErrorHandling } = await import('@yumina/http');
    const { busy } = await import('./admission.ts');
    const lines: { level: number; msg: string }[] = [];
    const { default: pino } = await import('pino');
    const app = Fastify({
      loggerInstance: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) }),
    }) as unknown as import('fastify').FastifyInstance;
    const captured: unknown[] = [];
    installErrorHandling(app, { onServerError: (err) => captured.push(err), refusals: new Set(['SERVER_BUSY']) });
    app.get('/busy', async () => Promise.reject(busy()));
    app.get('/boom', async () => Promise.reject(new Error('boom')));
    const before = lines.length;
    for (let i = 0; i < 5; i++) {
      const res = await app.inject('/busy');
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.json()).toMatchObject({ error: { code: 'SERVER_BUSY' } });
    }
    expect(lines.slice(before).filter((l) => l.level >= 40)).toEqual([]);
    expect(captured).toEqual([]);
    expect((await app.inject('/boom')).statusCode).toBe(500);
    expect(lines.filter((l) => l.level >= 50)).toHaveLength(1);
    expect(captured).toHaveLength(1);
    await app.close();
  });

  it('a turn counts in flight until its answer ends, not only while it holds its slot: beyond maxInFlight it is refused before routing', async () => {
    const { createServer } = await import('node:http');
    const { shedFastPath, admissionOf, admitted } = await import('./admission.ts');
    const ctx = {
      config: { admission: { concurrency: 1, queue: 0, maxWaitMs: 1000, maxInFlight: 2 } },
      telemetry: { recordRequest: () => {} },
    } as unknown as Parameters<typeof shedFastPath>[0];
    const shed = shedFastPath(ctx);
    const answers: (() => void)[] = [];
    const server = createServer((req, res) => {
      if (shed(req, res)) return;
      req.resume();
      // As a turn: the slot goes back once the prompt is built; the answer (the provider's reply) runs on.
      void admitted(ctx, asRequest(req), res).then((release) => {
        release();
        res.writeHead(200);
        res.write('start');
        answers.push(() => res.end());
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const { request } = await import('node:http');
    const send = (path: string, method = 'POST') =>
      new Promise<number>((resolve, reject) => {
        const req = request(url + path, { method, agent: false }, (res) => {
          resolve(res.statusCode!);
          res.resume();
        });
        req.on('error', reject);
        req.end(method === 'POST' ? '{}' : undefined);
      });
    try {
      expect(await send('/api/sessions/cnv_1/messages')).toBe(200);
      expect(await send('/api/sessions/cnv_2/messages')).toBe(200);
      expect(admissionOf(ctx).running).toBe(0);
      expect(admissionOf(ctx).inFlight).toBe(2);
      // The slot is free, but two turns are still answering: a third is refused.
      expect(await send('/api/sessions/cnv_3/continue')).toBe(503);
      // A stream open is not a turn.
      expect(await send('/api/worlds/wld_1/updates/events', 'GET')).toBe(200);
      answers.shift()!();
      await new Promise((r) => setTimeout(r, 50));
      expect(admissionOf(ctx).inFlight).toBe(1);
      expect(await send('/api/sessions/cnv_3/regenerate')).toBe(200);
      for (const end of answers) end();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('admitted requests start once the refusals pause', () => {
  const nextTurn = () => new Promise((r) => setImmediate(r));

  it('with no refusal lately, a start runs on the next turn of the event loop', async () => {
    const admission = new Admission({ concurrency: 1, queue: 0, maxWaitMs: 1000 });
    const started: string[] = [];
    admission.startWhenQuiet(() => started.push('a'));
    expect(started).toEqual([]); // never inside the request callback
    await nextTurn();
    await nextTurn();
    expect(started).toEqual(['a']);
    expect(admission.held).toBe(0);
  });

  describe('on a clock of the test\'s own (the refusals\' timing, not the machine\'s, decides)', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'Date'] });
      vi.spyOn(nodePerformance, 'now').mockImplementation(() => Date.now()); // the fake clock's
    });
    afterEach(() => {
      vi.useRealTimers();
      vi.restoreAllMocks();
    });
    /** A queue whose only slot is taken, which has just refused a request (t = 0). */
    const refusing = async () => {
      const admission = new Admission({ concurrency: 1, queue: 0, maxWaitMs: 10_000 });
      const release = await admission.enter();
      expect(admission.tryEnter()).toBeNull();
      return { admission, release };
    };

    it('while requests are being refused, starts wait (in order) until the refusals pause', async () => {
      const { admission, release } = await refusing();
      const started: string[] = [];
      admission.startWhenQuiet(() => started.push('a'));
      admission.startWhenQuiet(() => started.push('b'));
      vi.advanceTimersByTime(1);
      expect(admission.held).toBe(2);
      // Refusals every 3 ms for 60 ms: never 5 ms without one, so nothing starts.
      for (let t = 0; t < 20; t++) {
        vi.advanceTimersByTime(3);
        expect(admission.tryEnter()).toBeNull();
      }
      expect(started).toEqual([]);
      // They pause: within 10 ms (5 quiet, checked every 5) the held starts run, in the order they were asked.
      vi.advanceTimersByTime(10);
      expect(started).toEqual(['a', 'b']);
      expect(admission.held).toBe(0);
      release();
    });

    it('refusals that never pause hold a start for 100 ms at most', async () => {
      const { admission, release } = await refusing();
      let startedAt = -1;
      const asked = performance.now();
      admission.startWhenQuiet(() => (startedAt = performance.now() - asked));
      for (let t = 0; t < 200 && startedAt < 0; t++) {
        vi.advanceTimersByTime(1);
        admission.tryEnter(); // a refusal every millisecond
      }
      expect(startedAt).toBeGreaterThanOrEqual(100);
      expect(startedAt).toBeLessThanOrEqual(110);
      release();
    });
  });
});

