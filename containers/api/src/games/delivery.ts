import { contentTypeFor, gameKey, isHashedAsset, isHtml, isSafeKey, type ObjectStore } from '@yumina/assets';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const notFound = (reply: FastifyReply) => reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'No such file.' } });

/** Parses one `bytes=a-b` range against a size; undefined when there is no Range header, null when unsatisfiable. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return null;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return null;
  return { start, end };
}

/**
 * Game delivery: the game's front-end files from object storage. Hashed assets are immutable for
 * a year; HTML is revalidated on every load; ETag/If-None-Match and single byte ranges; no path
 * leaves the game's build.
 */
export async function gameDeliveryRoutes(app: FastifyInstance, objects: ObjectStore): Promise<void> {
  const serve = async (request: FastifyRequest<{ Params: { game: string; '*': string } }>, reply: FastifyReply) => {
    const { game } = request.params;
    const raw = request.url.split('?')[0] ?? '';
    // Refuse encoded separators and dot segments before any decoding can turn them into a path.
    if (/%2e|%2f|%5c|%00/i.test(raw) || raw.includes('\\')) return notFound(reply);
    const path = request.params['*'] || 'index.html';
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(game) || !isSafeKey(path)) return notFound(reply);
    const object = await objects.get(gameKey(game, path));
    if (!object) return notFound(reply);
    reply.header('etag', object.etag);
    reply.header('accept-ranges', 'bytes');
    reply.header('x-content-type-options', 'nosniff');
    reply.header(
      'cache-control',
      isHtml(path) ? 'no-cache' : isHashedAsset(path) ? 'public, max-age=31536000, immutable' : 'public, max-age=300, must-revalidate',
    );
    reply.type(contentTypeFor(path));
    const inm = request.headers['if-none-match'];
    if (inm?.split(',').some((t) => t.trim() === object.etag || t.trim() === '*')) return reply.code(304).send();
    const range = parseRange(request.headers.range, object.size);
    if (range === null) {
      reply.header('content-range', `bytes */${object.size}`);
      return reply.code(416).send();
    }
    if (range) {
      reply.header('content-range', `bytes ${range.start}-${range.end}/${object.size}`);
      return reply.code(206).send(Buffer.from(object.bytes.subarray(range.start, range.end + 1)));
    }
    return reply.send(Buffer.from(object.bytes));
  };
  app.get('/games/:game/*', serve);
  app.get<{ Params: { game: string } }>('/games/:game', (request, reply) => reply.redirect(`/games/${encodeURIComponent(request.params.game)}/`, 301));
}
