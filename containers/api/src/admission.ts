import { HttpError } from '@yumina/http';
import type { AppContext } from './context.ts';

/**
 * Admission control of one replica (issue 32): the work that opens a turn (the send, regenerate
 * and continue routes up to the provider's call) and a live stream (its opening reads) passes one
 * bounded queue. `concurrency` units run at once (sized from the database pool: each holds at most
 * one connection while it runs, so the pool never has more waiters than it can serve within its
 * acquire timeout); up to `queue` more wait in order, each at most `maxWaitMs`. Beyond the queue,
 * or past the wait, a request is refused at once with 503 SERVER_BUSY and Retry-After, before it
 * touches the database: an overload is shed in microseconds instead of every request waiting 10 s
 * for a connection and then failing with DB_POOL_TIMEOUT.
 */
export interface AdmissionLimits {
  concurrency: number;
  queue: number;
  maxWaitMs: number;
}

export const ADMISSION_RETRY_AFTER_S = 2;

export const busy = () =>
  new HttpError(503, 'SERVER_BUSY', 'The server is busy right now; your request was not started. Try again in a moment.', { 'retry-after': String(ADMISSION_RETRY_AFTER_S) });

interface Waiter {
  admit(): void;
  timer: NodeJS.Timeout;
}

export class Admission {
  #running = 0;
  readonly #waiting: Waiter[] = [];
  #refused = 0;
  #admitted = 0;

  constructor(readonly limits: AdmissionLimits) {}

  get running(): number {
    return this.#running;
  }
  get waiting(): number {
    return this.#waiting.length;
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
    if (this.#running < this.limits.concurrency) {
      this.#running++;
      this.#admitted++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#waiting.length >= this.limits.queue) {
      this.#refused++;
      return Promise.reject(busy());
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
    return () => {
      if (done) return;
      done = true;
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
