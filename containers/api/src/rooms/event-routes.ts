import { compareEventIds } from '@yumina/store';
import { changesForViewer, messageForViewer, stateForViewer } from '@yumina/conversations';
import { HttpError } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { authenticate, notSignedIn } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { createStreamGate, type EventStream, openEventStream } from '../event-stream.ts';
import { type RoomEvent, roomEventsAfter } from './room-bus.ts';
import { roomAccess } from './room-access.ts';
import { roomRuntimeOf } from './room-runtime.ts';

const HEARTBEAT_MS = 15_000;
const EVENT_ID = /^\d{1,16}-\d{1,10}$/;

/**
 * What one member's stream sends of an event: states carry only the viewer's own per-player
 * values (docs/ROOMS.md); null when the event is not for this viewer.
 */
function forViewer(event: RoomEvent, accountId: string): Record<string, unknown> | null {
  const data = event.data;
  if (event.type === 'reply:start') return { ...data, round: (data.round as Record<string, unknown>[]).map((m) => messageForViewer(m, accountId)) };
  if (event.type === 'reply:done' || event.type === 'state') {
    return {
      ...data,
      ...(data.state !== undefined ? { state: stateForViewer(data.state, accountId) } : {}),
      ...(data.message ? { message: messageForViewer(data.message as Record<string, unknown>, accountId) } : {}),
      ...(Array.isArray(data.stateChanges) ? { stateChanges: changesForViewer(data.stateChanges, accountId) } : {}),
    };
  }
  return data;
}

/**
 * GET /api/rooms/:id/events: a member's live view of the room (server-sent events, each with the id
 * of the room's log: EventSource resumes after the last one it saw, on this replica or another).
 * `after` (or the Last-Event-ID header, which wins) is where to resume; a stream that cannot resume
 * (the log dropped what it missed) gets `reset` first and reads the room again. Events: `room`
 * (status and queue), `members` (with who is online), `reply:start`, `delta` (`at` is where the
 * text goes), `reasoning`, `reply:done`, `reply:error`, `state` (an interface changed the state),
 * `sync` (the host changed the conversation: read it again), `typing`; a member removed gets
 * `removed` and the stream ends.
 */
export async function eventRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const rooms = roomRuntimeOf(ctx);
  const gate = createStreamGate({ perAddress: ctx.config.limits.eventStreamsPerAddress, perProcess: ctx.config.limits.eventStreamsPerProcess });
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
    await rooms.close();
  });

  app.get<{ Params: { id: string }; Querystring: { after?: string } }>('/api/rooms/:id/events', async (request, reply) => {
    const auth = await authenticate(ctx, request, reply);
    if (!auth) throw notSignedIn();
    const sessionId = request.params.id;
    const access = await roomAccess(db, sessionId, auth.account.id, 'member');
    const given = request.headers['last-event-id'] ?? request.query.after ?? '0-0';
    const after = typeof given === 'string' && EVENT_ID.test(given) ? given : null;
    if (!after) throw new HttpError(400, 'INVALID_REQUEST', 'after: an event id such as 1700000000000-0.');
    const release = gate.admit(request.ip);
    const me = access.participant?.id ?? null;
    const accountId = auth.account.id;

    let ended = false;
    let stream: EventStream | null = null;
    let lastSent = after;
    /** Live events that arrive while the log is replayed: sent after it, in order, once each. */
    let buffered: RoomEvent[] | null = [];
    const send = (event: RoomEvent) => {
      if (ended || !stream) return;
      if (event.id) {
        if (compareEventIds(event.id, lastSent) <= 0) return;
        lastSent = event.id;
      }
      if (event.type === 'members' && me) {
        const members = event.data.members as { id: string }[];
        if (!members.some((m) => m.id === me)) {
          stream.write('removed', { message: 'You are no longer a member of this room.' });
          return end();
        }
      }
      const data = forViewer(event, accountId);
      if (data) stream.writeJson(event.type, JSON.stringify(data), event.id || undefined);
    };
    const stopWatching = await rooms.hub.watch(sessionId, (event) => (buffered ? buffered.push(event) : send(event)));
    const closePresence = me ? await rooms.presence.open(sessionId, me) : async () => {};
    const heartbeat = setInterval(() => stream?.comment('ping'), HEARTBEAT_MS);
    function end() {
      if (ended) return;
      ended = true;
      release();
      open.delete(end);
      clearInterval(heartbeat);
      stopWatching();
      void closePresence();
      reply.raw.end();
    }
    open.add(end);
    reply.raw.on('close', end);
    if (reply.raw.destroyed || !reply.raw.socket || reply.raw.socket.destroyed) {
      reply.hijack();
      end();
      return;
    }
    stream = openEventStream(reply, { retryMs: 1000, watch: true });
    const missed = await roomEventsAfter(ctx.store, sessionId, after).catch(() => null);
    if (missed === null) {
      // what it missed is gone from the log: the page reads the room again and resumes from there
      stream.write('reset', {});
      buffered = null;
      return end();
    }
    for (const event of missed) send(event);
    const live = buffered;
    buffered = null;
    for (const event of live) send(event);
    rooms.watched(sessionId);
  });
}
