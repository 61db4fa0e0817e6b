import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '@yumina/http';
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
 */
export interface AdmissionLimits {
  concurrency: number;
  queue: number;
  maxWaitMs: number;
}

export const ADMISSION_RETRY_AFTER_S = 2;
const BUSY_MESSAGE = 'The server is busy right now; your request was not started. Try again in a moment.';

export const busy = () => new HttpError(503, 'SERVER_BUSY', BUSY_MESSAGE, { 'retry-after': String(ADMISSION_RETRY_AFTER_S) });

interface Waiter {
  admit(): void;
  timer: NodeJS.Timeout;
}

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

export class Admission {
  #running = 0;
  readonly #waiting: Waiter[] = [];
  #refused = 0;
  #admitted = 0;
  /** Moving average of how long a unit holds its slot (ms); 0 until one was measured. */
  #holdMs = 0;

  constructor(readonly limits: AdmissionLimits) {}

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

  /** Counters since start: admitted units and refusals (full queue or wait past its limit). */
  get counts(): { admitted: number; refused: number } {
    return { admitted: this.#admitted, refused: this.#refused };
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
/** The error shape of every 5xx (@yumina/http's error handler): code, message and the request's id, also as x-request-id. */
const busyAnswer = (requestId: string) => {
  const body = JSON.stringify({ error: { code: 'SERVER_BUSY', message: BUSY_MESSAGE, requestId } });
  return {
    body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'retry-after': String(ADMISSION_RETRY_AFTER_S),
      'cache-control': 'no-store',
      'x-request-id': requestId,
    },
  };
};

/** Slots taken in the server's request callback (shedFastPath), each picked up by its request's route (admitted). */
const reserved = new WeakMap<IncomingMessage, Promise<() => void>>();

/**
 * Admission before routing, like the liveness fast path (health.ts): a turn or a stream open takes
 * its place in the queue in the server's request callback, before its body is read, its cookie
 * parsed or a route matched. Without a place it is answered 503 SERVER_BUSY there and then (no log
 * line, no query, its body drained unread), so a burst of thousands is refused in microseconds
 * each and only the admitted ones reach Fastify. (Checking only whether the queue was full let a
 * whole burst through: its requests all arrive in one turn of the event loop, before the first
 * reached its route and took a slot, so each went through routing and body parsing to be refused
 * in its route.) The place taken is the request's (admitted), and goes back when its answer ends
 * at the latest. Returns whether it answered.
 */
export function shedFastPath(ctx: AppContext): (req: IncomingMessage, res: ServerResponse) => boolean {
  const admission = admissionOf(ctx);
  const giveBack = (release: () => void) => release();
  const ignore = () => {};
  return (req, res) => {
    if ((req.method !== 'POST' && req.method !== 'GET') || !req.url || !ADMITTED.test(req.url)) return false;
    const slot = admission.tryEnter();
    if (slot) {
      // A wait that ends in SERVER_BUSY is answered by the route (admitted() rejects).
      slot.catch(ignore);
      reserved.set(req, slot);
      res.once('close', () => void slot.then(giveBack, ignore));
      return false;
    }
    // The body is drained unread (the connection stays usable for the next request).
    req.resume();
    const { body, headers } = busyAnswer(randomUUID());
    res.writeHead(503, headers);
    res.end(body);
    ctx.telemetry.recordRequest({ method: req.method!, route: 'admission', status: 503, durationMs: 0 });
    return true;
  };
}

/**
 * The admission slot of a turn or stream open: the place its request callback took (shedFastPath),
 * or one taken now (a request that did not come through the server, e.g. app.inject). Resolves
 * with the slot's release; rejects with 503 SERVER_BUSY when its wait passed the limit.
 */
export function admitted(ctx: AppContext, req: IncomingMessage): Promise<() => void> {
  const slot = reserved.get(req);
  if (!slot) return admissionOf(ctx).enter();
  reserved.delete(req);
  return slot;
}
