import type { ServerResponse } from 'node:http';
import { HttpError } from '@yumina/http';
import { canView, historyPermissions, loadWork, type UpdateRecord, type Viewer } from '@yumina/updates';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { viewerOf } from './viewer.ts';
import { admissionOf } from '../admission.ts';
import { createStreamGate, type EventStream, openEventStream } from '../event-stream.ts';
import { OverviewHub, type Work } from './overview-hub.ts';

/** How often an open overview re-reads the work's status, for changes nobody announced. */
const STATUS_POLL_MS = 5_000;
const HEARTBEAT_MS = 15_000;

/**
 * GET /api/worlds/:id/updates/events: the live overview (server-sent events fed by the store's
 * pub/sub, fanned out per world by ./overview-hub.ts). Events: `ready` {status, canEdit, canCreate, canNotify} once; `record` {update} for
 * each newly published record of the work or of a visible language variant (records held for
 * review never travel); `status` {status, canEdit, canCreate, canNotify} when publication or
 * review status changed (the overview reloads its permissions); `gone` when the work is no longer
 * visible, after which the stream ends.
 */
export async function updateEventRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const open = new Set<() => void>();
  const gate = createStreamGate({ perAddress: ctx.config.limits.eventStreamsPerAddress, perProcess: ctx.config.limits.eventStreamsPerProcess });
  const admission = admissionOf(ctx);
  const hub = new OverviewHub(db, ctx.store, app.log, STATUS_POLL_MS);
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get<{ Params: { id: string } }>('/api/worlds/:id/updates/events', async (request, reply) => {
    const worldId = request.params.id;
    // Admitted before any query: a flood of streams is refused without touching the database.
    const release = gate.admit(request.ip);
    let viewer: Viewer | null;
    let work: Awaited<ReturnType<typeof loadWork>>;
    try {
      // The opening reads pass the replica's admission queue (../admission.ts): a burst of opens
      // beyond it is refused with 503 at once instead of waiting for the pool.
      [viewer, work] = await admission.run(async () => [await viewerOf(ctx, request), await loadWork(db, worldId)] as const);
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
    const view = (w: NonNullable<typeof work>) => ({ status: w.status, ...historyPermissions(w, viewer) });
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

    stream = openEventStream(reply, { retryMs: 3000 });
    send('ready', view(work));
  });
}
