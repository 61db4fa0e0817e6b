import { HttpError, parseWith } from '@yumina/http';
import { isPlatformId } from '@yumina/sandbox';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { afterCursor, keysetPage, keysetQuery, timeKey } from '../keyset.ts';

const searchQuery = keysetQuery(20, 50).extend({
  q: z.string().trim().min(2, 'at least 2 characters').max(200),
  /** One session of the player's; unset: all of them. */
  sessionId: z
    .string()
    .refine((v) => isPlatformId(v, 'session'), 'not a session id')
    .optional(),
});

/** `text` as a LIKE pattern that matches it literally anywhere (its %, _ and \ escaped). */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Up to `width` characters around the first match, on word boundaries where it can. */
export function snippetOf(content: string, q: string, width = 160): string {
  const at = content.toLowerCase().indexOf(q.toLowerCase());
  if (at < 0 || content.length <= width) return content.slice(0, width);
  const start = Math.max(0, at - Math.floor((width - q.length) / 2));
  const end = Math.min(content.length, start + width);
  return `${start > 0 ? '…' : ''}${content.slice(start, end).trim()}${end < content.length ? '…' : ''}`;
}

/**
 * GET /api/search/messages?q=…[&sessionId=…][&cursor=…&limit=…] (issue 50, search): the player's
 * messages containing `q` (case-insensitive, literally: ILIKE with its wildcards escaped), in one
 * session of theirs (by place, newest first) or across all their own sessions (newest first), a
 * keyset page at a time. Each
 * hit names its session and world, for the player to jump to it. Another account's session is a 404.
 */
export async function messageSearchRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;
  app.get('/api/search/messages', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const q = parseWith(searchQuery, request.query, 'query');
    reply.header('cache-control', 'no-store');
    if (q.sessionId) {
      const { rows } = await db.query('select 1 from chat_sessions where id = $1 and account_id = $2', [q.sessionId, auth.account.id]);
      if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such session.');
    }
    const params: unknown[] = [auth.account.id, containing(q.q), q.limit + 1];
    let where = '';
    let order = 'm.created_at desc, m.id desc';
    if (q.sessionId) {
      // In one session: by place in the conversation, newest first (a turn's two messages share a time).
      params.push(q.sessionId);
      where = ` and s.id = $${params.length}`;
      order = 'm.position desc';
      if (q.cursor !== undefined) {
        const before = /^p(\d{1,9})$/.exec(q.cursor)?.[1];
        if (before === undefined) throw new HttpError(400, 'INVALID_REQUEST', 'Invalid query: cursor: not a cursor of this search');
        params.push(Number(before));
        where += ` and m.position < $${params.length}`;
      }
    } else {
      const after = afterCursor(q.cursor, 'm.created_at', 'm.id', 'desc', params);
      if (after) where = ` and ${after}`;
    }
    const { rows } = await db.query<{ id: string; k: string; session_id: string; title: string; world_id: string; world_name: string | null; role: string; position: number; content: string; created_at: Date }>(
      `select m.id, ${timeKey('m.created_at')} as k, m.session_id, s.title, s.world_id, w.name as world_name, m.role, m.position, m.content, m.created_at
         from chat_messages m
         join chat_sessions s on s.id = m.session_id
         left join worlds w on w.id = s.world_id
        where s.account_id = $1 and m.status = 'complete' and m.role in ('user', 'assistant') and m.content ilike $2${where}
        order by ${order}
        limit $3`,
      params,
    );
    const page = keysetPage(rows, q.limit);
    const last = page.rows.at(-1);
    const nextCursor = q.sessionId ? (rows.length > q.limit && last ? `p${last.position}` : null) : page.nextCursor;
    return {
      results: page.rows.map((r) => ({
        messageId: r.id,
        sessionId: r.session_id,
        sessionTitle: r.title,
        worldId: r.world_id,
        worldName: r.world_name ?? '',
        role: r.role,
        position: r.position,
        snippet: snippetOf(r.content, q.q),
        createdAt: r.created_at.toISOString(),
      })),
      nextCursor,
    };
  });
}
