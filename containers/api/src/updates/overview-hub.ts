import type { Queryable } from '@yumina/db';
import { loadWork, parseUpdatesMessage, readRecord, type UpdateRecord, updatesChannel } from '@yumina/updates';
import type { Store, Unsubscribe } from '@yumina/store';
import type { FastifyBaseLogger } from 'fastify';

export type Work = NonNullable<Awaited<ReturnType<typeof loadWork>>>;

/** What one open overview hears: the work re-read (null once gone), and each published record with its source work. */
export interface OverviewWatcher {
  onWork(work: Work | null): void;
  onRecord(record: UpdateRecord, source: Work | null): void;
}

interface WorldWatch {
  watchers: Set<OverviewWatcher>;
  unsubscribe: Promise<Unsubscribe>;
  poll: NodeJS.Timeout;
  checking: boolean;
  again: boolean;
}

/** A read of a work: in flight (`at` 0), or settled at `at` and shared until it is `freshMs` old. */
interface WorkRead {
  work: Promise<Work | null>;
  at: number;
}

/**
 * The live update overviews of one process, fanned out per world (issue 24): however many streams
 * are open on a world, the process holds one store subscription to its channel and one status poll,
 * reads the work once per poll or status message and each published record once, and hands the
 * result to every open stream, which applies its own viewer's permissions. An idle stream holds no
 * database connection and causes no query of its own. A stream being opened reads its work through
 * `work()` (issue 28): one read per world shared by every stream opened while it runs and for
 * `freshMs` after.
 */
export class OverviewHub {
  #worlds = new Map<string, WorldWatch>();
  #reads = new Map<string, WorkRead>();

  constructor(
    private readonly db: Queryable,
    private readonly store: Store,
    private readonly log: FastifyBaseLogger,
    private readonly pollMs: number,
    private readonly freshMs = 1_000,
  ) {}

  /**
   * The work as read at most `freshMs` ago, or the read in flight, or a new read through `db`
   * (single flight per world). A status message or a poll replaces it with a fresh read.
   */
  work(worldId: string, db: Queryable = this.db): Promise<Work | null> {
    const known = this.#reads.get(worldId);
    if (known && (known.at === 0 || Date.now() - known.at < this.freshMs)) return known.work;
    return this.#read(worldId, db);
  }

  #read(worldId: string, db: Queryable): Promise<Work | null> {
    const read: WorkRead = { work: loadWork(db, worldId), at: 0 };
    this.#reads.set(worldId, read);
    const forget = () => {
      if (this.#reads.get(worldId) === read) this.#reads.delete(worldId);
    };
    read.work.then(
      () => {
        read.at = Date.now();
        setTimeout(forget, this.freshMs).unref();
      },
      forget, // a failed read is not shared after it failed
    );
    return read.work;
  }

  /** Open streams across worlds (for tests and telemetry). */
  get size(): number {
    let n = 0;
    for (const w of this.#worlds.values()) n += w.watchers.size;
    return n;
  }

  /** Worlds with at least one open stream: one subscription and one poll each. */
  get worlds(): number {
    return this.#worlds.size;
  }

  /** Starts fanning `worldId` out to `watcher` (once the subscription is in place); returns the stop. */
  async watch(worldId: string, watcher: OverviewWatcher): Promise<() => void> {
    let world = this.#worlds.get(worldId);
    if (!world) {
      const created: WorldWatch = {
        watchers: new Set(),
        unsubscribe: this.store.subscribe(updatesChannel(worldId), (text) => {
          const message = parseUpdatesMessage(text);
          if (message?.type === 'record') void this.#forward(created, message.updateId, worldId);
          else if (message?.type === 'status') void this.#recheck(created, worldId);
        }),
        poll: setInterval(() => void this.#recheck(created, worldId), this.pollMs),
        checking: false,
        again: false,
      };
      world = created;
      this.#worlds.set(worldId, world);
    }
    world.watchers.add(watcher);
    const watched = world;
    try {
      await watched.unsubscribe;
    } catch (err) {
      this.#drop(worldId, watched, watcher);
      throw err;
    }
    return () => this.#drop(worldId, watched, watcher);
  }

  #drop(worldId: string, world: WorldWatch, watcher: OverviewWatcher): void {
    world.watchers.delete(watcher);
    if (world.watchers.size || this.#worlds.get(worldId) !== world) return;
    this.#worlds.delete(worldId);
    clearInterval(world.poll);
    world.unsubscribe.then((stop) => stop()).catch(() => {});
  }

  /** Re-reads the work once for every stream; a change announced during a read gets one more read. */
  async #recheck(world: WorldWatch, worldId: string): Promise<void> {
    if (world.checking) {
      world.again = true;
      return;
    }
    world.checking = true;
    try {
      const work = await this.#read(worldId, this.db);
      for (const watcher of [...world.watchers]) watcher.onWork(work);
    } catch (err) {
      this.log.warn({ err, type: 'updates-events', worldId }, 'status check failed');
    } finally {
      world.checking = false;
    }
    if (world.again && world.watchers.size) {
      world.again = false;
      await this.#recheck(world, worldId);
    }
  }

  async #forward(world: WorldWatch, updateId: string, worldId: string): Promise<void> {
    try {
      const record = await readRecord(this.db, updateId);
      if (!record) return;
      const source = record.worldId === worldId ? null : await this.work(record.worldId);
      for (const watcher of [...world.watchers]) watcher.onRecord(record, source);
    } catch (err) {
      this.log.warn({ err, type: 'updates-events', worldId }, 'could not forward an update record');
    }
  }
}
