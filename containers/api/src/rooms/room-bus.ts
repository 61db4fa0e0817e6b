import { eventOf, type Store, type Unsubscribe } from '@yumina/store';
import type { FastifyBaseLogger } from 'fastify';

/**
 * A room's live events (docs/ROOMS.md): what one member does reaches every member, whichever
 * replica serves them. Each event is appended to the room's capped log in the shared store and
 * published on the room's channel in the same step (@yumina/store appendEvent: Redis in
 * production, the process's memory on the embedded default), so a member whose stream dropped
 * resumes after the last event id it saw (EventSource's Last-Event-ID) and misses nothing the log
 * still holds. Signals (someone is typing) are published only: nobody replays them.
 */

export interface RoomEvent {
  /** The log's id ('' for a signal, which has none). */
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** The log keeps a reply's worth of deltas several times over, for a few hours after its last event. */
export const ROOM_LOG = { maxLength: 5_000, ttlSeconds: 6 * 3600 };
const logKey = (sessionId: string) => `room-log:${sessionId}`;
const channelOf = (sessionId: string) => `room:${sessionId}`;

/** Sends an event to every member of the room, logged for resumption; its id. */
export function emitRoomEvent(store: Store, sessionId: string, type: string, data: Record<string, unknown>): Promise<string> {
  return store.appendEvent(logKey(sessionId), channelOf(sessionId), JSON.stringify({ type, data }), ROOM_LOG);
}

/** Sends an event nobody replays (typing): published, not logged. */
export function signalRoom(store: Store, sessionId: string, type: string, data: Record<string, unknown>): Promise<void> {
  return store.publish(channelOf(sessionId), `- ${JSON.stringify({ type, data })}`);
}

function parsed(id: string, message: string): RoomEvent | null {
  try {
    const { type, data } = JSON.parse(message) as { type: string; data: Record<string, unknown> };
    return { id: id === '-' ? '' : id, type, data };
  } catch {
    return null;
  }
}

/** The room's events after `afterId`, oldest first; null when the log no longer holds them all (read the room again). */
export async function roomEventsAfter(store: Store, sessionId: string, afterId: string, limit = ROOM_LOG.maxLength): Promise<RoomEvent[] | null> {
  const entries = await store.readEvents(logKey(sessionId), afterId, limit);
  if (!entries) return null;
  const out: RoomEvent[] = [];
  for (const entry of entries) {
    const event = parsed(entry.id, entry.message);
    if (event) out.push(event);
  }
  return out;
}

/** The id of the room's newest event ('0-0' before the first): a reader that reads the room now resumes after it. */
export const lastRoomEventId = (store: Store, sessionId: string): Promise<string> => store.lastEventId(logKey(sessionId));

interface Watch {
  listeners: Set<(event: RoomEvent) => void>;
  unsubscribe: Promise<Unsubscribe>;
}

/**
 * The rooms this process watches: one store subscription per room, whatever the number of its
 * members' streams here, each event parsed once and handed to every stream of the room.
 */
export class RoomHub {
  #rooms = new Map<string, Watch>();

  constructor(
    private readonly store: Store,
    private readonly log: FastifyBaseLogger,
  ) {}

  async watch(sessionId: string, listener: (event: RoomEvent) => void): Promise<() => void> {
    let watch = this.#rooms.get(sessionId);
    if (!watch) {
      const listeners = new Set<(event: RoomEvent) => void>();
      const unsubscribe = this.store.subscribe(channelOf(sessionId), (published) => {
        const { id, message } = eventOf(published);
        const event = parsed(id, message);
        if (!event) return this.log.warn({ sessionId }, 'unreadable room event');
        for (const each of listeners) each(event);
      });
      watch = { listeners, unsubscribe };
      this.#rooms.set(sessionId, watch);
    }
    watch.listeners.add(listener);
    await watch.unsubscribe;
    const held = watch;
    return () => {
      held.listeners.delete(listener);
      if (held.listeners.size > 0 || this.#rooms.get(sessionId) !== held) return;
      this.#rooms.delete(sessionId);
      void held.unsubscribe.then((off) => off()).catch(() => {});
    };
  }

  /** Rooms with a stream open in this process. */
  get rooms(): string[] {
    return [...this.#rooms.keys()];
  }
}
