import { endLoginOf, endOtherSessions, listLogins, SESSION_COOKIE } from '@yumina/accounts';
import { HttpError } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { requireAuth } from './auth.ts';
import { describeDevice } from './device.ts';

/**
 * The account's logins (issue 35, point 4): each live one with its device, the address it was last
 * used from and when; any one can be ended (this one too: that is signing out), or all but this one.
 * A login of another account answers 404, like one that does not exist.
 */
export async function loginRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.get('/api/account/logins', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const { account, session } = await requireAuth(ctx, request, reply);
    const logins = await listLogins(db, account.id);
    return {
      logins: logins.map((r) => ({
        id: r.id,
        device: describeDevice(r.userAgent),
        address: r.clientAddress,
        signedInAt: r.createdAt.toISOString(),
        lastSeenAt: r.lastActiveAt.toISOString(),
        current: r.id === session.id,
      })),
    };
  });

  app.delete<{ Params: { id: string } }>('/api/account/logins/:id', async (request, reply) => {
    const { account, session } = await requireAuth(ctx, request, reply);
    if (!(await endLoginOf(db, account.id, request.params.id))) throw new HttpError(404, 'NOT_FOUND', 'No such login (it may have ended already).');
    if (request.params.id === session.id) reply.clearCookie(SESSION_COOKIE, { path: '/' });
    request.log.info({ type: 'account.login-ended', accountId: account.id, current: request.params.id === session.id }, 'login ended');
    return { ok: true, current: request.params.id === session.id };
  });

  app.post('/api/account/logins/end-others', async (request, reply) => {
    const { account, session } = await requireAuth(ctx, request, reply);
    const ended = await endOtherSessions(db, account.id, session.id);
    request.log.info({ type: 'account.logins-ended', accountId: account.id, ended }, 'other logins ended');
    return { ok: true, ended };
  });
}

