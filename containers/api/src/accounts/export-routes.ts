import { HttpError } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { requireAuth } from './auth.ts';
import { type ExportRow, exportKey, exportView, newExportId } from './data-export.ts';
import { enforceLimits } from './request-limits.ts';

/**
 * "Download my data": POST /api/account/exports asks for an archive (202; one at a time per
 * account, a few per day), GET /api/account/exports lists the recent ones, and
 * GET /api/account/exports/:id/download gives a ready one to its account only. The archive is
 * built by the export worker (data-export.ts) the server starts with the mail queue.
 */
export async function exportRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  const list = async (accountId: string) =>
    (await db.query<ExportRow & Record<string, unknown>>('select * from account_exports where account_id = $1 order by created_at desc limit 5', [accountId])).rows.map(exportView);

  app.get('/api/account/exports', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const { account } = await requireAuth(ctx, request, reply);
    return { exports: await list(account.id) };
  });

  app.post('/api/account/exports', async (request, reply) => {
    const { account } = await requireAuth(ctx, request, reply);
    const { rows: open } = await db.query<ExportRow & Record<string, unknown>>(
      `select * from account_exports where account_id = $1 and status in ('queued', 'running') order by created_at desc limit 1`,
      [account.id],
    );
    // Asking again while one is being prepared is the same request.
    if (open[0]) {
      reply.code(202);
      return { export: exportView(open[0]), exports: await list(account.id) };
    }
    await enforceLimits(ctx, [{ key: `export:account:${account.id}`, limit: 5, windowSeconds: 86_400 }], 'You asked for your data several times today. Download the archive you have, or try again tomorrow.');
    const { rows } = await db.query<ExportRow & Record<string, unknown>>('insert into account_exports (id, account_id) values ($1, $2) returning *', [newExportId(), account.id]);
    request.log.info({ type: 'account.export', accountId: account.id, exportId: rows[0]!.id }, 'data export asked for');
    ctx.exports?.wake();
    reply.code(202);
    return { export: exportView(rows[0]!), exports: await list(account.id) };
  });

  app.get<{ Params: { id: string } }>('/api/account/exports/:id/download', async (request, reply) => {
    const { account } = await requireAuth(ctx, request, reply);
    const { rows } = await db.query<ExportRow & Record<string, unknown>>('select * from account_exports where id = $1 and account_id = $2', [request.params.id, account.id]);
    const row = rows[0];
    // Another account's export is as absent as one that never was.
    if (!row) throw new HttpError(404, 'NOT_FOUND', 'No such export.');
    if (row.status !== 'ready') throw new HttpError(409, 'EXPORT_NOT_READY', row.status === 'failed' ? (row.error ?? 'This export failed.') : 'This export is still being prepared.');
    const object = await ctx.objects.get(exportKey(account.id, row.id));
    if (!object) throw new HttpError(410, 'EXPORT_EXPIRED', 'This export is no longer kept. Ask for a new one.');
    return reply
      .type('application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', `attachment; filename="yumina-data-${row.created_at.toISOString().slice(0, 10)}.json"`)
      .send(Buffer.from(object.bytes));
  });
}
