import type { ServerResponse } from 'node:http';
import { HttpError } from '@yumina/http';
import { canView, historyPermissions, loadWork, parseUpdatesMessage, readRecord, updatesChannel, type Viewer } from '@yumina/updates';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { viewerOf } from './viewer.ts';
import { type EventStream, openEventStream } from '../event-stream.ts';

/** How often an open overview re-reads the work's status, for changes nobody announced. */
const STATUS_POLL_MS = 5_000;
const HEARTBEAT_MS = 15_000;

/**
 * GET /api/worlds/:id/updates/events: the live overview (server-sent events fed by the store's
 * pub/sub). Events: `ready` {status, canEdit, canCreate, canNotify} once; `record` {update} for
 * each newly published record of the work or of a visible language variant (records held for
 * review never travel); `status` {status, canEdit, canCreate, canNotify} when publication or
 * review status changed (the overview reloads its permissions); `gone` when the work is no longer
 * visible, after which the stream ends.
 */
export async function updateEventRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get<{ Params: { id: string } }>('/api/worlds/:id/updates/events', async (request, reply) => {
    const worldId = request.params.id;
    const viewer: Viewer | null = await viewerOf(ctx, request);
    const work = await loadWork(db, worldId);
    if (!work || !canView(work, viewer)) throw new HttpError(404, 'NOT_FOUND', 'No such world.');

    const res: ServerResponse = reply.raw;
    let ended = false;
    /** Opened once the subscription is in place (below); nothing is sent before. */
    let stream: EventStream | null = null;
    const send = (event: string, data: unknown) => {
      if (!ended) stream?.write(event, data);
    };
    const view = (w: NonNullable<typeof work>) => ({ status: w.status, ...historyPermissions(w, viewer) });
    let lastView = JSON.stringify(view(work));

    let checking = false;
    let again = false;
    const recheck = async (): Promise<void> => {
      if (checking) {
        again = true; // a change announced during a check is read by one more check
        return;
      }
      checking = true;
      try {
        const now = await loadWork(db, worldId);
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
      } catch (err) {
        request.log.warn({ err, type: 'updates-events' }, 'status check failed');
      } finally {
        checking = false;
      }
      if (again && !ended) {
        again = false;
        await recheck();
      }
    };

    const forward = async (updateId: string) => {
      try {
        const record = await readRecord(db, updateId);
        if (!record) return;
        if (record.worldId !== worldId) {
          const source = await loadWork(db, record.worldId);
          if (!source || !canView(source, viewer)) return;
        }
        send('record', { update: record });
      } catch (err) {
        request.log.warn({ err, type: 'updates-events' }, 'could not forward an update record');
      }
    };

    const unsubscribe = await ctx.store.subscribe(updatesChannel(worldId), (text) => {
      const message = parseUpdatesMessage(text);
      if (message?.type === 'record') void forward(message.updateId);
      else if (message?.type === 'status') void recheck();
    });
    const poll = setInterval(() => void recheck(), STATUS_POLL_MS);
    const heartbeat = setInterval(() => {
      if (!ended) res.write(': ping\n\n');
    }, HEARTBEAT_MS);
    function end() {
      if (ended) return;
      ended = true;
      open.delete(end);
      clearInterval(poll);
      clearInterval(heartbeat);
      unsubscribe().catch(() => {});
      res.end();
    }
    open.add(end);
    res.on('close', end);

    stream = openEventStream(reply, { retryMs: 3000 });
    send('ready', view(work));
  });
}
