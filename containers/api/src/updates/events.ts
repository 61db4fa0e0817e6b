import type { ServerResponse } from 'node:http';
import { HttpError } from '@yumina/http';
import { canView, historyPermissions, type UpdateRecord, type Viewer } from '@yumina/updates';
import type { FastifyInstance } from 'fastify';
import { admitted, learnLogin } from '../admission.ts';
import type { AppContext } from '../context.ts';
import { PoolShare } from '../pool-share.ts';
import { viewerOf } from './viewer.ts';
import { createStreamGate, type EventStream, openEventStream } from '../event-stream.ts';
import { OverviewHub, type Work } from './overview-hub.ts';

/** How often an open overview re-reads the work's status, for changes nobody announced. */
const STATUS_POLL_MS = 5_000;
const HEARTBEAT_MS = 15_000;
/** Reads of stream opens that may wait for one of the stream connections, per connection. */
const STREAM_READS_QUEUED_PER_CONNECTION = 32;
const STREAMS_BUSY_RETRY_AFTER_S = 5;

/**
 * The database connections that serve live update streams in one process (docs/OPERATIONS.md): a
 * tenth of the primary pool, at least one. However many streams arrive, their reads (the login of
 * the cookie, the work) take at most this many connections at once.
 */
export const streamConnections = (poolMax: number): number => Math.max(1, Math.floor(poolMax / 10));

/**
 * The bounded path of a stream's reads (issue 28): `streamConnections` queries at once, 32 per
 * connection waiting, and a stream being opened beyond that is refused at once (503 STREAMS_BUSY
 * with Retry-After) instead of taking more of the pool or waiting for an error of the database.
 */
export function streamPoolShare(poolMax: number): PoolShare {
  const slots = streamConnections(poolMax);
  return new PoolShare(slots, slots * STREAM_READS_QUEUED_PER_CONNECTION, () =>
    new HttpError(503, 'STREAMS_BUSY', 'Too many live update streams are opening on this server right now. Try again in a few seconds.', {
      'retry-after': String(STREAMS_BUSY_RETRY_AFTER_S),
    }),
  );
}

/**
 * GET /api/worlds/:id/updates/events: the live overview (server-sent events fed by the store's
 * pub/sub, fanned out per world by ./overview-hub.ts). Events: `ready` {status, canEdit, canCreate, canNotify} once; `record` {update} for
 * each newly published record of the work or of a visible language variant (records held for
 * review never travel); `status` {status, canEdit, canCreate, canNotify} when publication or
 * review status changed (the overview reloads its permissions); `gone` when the work is no longer
 * visible, after which the stream ends.
 */
export async function updateEventRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const open = new Set<() => void>();
  const gate = createStreamGate({ perAddress: ctx.config.limits.eventStreamsPerAddress, perProcess: ctx.config.limits.eventStreamsPerProcess });
  // A stream open passes the replica's admission queue (../admission.ts, shared with turns), and
  // every read that serves streams goes through the streams' share of the pool (../pool-share.ts):
  // a stream being opened is refused when either is full; the hub's polls and record reads (one at
  // a time per watched world) wait for the share.
  const reads = streamPoolShare(ctx.db.primary.max);
  const opening = reads.queryable(ctx.db.primary);
  const hub = new OverviewHub(reads.queryable(ctx.db.primary, { always: true }), ctx.store, app.log, STATUS_POLL_MS);
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get<{ Params: { id: string } }>('/api/worlds/:id/updates/events', async (request, reply) => {
    const worldId = request.params.id;
    // Admitted before any query: a flood of streams is refused without touching the database. Its
    // reads then take the bounded path: the login through the stream connections, the work as
    // the hub reads it for every stream of the world.
    const release = gate.admit(request.ip);
    let viewer: Viewer | null;
    let work: Work | null;
    try {
      // The opening reads hold a slot of the replica's admission queue (a burst of opens beyond it
      // is refused with 503 SERVER_BUSY at once instead of waiting for the pool) and run on the
      // streams' share of the pool (beyond it, 503 STREAMS_BUSY).
      const done = await admitted(ctx, request, reply.raw);
      try {
        [viewer, work] = [await viewerOf(ctx, request, undefined, opening), await hub.work(worldId, opening)];
        if (viewer) learnLogin(ctx, request, viewer.accountId);
      } finally {
        done();
      }
    } catch (err) {
      release();
      throw err;
    }
    if (!work || !canView(work, viewer)) {
      release();
      throw new HttpError(404, 'NOT_FOUND', 'No such world.');
    }

    const res: ServerResponse = reply.raw;
    let ended = false;
    /** Opened once the subscription is in place (below); nothing is sent before. */
    let stream: EventStream | null = null;
    const send = (event: string, data: unknown) => {
      if (!ended) stream?.write(event, data);
    };
    const view = (w: Work) => ({ status: w.status, ...historyPermissions(w, viewer) });
    let lastView = JSON.stringify(view(work));

    // The work and records arrive through the process's hub (./overview-hub.ts): one
    // subscription, one poll and one read per world, whatever the number of open streams.
    const onWork = (now: Work | null) => {
      if (!now || !canView(now, viewer)) {
        send('gone', {});
        end();
        return;
      }
      const next = JSON.stringify(view(now));
      if (next !== lastView) {
        lastView = next;
        send('status', view(now));
      }
    };
    const onRecord = (record: UpdateRecord, source: Work | null) => {
      if (record.worldId !== worldId && (!source || !canView(source, viewer))) return;
      send('record', { update: record });
    };
    let stopWatching: () => void;
    try {
      stopWatching = await hub.watch(worldId, { onWork, onRecord });
    } catch (err) {
      release();
      throw err;
    }
    const heartbeat = setInterval(() => {
      if (!ended) res.write(': ping\n\n');
    }, HEARTBEAT_MS);
    function end() {
      if (ended) return;
      ended = true;
      release();
      open.delete(end);
      clearInterval(heartbeat);
      stopWatching();
      res.end();
    }
    open.add(end);
    res.on('close', end);
    // The client left while the subscription was being set up: its 'close' has already passed.
    if (res.destroyed || !res.socket || res.socket.destroyed) {
      reply.hijack();
      end();
      return;
    }

    stream = openEventStream(reply, { retryMs: 3000, watch: true });
    send('ready', view(work));
  });
}
