import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';
import { SESSION_COOKIE } from '@yumina/accounts';
import { HttpError } from '@yumina/http';
import type { FastifyRequest, preParsingHookHandler } from 'fastify';
import type { AppContext } from './context.ts';

/**
 * Admission control of one replica (issue 32): the server's own work of a turn (the send,
 * regenerate and continue routes: their statements and the prompt's assembly, up to the provider's
 * call) and of a live stream's opening reads passes one bounded queue. `concurrency` units run at
 * once (sized from the database pool: each holds at most one connection at a time, so the pool
 * never has more waiters than it can serve within its acquire timeout); more wait in order. How
 * many may wait follows the measured capacity: the queue admits no more than the running units
 * drain within half of `maxWaitMs` at the hold time measured lately (a moving average), and never
 * more than `queue`. Beyond it a request is refused at once with 503 SERVER_BUSY and Retry-After,
 * before it touches the database: an overload is shed in microseconds instead of every request
 * waiting 10 s for a connection and then failing with DB_POOL_TIMEOUT. A waiter past `maxWaitMs`
 * (the capacity fell meanwhile) is refused too. When the process itself is the bottleneck (its
 * event loop running late by more than half of `maxWaitMs`: requests already waited that long
 * before they reached this queue), nothing more may wait: only a free slot admits. The queue never
 * shrinks below `concurrency` otherwise, so an ordinary burst (twice the slots) always passes.
 * A turn also passes a gate on the whole of it (tryEnterTurn): at most `maxInFlight` turns between
 * their admission and the end of their answer, and none new while the event loop is saturated
 * (its utilization over the last 10–50 ms above `maxLoopUtilization`) with `concurrency` or more in
 * flight; refused like a full queue.
 */
export interface AdmissionLimits {
  concurrency: number;
  queue: number;
  maxWaitMs: number;
  /** Turns in flight at most (admitted and not answered yet, the provider's reply included); 0 or unset: no cap. */
  maxInFlight?: number;
  /** No new turn while the event loop's utilization (0–1, over the last 10–50 ms) is above this and `concurrency` or more turns are in flight; unset or 1: never. */
  maxLoopUtilization?: number;
  /** Places (running and waiting) one client address may hold at once (claim); 0 or unset: no share. */
  perAddress?: number;
  /** Places one account may hold at once (claim; by its login cookie, and by the account once a route read it: learn); 0 or unset: no share. */
  perAccount?: number;
  /** How long a body that had not arrived with its headers may take to arrive (ms; bodyDeadline); unset: none here. */
  bodyTimeoutMs?: number;
}

export const ADMISSION_RETRY_AFTER_S = 2;
const BUSY_MESSAGE = 'The server is busy right now; your request was not started. Try again in a moment.';

export const busy = () => new HttpError(503, 'SERVER_BUSY', BUSY_MESSAGE, { 'retry-after': String(ADMISSION_RETRY_AFTER_S) });

interface Waiter {
  admit(): void;
  timer: NodeJS.Timeout;
}

/** How long without a refusal counts as the refusals having paused (ms; startWhenQuiet). */
const QUIET_MS = 5;
/** The longest an admitted request's start waits for the refusals to pause (ms; startWhenQuiet). */
const MAX_HOLD_MS = 100;

/** Logins whose account a replica remembers for the shares (Admission.learn). */
const LOGINS_REMEMBERED = 10_000;

/** Weight of the newest hold time in the moving average. */
const HOLD_WEIGHT = 0.1;
/** How often the event loop's lateness is sampled (ms). */
const LAG_SAMPLE_MS = 20;

/**
 * How late this process's event loop runs now: a timer every 20 ms notes how late it fired; the
 * latest lateness counts, decaying by half at each sample so one slow tick does not close the
 * queue for long. Started with the first admission (unref: it never holds the process open).
 */
class LoopLag {
  #lateMs = 0;
  #timer: NodeJS.Timeout | null = null;
  get ms(): number {
    this.#start();
    return this.#lateMs;
  }
  #start() {
    if (this.#timer) return;
    let expected = performance.now() + LAG_SAMPLE_MS;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#lateMs = Math.max(now - expected, this.#lateMs / 2);
      expected = now + LAG_SAMPLE_MS;
    }, LAG_SAMPLE_MS);
    this.#timer.unref();
  }
}
const loopLag = new LoopLag();

/** The window over which the event loop's utilization is measured (ms). */
const UTILIZATION_WINDOW_MS = 50;
/** The shortest stretch a reading is measured over (ms): a shorter one is noise (one callback). */
const UTILIZATION_MIN_MS = 10;
/** How long a reading is reused (ms): two native calls each, ~4 µs of a ~35 µs refusal when read for every one. */
const READING_REUSE_MS = 1;

/**
 * How busy this process's event loop is: its utilization (performance.eventLoopUtilization, the
 * share of wall time spent running callbacks rather than waiting for I/O) since a snapshot at most
 * 50 ms old, read when asked (no timer): the snapshot moves on once it is 50 ms old. A reading over
 * less than 10 ms (just after it moved) gives the last whole window's value instead. So a burst
 * shows within ~10 ms of its start, even in the middle of one long turn of the loop, where a
 * timer's reading would come only after it. A saturated loop reads ~1 whether its work is one long
 * task or many short ones, which the lateness of a timer (LoopLag) misses: many short callbacks
 * keep timers nearly on time while every request waits behind them.
 */
export class LoopUtilization {
  #snapshot = performance.eventLoopUtilization();
  #at = performance.now();
  #last = 0;
  /** The latest reading and when it was taken: reused for a millisecond (a burst reads it for every refusal, ~30 µs apart). */
  #read = 0;
  #readAt = -Infinity;
  constructor(readonly windowMs = UTILIZATION_WINDOW_MS) {}
  get value(): number {
    const now = performance.now();
    if (now - this.#readAt < READING_REUSE_MS) return this.#read;
    this.#readAt = now;
    const since = now - this.#at;
    if (since < Math.min(UTILIZATION_MIN_MS, this.windowMs)) return (this.#read = this.#last);
    const current = performance.eventLoopUtilization();
    const value = performance.eventLoopUtilization(current, this.#snapshot).utilization;
    if (since >= this.windowMs) {
      this.#last = value;
      this.#snapshot = current;
      this.#at = now;
    }
    return (this.#read = value);
  }
}

export class Admission {
  #running = 0;
  readonly #waiting: Waiter[] = [];
  #refused = 0;
  #admitted = 0;
  /** Moving average of how long a unit holds its slot (ms); 0 until one was measured. */
  #holdMs = 0;
  /** Turns admitted and not answered yet (tryEnterTurn until its done()). */
  #inFlight = 0;
  #refusedTurns = 0;
  /** When a request was last refused at once (full queue or turn gate), performance.now(). */
  #lastRefusalAt = Number.NEGATIVE_INFINITY;
  /** Admitted requests whose start waits for the refusals to pause (startWhenQuiet), and since when the first has waited. */
  #held: (() => void)[] = [];
  #heldSince = 0;
  #heldTimer: NodeJS.Timeout | null = null;

  /** Places held (claim) by client address (`a:` keys) and by login (`l:` keys). */
  readonly #holders = new Map<string, number>();

  constructor(
    readonly limits: AdmissionLimits,
    readonly loop: { readonly value: number } = new LoopUtilization(),
  ) {}

  /** Turns admitted and not answered yet. */
  get inFlight(): number {
    return this.#inFlight;
  }

  get running(): number {
    return this.#running;
  }
  get waiting(): number {
    return this.#waiting.length;
  }
  /** How many may wait now: what the running units drain within half the longest wait, at most `queue`; none while the event loop runs late. */
  get queueLimit(): number {
    if (loopLag.ms > this.limits.maxWaitMs / 2) return 0;
    if (this.#holdMs <= 0) return this.limits.queue;
    const drained = Math.floor((this.limits.concurrency * this.limits.maxWaitMs) / 2 / this.#holdMs);
    return Math.min(this.limits.queue, Math.max(this.limits.concurrency, drained));
  }

  /** Counters since start: admitted units and refusals (full queue, wait past its limit, or the turn gate). */
  get counts(): { admitted: number; refused: number } {
    return { admitted: this.#admitted, refused: this.#refused };
  }

  /** Whether a new turn is refused before the queue: `maxInFlight` turns in flight, or the event loop saturated with `concurrency` or more in flight. */
  get turnsClosed(): boolean {
    const { maxInFlight = 0, maxLoopUtilization = 1, concurrency } = this.limits;
    if (maxInFlight > 0 && this.#inFlight >= maxInFlight) return true;
    return this.#inFlight >= concurrency && maxLoopUtilization < 1 && this.loop.value > maxLoopUtilization;
  }

  /**
   * A whole turn (issue 32): its place in the queue (tryEnter: the slot for the server's own work up
   * to the provider's call) and its place among the turns in flight, held until `done` (its answer
   * ended). The slot goes back early (at the provider's call); the turn counts in flight until done.
   * Refused (null, counted) when the turn gate is closed (turnsClosed) or the queue is full. A slot
   * bounds the work before the provider; only this bounds the rest (the streamed reply, its write,
   * the answer's writes), which otherwise grows without limit in a burst: slots free quickly, the
   * queue keeps admitting, and the process saturates its CPU with turns that each answer late.
   */
  tryEnterTurn(): { slot: Promise<() => void>; done: () => void } | null {
    if (this.turnsClosed) {
      this.#refused++;
      this.#lastRefusalAt = performance.now();
      this.#refusedTurns++;
      return null;
    }
    const slot = this.tryEnter();
    if (!slot) return null;
    this.#inFlight++;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      this.#inFlight--;
    };
    return { slot, done };
  }

  /**
   * Starts an admitted request's route (`start`) once this turn of the event loop has read the
   * requests waiting with it, and, while requests are being refused (one within the last
   * QUIET_MS), once the refusals pause, at most MAX_HOLD_MS after it was asked, in the order asked.
   * In a burst the admitted turns arrive first and the refusals after them: without this their
   * statements, prompts and provider calls ran in the middle of the refusals, and a liveness check
   * waited behind both (bench/overload.bench.ts). With no refusal lately it costs one loop turn.
   */
  startWhenQuiet(start: () => void, first?: () => void): void {
    setImmediate(() => {
      // `first` runs once the requests read with this one are (first: keepIfArrived, whether its body came).
      first?.();
      if (!this.#held.length && performance.now() - this.#lastRefusalAt >= QUIET_MS) return start();
      if (!this.#held.length) this.#heldSince = performance.now();
      this.#held.push(start);
      this.#releaseHeldLater();
    });
  }

  #releaseHeldLater(): void {
    if (this.#heldTimer) return;
    this.#heldTimer = setTimeout(() => {
      this.#heldTimer = null;
      const now = performance.now();
      if (now - this.#lastRefusalAt < QUIET_MS && now - this.#heldSince < MAX_HOLD_MS) return this.#releaseHeldLater();
      const held = this.#held;
      this.#held = [];
      for (const start of held) start();
    }, QUIET_MS);
  }

  /** Admitted requests waiting for the refusals to pause (startWhenQuiet). */
  get held(): number {
    return this.#held.length;
  }

  /** Turns refused by the turn gate (in-flight cap or saturated loop), of counts.refused. */
  get refusedTurns(): number {
    return this.#refusedTurns;
  }

  /**
   * Takes a slot: at once when one is free, after a wait in the queue when the queue has room, or
   * not at all (rejects with 503 SERVER_BUSY: the queue is full, or the wait passed maxWaitMs).
   * The returned function gives the slot back; calling it again does nothing.
   */
  enter(): Promise<() => void> {
    return this.tryEnter() ?? Promise.reject(busy());
  }

  /**
   * enter(), deciding now: null (a refusal, counted) when there is neither a free slot nor room to
   * wait; otherwise the slot, at once or after its wait (which may still end in SERVER_BUSY).
   */
  tryEnter(): Promise<() => void> | null {
    if (this.#running < this.limits.concurrency) {
      this.#running++;
      this.#admitted++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#waiting.length >= this.queueLimit) {
      this.#refused++;
      this.#lastRefusalAt = performance.now();
      return null;
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          this.#running++;
          this.#admitted++;
          resolve(this.#releaser());
        },
        timer: setTimeout(() => {
          const at = this.#waiting.indexOf(waiter);
          if (at >= 0) this.#waiting.splice(at, 1);
          this.#refused++;
          reject(busy());
        }, this.limits.maxWaitMs),
      };
      this.#waiting.push(waiter);
    });
  }

  /**
   * The share of one client (issue 43): counts a place for the client address and for the login
   * (the session cookie: each belongs to one account), or refuses (null, counted) when either
   * already holds its share (`perAddress`, `perAccount`) of places, so that one client cannot hold
   * the queue however many requests it sends. The returned function gives the share back (again:
   * nothing).
   */
  claim(address: string, login: string | undefined): (() => void) | null {
    const { perAddress = 0, perAccount = 0 } = this.limits;
    const keys: string[] = [];
    if (perAddress > 0) {
      const key = `a:${address}`;
      if ((this.#holders.get(key) ?? 0) >= perAddress) return this.#refuseShare();
      keys.push(key);
    }
    if (perAccount > 0 && login) {
      const account = this.#accounts.get(login);
      const key = account ? `u:${account}` : `l:${login}`;
      if ((this.#holders.get(key) ?? 0) >= perAccount) return this.#refuseShare();
      keys.push(key);
    }
    for (const key of keys) this.#holders.set(key, (this.#holders.get(key) ?? 0) + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      for (const key of keys) {
        const left = (this.#holders.get(key) ?? 1) - 1;
        if (left > 0) this.#holders.set(key, left);
        else this.#holders.delete(key);
      }
    };
  }

  /** The account of each login seen lately (learn), oldest first: a login's places count for its account. */
  readonly #accounts = new Map<string, string>();

  /**
   * Notes the account a login (session cookie) belongs to, once a route has read it: from then on
   * that login's places count toward its account's share (claim), with every other login of the
   * account seen on this replica. Keeps the latest LOGINS_REMEMBERED logins.
   */
  learn(login: string | undefined, accountId: string): void {
    if (!login || this.#accounts.get(login) === accountId) return;
    this.#accounts.set(login, accountId);
    if (this.#accounts.size > LOGINS_REMEMBERED) this.#accounts.delete(this.#accounts.keys().next().value!);
  }

  #refuseShare(): null {
    this.#refused++;
    this.#refusedShares++;
    return null;
  }
  #refusedShares = 0;

  /** Requests refused because their client (address or login) held its share (claim), of counts.refused. */
  get refusedShares(): number {
    return this.#refusedShares;
  }

  /** Places held under a client's share now: by address, and by login (its account's, once learned). */
  heldBy(address: string, login?: string): { address: number; login: number } {
    const account = login && this.#accounts.get(login);
    const key = account ? `u:${account}` : `l:${login}`;
    return { address: this.#holders.get(`a:${address}`) ?? 0, login: login ? (this.#holders.get(key) ?? 0) : 0 };
  }

  /** Whether a request arriving now would be refused (no free slot, no room to wait). */
  get full(): boolean {
    return this.#running >= this.limits.concurrency && this.#waiting.length >= this.queueLimit;
  }

  /** Runs `work` inside a slot. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.enter();
    try {
      return await work();
    } finally {
      release();
    }
  }

  #releaser(): () => void {
    let done = false;
    const since = performance.now();
    return () => {
      if (done) return;
      done = true;
      const held = performance.now() - since;
      this.#holdMs = this.#holdMs <= 0 ? held : this.#holdMs + HOLD_WEIGHT * (held - this.#holdMs);
      this.#running--;
      this.#waiting.shift()?.admit();
    };
  }
}

const perContext = new WeakMap<AppContext, Admission>();

/** The replica's one admission queue (one per context: one per process in production). */
export function admissionOf(ctx: AppContext): Admission {
  let admission = perContext.get(ctx);
  if (!admission) {
    admission = new Admission(ctx.config.admission);
    perContext.set(ctx, admission);
  }
  return admission;
}

/** The requests that pass the admission queue: a turn (send, regenerate, continue) and a live update stream's open. */
const ADMITTED = /^\/api\/(sessions\/[^/?]+\/(messages|regenerate|continue)|worlds\/[^/?]+\/updates\/events)(\?|$)/;
/**
 * The body of a 503 SERVER_BUSY up to its request id, and after it: the error shape of every 5xx
 * (@yumina/http's error handler: code, message and the request's id, also sent as x-request-id).
 * ASCII, so its length is its size in bytes.
 */
const BUSY_BODY_START = `{"error":{"code":"SERVER_BUSY","message":${JSON.stringify(BUSY_MESSAGE)},"requestId":"`;
const BUSY_BODY_END = '"}}';

let dateSecond = -1;
let dateText = '';
/** The Date header's value for now (RFC 9110 IMF-fixdate), made once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** node:http's record of a response's head (OutgoingMessage, node 18 to 24): the head as written, and that it was. */
type HeadRecord = { _header: string | null; _headerSent: boolean };

/**
 * A 503 SERVER_BUSY's body and headers (without Date and the connection's, which node:http adds):
 * the one list both ways of writing it use (writeBusy), and bench/overload-floor.ts's comparison.
 */
export function busyAnswer(requestId: string): { body: string; headers: Record<string, string> } {
  const body = BUSY_BODY_START + requestId + BUSY_BODY_END;
  return {
    body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(body.length),
      'retry-after': String(ADMISSION_RETRY_AFTER_S),
      'cache-control': 'no-store',
      'x-request-id': requestId,
    },
  };
}

/**
 * Answers 503 SERVER_BUSY with its head and body written to the socket in one call, as the fast
 * path of a refused burst: node:http's own writeHead and end (header validation, the head's
 * assembly, a cork and a gathered write on the next tick) add to every refusal, most while V8 has
 * not optimized them yet (bench/overload-floor.ts, no application at all: a fresh process's first
 * burst 50–57 µs a refusal instead of 57–79; a warm one 31–33 instead of 31–37). The head written
 * is what node:http writes for the same headers (status line, the headers, Date, `connection:
 * keep-alive`); node:http is then told the head went out (its own fields) and ends the response
 * as usual, so the connection serves its next request. Only where that is exactly right: HTTP/1.1,
 * a connection kept alive, the response at the head of the connection's queue (res.socket is set
 * only then: an earlier pipelined response still being written keeps it null). Otherwise the
 * answer goes through writeHead and end.
 */
function writeBusy(req: IncomingMessage, res: ServerResponse, requestId: string): void {
  const { body, headers } = busyAnswer(requestId);
  const socket = res.socket;
  if (!socket || !res.shouldKeepAlive || req.httpVersion !== '1.1' || res.headersSent) {
    res.writeHead(503, headers);
    res.end(body);
    return;
  }
  let head = 'HTTP/1.1 503 Service Unavailable\r\n';
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  head += `date: ${httpDate()}\r\nconnection: keep-alive\r\n\r\n`;
  res.statusCode = 503;
  socket.write(head + body);
  const record = res as unknown as HeadRecord;
  record._header = head;
  record._headerSent = true;
  res.end();
}

/** A place taken in the server's request callback (shedFastPath): its slot and, for a turn, the end of its turn in flight. */
interface Reservation {
  slot: Promise<() => void>;
  done?: () => void;
}

/** Places taken in the server's request callback (shedFastPath), each picked up by its request's route (admitted) or given back (keepIfArrived). */
const reserved = new WeakMap<IncomingMessage, Reservation>();
/** When the body of a request that gave its place back for want of it must have arrived (performance.now(); keepIfArrived, bodyDeadline). */
const bodyDue = new WeakMap<IncomingMessage, number>();

const giveBack = (release: () => void) => release();
const ignore = () => {};

/**
 * Whether the request took its admission slot in the request callback (a turn or a stream open
 * let through by shedFastPath); app.ts starts such a request's route through startWhenQuiet.
 */
export const holdsSlot = (req: IncomingMessage): boolean => reserved.has(req);

/**
 * Issue 43: a place is held only by a request whose body has arrived. Run one turn of the event
 * loop after the request callback took the place (startWhenQuiet's `first`), when node:http's
 * parser has read what came with the headers: a request whose body came whole (`complete`; a
 * bodyless GET's at once) keeps its place; one whose body has not (yet) gives its place back at once,
 * and its turn's place among the turns in flight, and takes them again in its route once its body
 * has been read (admitted), which must be within `bodyTimeoutMs` (bodyDeadline: 408 and the
 * connection closed). So sockets that send a turn's headers and a few bytes of its body, then
 * nothing, hold no place however long they stay, and a burst of whole requests still takes and is
 * refused its places in the request callback.
 */
export function keepIfArrived(ctx: AppContext, req: IncomingMessage): void {
  if (req.complete) return;
  const reservation = reserved.get(req);
  if (!reservation) return;
  reserved.delete(req);
  reservation.done?.();
  void reservation.slot.then(giveBack, ignore);
  const limit = admissionOf(ctx).limits.bodyTimeoutMs;
  if (limit && req.method !== 'GET') bodyDue.set(req, performance.now() + limit);
}

const BODY_LATE_MESSAGE = 'The request’s body did not arrive in time. Check your connection and send it again.';

/**
 * Fastify's preParsing hook of the body deadline (keepIfArrived): the body of a turn that gave its
 * place back for want of it is read through a stream that fails with 408 REQUEST_TIMEOUT (and
 * `connection: close`: the rest of that body is never read) when it has not ended by its due time.
 * Every other request passes untouched (one WeakMap look-up).
 */
export const bodyDeadline: preParsingHookHandler = (request, reply, payload, done) => {
  const due = bodyDue.get(request.raw);
  if (due === undefined) return done(null, payload);
  bodyDue.delete(request.raw);
  if (request.raw.complete) return done(null, payload);
  const through = new PassThrough();
  const stop = () => {
    clearTimeout(timer);
    payload.off('error', fail);
  };
  const fail = (err: Error) => {
    stop();
    through.destroy(err);
  };
  const timer = setTimeout(() => {
    stop();
    // the request (or its answer) ended meanwhile without the body being read (a route that reads
    // no body): nothing is late
    if (request.raw.complete || reply.raw.writableEnded) return;
    payload.unpipe(through);
    through.destroy(new HttpError(408, 'REQUEST_TIMEOUT', BODY_LATE_MESSAGE, { connection: 'close' }));
  }, Math.max(0, due - performance.now()));
  // A destroyed body stream whose reader has already stopped listening must not throw in the
  // process (an uncaught 'error' ends a replica): the reader that still reads gets the error.
  through.on('error', () => {});
  payload.on('error', fail);
  through.once('close', stop);
  through.once('end', stop);
  // the whole request arrived, or the answer went out: the deadline has nothing left to guard
  request.raw.once('end', stop);
  reply.raw.once('close', stop);
  payload.pipe(through);
  done(null, through);
};

/**
 * Admission before routing, like the liveness fast path (health.ts): a turn or a stream open takes
 * its place in the queue in the server's request callback, before its body is read, its cookie
 * parsed or a route matched. Without a place it is answered 503 SERVER_BUSY there and then (no log
 * line, no query, its body drained unread), so a burst of thousands is refused in microseconds
 * each and only the admitted ones reach Fastify. (Checking only whether the queue was full let a
 * whole burst through: its requests all arrive in one turn of the event loop, before the first
 * reached its route and took a slot, so each went through routing and body parsing to be refused
 * in its route.) The place taken is the request's (admitted) if its body came with it
 * (keepIfArrived; else it is given back a loop turn later), and goes back when its answer ends at
 * the latest. Returns whether it answered.
 */
export function shedFastPath(ctx: AppContext): (req: IncomingMessage, res: ServerResponse) => boolean {
  const admission = admissionOf(ctx);
  return (req, res) => {
    if ((req.method !== 'POST' && req.method !== 'GET') || !req.url || !ADMITTED.test(req.url)) return false;
    let slot: Promise<() => void> | null;
    let done: (() => void) | undefined;
    if (req.method === 'POST') {
      // A turn: the whole of it (until its answer ends) counts in flight.
      const turn = admission.tryEnterTurn();
      slot = turn?.slot ?? null;
      done = turn?.done;
      if (done) res.once('close', done);
    } else slot = admission.tryEnter();
    if (slot) {
      // A wait that ends in SERVER_BUSY is answered by the route (admitted() rejects).
      slot.catch(ignore);
      reserved.set(req, { slot, done });
      const taken = slot;
      res.once('close', () => void taken.then(giveBack, ignore));
      return false;
    }
    // The body is drained unread (the connection stays usable for the next request).
    req.resume();
    writeBusy(req, res, randomUUID());
    ctx.telemetry.recordRequest({ method: req.method!, route: 'admission', status: 503, durationMs: 0 });
    return true;
  };
}

/**
 * The admission slot of a turn or stream open, once its body has arrived and its client is known:
 * the place its request callback took (shedFastPath, kept by keepIfArrived), or one taken now (a
 * request whose body came later, or that did not come through the server, e.g. app.inject: a POST
 * passes the turn gate too, in flight until `res` closes). Within the client's share (claim: its
 * address, `request.ip` as TRUST_PROXY derives it, and its login cookie), else 503 SERVER_BUSY and
 * the place given back. Resolves with the release of the slot and the share; rejects with 503
 * SERVER_BUSY when its wait passed the limit.
 */
export async function admitted(ctx: AppContext, request: FastifyRequest, res: ServerResponse): Promise<() => void> {
  const admission = admissionOf(ctx);
  const req = request.raw;
  const reservation = reserved.get(req);
  reserved.delete(req);
  const share = admission.claim(request.ip, request.cookies?.[SESSION_COOKIE]);
  if (!share) {
    if (reservation) {
      reservation.done?.();
      void reservation.slot.then(giveBack, ignore);
    }
    throw busy();
  }
  let slot = reservation?.slot;
  if (!slot) {
    if (req.method === 'POST') {
      const turn = admission.tryEnterTurn();
      if (turn) {
        res.once('close', turn.done);
        res.once('finish', turn.done);
      }
      slot = turn?.slot;
    } else slot = admission.tryEnter() ?? undefined;
  }
  if (!slot) {
    share();
    throw busy();
  }
  let release: () => void;
  try {
    release = await slot;
  } catch (err) {
    share();
    throw err;
  }
  return () => {
    release();
    share();
  };
}

/** The account of the request's login, as its route read it: its places count for the account from now on (Admission.learn). */
export function learnLogin(ctx: AppContext, request: FastifyRequest, accountId: string): void {
  admissionOf(ctx).learn(request.cookies?.[SESSION_COOKIE], accountId);
}
