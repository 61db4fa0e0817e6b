import type { Queryable } from '@yumina/db';
import type { Viewer } from '@yumina/updates';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';

/** The signed-in account of a request as the update-record rules see it, or null for a guest (`db`: see authenticate). */
export async function viewerOf(ctx: AppContext, request: FastifyRequest, reply?: FastifyReply, db?: Queryable): Promise<Viewer | null> {
  const auth = await authenticate(ctx, request, reply, db);
  return auth ? { accountId: auth.account.id, isAdmin: auth.account.isAdmin } : null;
}
