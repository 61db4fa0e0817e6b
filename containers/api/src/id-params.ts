import { HttpError } from '@yumina/http';
import { isPlatformId } from '@yumina/sandbox';
import type { FastifyInstance } from 'fastify';

/** The path parameters that name a platform id: a world, session, message or checkpoint. */
const ID_PARAMS = new Set(['worldId', 'messageId', 'checkpointId', 'participantId', 'queuedId', 'inviteId']);
/** `:id` names a platform id on these routes (a session, a world, a library record of a world, a room or a group scene: its session). */
const ID_ROUTES = /^\/api\/(sessions|worlds|library|rooms|groups)\/:id(\/|$)/;

/**
 * Defence in depth for the routes of worlds and sessions: a path parameter that names a platform id
 * must have the platform's id form (`isPlatformId`, @yumina/sandbox) before any route runs.
 * Anything else names nothing and is answered 404 NOT_FOUND, the same as an id that does not
 * exist, without touching the database. (The browser already resolves `.` and `..` segments, and
 * the player encodes every segment; this keeps a hand-made request from reaching a route with an
 * id like `..` or `a/b` after decoding.)
 */
export function installIdParamCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (!params) return;
    const idRoute = ID_ROUTES.exec(request.routeOptions.url ?? '')?.[1];
    for (const [name, value] of Object.entries(params)) {
      const what = ID_PARAMS.has(name) ? name.slice(0, -2) : name === 'id' && idRoute ? ({ sessions: 'session', rooms: 'room', groups: 'group scene' } as Record<string, string>)[idRoute] ?? 'world' : null;
      if (what && !isPlatformId(value))
        throw new HttpError(404, 'NOT_FOUND', `No such ${what}: ${JSON.stringify(String(value).slice(0, 80))} is not an id of this platform.`);
    }
  });
}
