import type { Store } from './types.ts';

export interface ScheduledJob {
  name: string;
  /** Runs once per period, on exactly one replica. */
  everyMs: number;
  /** `signal` aborts when this replica loses leadership or stops. */
  run(signal: AbortSignal, periodStart: Date): Promise<void>;
}

export interface LeaderLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LeaderOptions {
  store: Store;
  /** The lease's key; replicas competing for the same work share it. */
  key: string;
  ttlMs: number;
  jobs: ScheduledJob[];
  log: LeaderLog;
  replicaId: string;
  /** Injectable clock for tests. */
  now?: () => number;
}

/**
 * Leader election on a lease in the shared store. One replica holds the lease and renews it
 * every third of its TTL, also while a job runs; a renewal that fails means leadership is lost,
 * the running job's signal aborts and no further job starts. Each job also takes a per-period
 * claim, so a period's run happens once even across a hand-over. Background jobs use the same
 * lease primitive.
 */
export class LeaderScheduler {
  #token: string | null = null;
  #timer: NodeJS.Timeout | undefined;
  #abort = new AbortController();
  #running = new Set<Promise<void>>();
  #stopped = false;
  #now: () => number;

  constructor(private readonly options: LeaderOptions) {
    this.#now = options.now ?? Date.now;
  }

  get isLeader(): boolean {
    return this.#token !== null;
  }

  start(): void {
    void this.#tick();
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    const { store, key, ttlMs, log, replicaId } = this.options;
    try {
      if (this.#token) {
        if (!(await store.renewLock(key, this.#token, ttlMs))) this.#lose('lease taken over');
      } else {
        this.#token = await store.acquireLock(key, ttlMs);
        if (this.#token) {
          this.#abort = new AbortController();
          log.info({ type: 'leader.elected', replicaId }, 'this replica now runs scheduled maintenance');
        }
      }
    } catch (err) {
      if (this.#token) this.#lose(`lease renewal failed: ${(err as Error).message}`);
    }
    if (this.#token) this.#runDueJobs();
    if (!this.#stopped) {
      this.#timer = setTimeout(() => void this.#tick(), Math.max(50, Math.floor(ttlMs / 3)));
      this.#timer.unref();
    }
  }

  #lose(reason: string): void {
    this.#token = null;
    this.#abort.abort(new Error(`leadership lost: ${reason}`));
    this.options.log.warn({ type: 'leader.lost', replicaId: this.options.replicaId, reason }, 'scheduled maintenance stopped on this replica');
  }

  #runDueJobs(): void {
    const signal = this.#abort.signal;
    for (const job of this.options.jobs) {
      const period = Math.floor(this.#now() / job.everyMs);
      const claimKey = `${this.options.key}:job:${job.name}:${period}`;
      const run = (async () => {
        // Once per period across replicas and hand-overs; the claim outlives the period.
        const claim = await this.options.store.acquireLock(claimKey, job.everyMs * 2);
        if (!claim || signal.aborted) return;
        await job.run(signal, new Date(period * job.everyMs));
      })().catch((err: unknown) => {
        this.options.log.warn({ type: 'maintenance.failed', job: job.name, err: (err as Error).message }, 'scheduled job failed');
      });
      this.#running.add(run);
      void run.finally(() => this.#running.delete(run));
    }
  }

  /** Stops electing and renewing, aborts running jobs, waits for them, and hands the lease back. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort.abort(new Error('shutting down'));
    await Promise.allSettled([...this.#running]);
    if (this.#token) await this.options.store.releaseLock(this.options.key, this.#token).catch(() => false);
    this.#token = null;
  }
}
