import type { Queryable, QueryResult, QueryText, Row } from '@yumina/db';

/**
 * A bounded queue in front of a share of this replica's database pool, so that one kind of work
 * cannot take more of the pool than its share (the live update streams' reads, updates/events.ts,
 * issue 28). It is not the replica's admission of requests (./admission.ts, ARCHITECTURE.md "Load"):
 * a stream open passes that first, then its reads come here. At most `slots` tasks run at once (a
 * task is one query, so it holds at most one connection), up to `queue` more wait in order, and a
 * task beyond them is refused at once with `refuse()` (a 503 with Retry-After): nothing waits out
 * a timeout to say no. Background work that its callers bound
 * already (one status poll per watched world) may pass `{ always: true }` to wait whatever the queue
 * holds; it still runs within the slots.
 */
export class PoolShare {
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(
    readonly slots: number,
    readonly queue: number,
    private readonly refuse: () => Error,
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`A pool share needs at least one slot, got ${slots}`);
  }

  /** Tasks running now (never more than `slots`). */
  get active(): number {
    return this.#active;
  }

  /** Tasks waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` in a slot, after those waiting before it; refuses at once when the queue is full. */
  async run<T>(task: () => Promise<T>, options: { always?: boolean } = {}): Promise<T> {
    if (this.#active < this.slots) this.#active++;
    else {
      if (!options.always && this.#waiting.length >= this.queue) throw this.refuse();
      // the slot is handed over by the task that ends (see below): #active stays as it is
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }

  /** `db` with every query admitted here first. */
  queryable(db: Queryable, options: { always?: boolean } = {}): Queryable {
    return {
      query: <R extends Row = Row>(text: QueryText, values?: unknown[]): Promise<QueryResult<R>> => this.run(() => db.query<R>(text, values), options),
    };
  }
}
