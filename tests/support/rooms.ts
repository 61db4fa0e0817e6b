import { Browser } from './server.ts';

/** What tests read of a room (GET /api/rooms/:id). */
export interface RoomSnapshot {
  room: {
    id: string;
    worldId: string;
    triggerMode: string;
    speechMode: string;
    timerSeconds: number;
    roundState: 'waiting' | 'collecting' | 'replying';
    turnParticipantId: string | null;
    collectUntil: string | null;
    endedAt: string | null;
  };
  queue: { id: string; participantId: string; authorName: string; content: string }[];
  members: { id: string; role: string; name: string; accountId: string | null; online: boolean }[];
  me: { participantId: string | null; role: string; accountId: string };
  payer: { source: string; model: string | null };
  session: { id: string; state: { variables: Record<string, unknown>; playerVariables?: Record<string, Record<string, unknown>> } };
  messages: {
    id: string;
    role: string;
    content: string;
    status: string;
    participantId?: string;
    authorName?: string;
    failure?: { code: string; message: string } | null;
    swipes: unknown[];
    stateSnapshot: { playerVariables?: Record<string, unknown> } | null;
  }[];
  eventId: string;
}

export interface StreamEvent {
  id: string | null;
  event: string;
  data: Record<string, unknown>;
  /** performance.now() when it arrived. */
  at: number;
}

/** A member's live stream of a room, read with fetch (a test's EventSource): every event as it arrives. */
export interface RoomStream {
  events: StreamEvent[];
  /** The HTTP status of the stream's answer. */
  status: number;
  /** Resolves with the first matching event after the last one `next` resolved with (those that came meanwhile included). */
  next(match: (event: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  /** Resolves with the earliest matching event of the whole stream (waiting for one if none came yet); `next`'s place is left as it is. */
  first(match: (event: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  /** True once the server ended the stream. */
  readonly ended: boolean;
  close(): void;
}

export async function openRoomStream(client: Browser, roomId: string, after = '0-0'): Promise<RoomStream> {
  const controller = new AbortController();
  const res = await client.fetch(`/api/rooms/${roomId}/events?after=${encodeURIComponent(after)}`, { signal: controller.signal });
  const events: StreamEvent[] = [];
  const waiters: { match: (e: StreamEvent) => boolean; resolve: (e: StreamEvent) => void; anywhere?: boolean }[] = [];
  /** Events before this index were consumed by an earlier `next`. */
  let cursor = 0;
  let ended = false;
  const deliver = () => {
    for (const waiter of [...waiters]) {
      const at = events.findIndex((e, i) => (waiter.anywhere || i >= cursor) && waiter.match(e));
      if (at >= 0) {
        if (!waiter.anywhere) cursor = at + 1;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(events[at]!);
      }
    }
  };
  if (res.ok && res.body) {
    void (async () => {
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.+)$/m.exec(block)?.[1];
            if (!event) continue;
            events.push({
              id: /^id: (.+)$/m.exec(block)?.[1] ?? null,
              event,
              data: JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>,
              at: performance.now(),
            });
          }
          deliver();
        }
      } catch {
        // aborted
      }
      ended = true;
    })();
  } else {
    ended = true;
  }
  return {
    events,
    status: res.status,
    get ended() {
      return ended;
    },
    next: (match, timeoutMs = 10_000) => wait(match, timeoutMs, false),
    first: (match, timeoutMs = 10_000) => wait(match, timeoutMs, true),
    close: () => controller.abort(),
  };
  function wait(match: (e: StreamEvent) => boolean, timeoutMs: number, anywhere: boolean): Promise<StreamEvent> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching room event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(', ')}`)), timeoutMs);
        waiters.push({
          match,
          anywhere,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
        deliver();
      });
  }
}

export async function readRoom(client: Browser, roomId: string): Promise<RoomSnapshot> {
  const res = await client.fetch(`/api/rooms/${roomId}`);
  if (!res.ok) throw new Error(`GET room ${res.status}: ${await res.text()}`);
  return (await res.json()) as RoomSnapshot;
}

/** The host opens a room on the world; returns its snapshot. */
export async function openRoom(host: Browser, worldId: string, modes: { triggerMode: string; speechMode: string; timerSeconds?: number }): Promise<RoomSnapshot> {
  const res = await host.fetch(`/api/worlds/${worldId}/rooms`, { method: 'POST', json: modes });
  if (res.status !== 201) throw new Error(`open room ${res.status}: ${await res.text()}`);
  return (await res.json()) as RoomSnapshot;
}

/** The host makes an invite link; its token (the link's fragment). */
export async function inviteTo(host: Browser, roomId: string, role: 'player' | 'spectator' = 'player', hours?: number): Promise<string> {
  const res = await host.fetch(`/api/rooms/${roomId}/invites`, { method: 'POST', json: { role, ...(hours ? { hours } : {}) } });
  if (res.status !== 201) throw new Error(`invite ${res.status}: ${await res.text()}`);
  const { url } = (await res.json()) as { url: string };
  return url.slice(url.indexOf('#') + 1);
}

export async function joinWith(client: Browser, token: string): Promise<Response> {
  return client.fetch('/api/room-invites/join', { method: 'POST', json: { token } });
}
