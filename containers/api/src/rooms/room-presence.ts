import type { Store } from '@yumina/store';

/**
 * Who is online in a room: a member with a live stream open on any replica. Each replica keeps
 * `<participant>@<its boot id>` in the room's expiring set in the shared store while it serves a
 * stream of that member, renewed every 15 s for 45 s: a replica that dies takes its members
 * offline within 45 s, and at once for those who reconnect elsewhere (they are online again).
 * Only replicas serving a room's streams do this work.
 */
const RENEW_MS = 15_000;
const LIFETIME_MS = 45_000;
const setKey = (sessionId: string) => `room-online:${sessionId}`;

export class RoomPresence {
  /** Streams open here, by room and participant. */
  #open = new Map<string, Map<string, number>>();
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly bootId: string,
    /** Told when a member of a room came online or went offline here (their first stream opened, their last closed). */
    private readonly changed: (sessionId: string) => void,
  ) {}

  #member = (participantId: string) => `${participantId}@${this.bootId}`;

  /** A stream of the participant opened here; the returned function closes it. */
  async open(sessionId: string, participantId: string): Promise<() => Promise<void>> {
    let room = this.#open.get(sessionId);
    if (!room) this.#open.set(sessionId, (room = new Map()));
    const count = (room.get(participantId) ?? 0) + 1;
    room.set(participantId, count);
    this.#renewLater();
    await this.store.touchMember(setKey(sessionId), this.#member(participantId), LIFETIME_MS).catch(() => {});
    if (count === 1) this.changed(sessionId);
    let closed = false;
    return async () => {
      if (closed) return;
      closed = true;
      const left = (room.get(participantId) ?? 1) - 1;
      if (left > 0) return void room.set(participantId, left);
      room.delete(participantId);
      if (room.size === 0) this.#open.delete(sessionId);
      await this.store.removeMember(setKey(sessionId), this.#member(participantId)).catch(() => {});
      this.changed(sessionId);
    };
  }

  /** The participants online in the room, on any replica. */
  async online(sessionId: string): Promise<Set<string>> {
    const members = await this.store.members(setKey(sessionId)).catch(() => [] as string[]);
    const out = new Set<string>();
    for (const member of members) out.add(member.slice(0, member.lastIndexOf('@')));
    // this replica's own streams count even while the store is unreachable
    for (const id of this.#open.get(sessionId)?.keys() ?? []) out.add(id);
    return out;
  }

  #renewLater(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#open.size === 0) {
        clearInterval(this.#timer!);
        this.#timer = null;
        return;
      }
      for (const [sessionId, room] of this.#open) {
        for (const participantId of room.keys()) void this.store.touchMember(setKey(sessionId), this.#member(participantId), LIFETIME_MS).catch(() => {});
      }
    }, RENEW_MS);
    this.#timer.unref();
  }
}
