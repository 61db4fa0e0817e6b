import type { IncomingMessage } from 'node:http';
import { errorCodes, type FastifyRequest } from 'fastify';

/** Fastify's own default body limit, for a route that sets none. */
const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads a request body chunk by chunk with the route's body limit and the declared length (as
 * Fastify's own parser checks them): `take` gets each chunk and the length before it, `end` makes
 * the body once all arrived.
 */
function readBody<T>(request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: T) => void, take: (chunk: Buffer, length: number) => void, end: (length: number) => T): void {
  const limit = request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const header = request.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  let finished = false;
  const finish = (err: Error | null, body?: T) => {
    if (finished) return;
    finished = true;
    if (err) {
      payload.removeAllListeners('data');
      payload.resume();
    }
    done(err, body);
  };
  if (declared !== undefined && !(Number.isSafeInteger(declared) && declared >= 0)) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
  if (declared !== undefined && declared > limit) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  let length = 0;
  payload.on('data', (chunk: Buffer) => {
    if (finished) return;
    if (length + chunk.length > limit) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    if (declared !== undefined && length + chunk.length > declared) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    take(chunk, length);
    length += chunk.length;
  });
  payload.on('end', () => {
    if (declared !== undefined && length !== declared) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    finish(null, end(length));
  });
  payload.on('error', (err) => finish(err));
}

/**
 * A request body as bytes (the content-type parser of the routes that take files: assets,
 * portraits, profile pictures, persona avatars), copied into one buffer chunk by chunk as it
 * arrives (sized from its Content-Length up front). Fastify's `parseAs: 'buffer'` joins the chunks
 * when the body ends: for a 10 MB card one copy of 40-110 ms on the event loop on the 2-vCPU
 * machine (a CPU profile of tests/import-stall.test.ts's server: Buffer.concat in the parser's
 * onEnd, the fresh buffer's page faults included); each 64 KiB chunk's copy is a few hundredths of
 * that. The route's body limit and the declared length hold as with Fastify's parser.
 */
export function bodyAsItArrives(request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: Buffer) => void): void {
  const limit = request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const declared = Number(request.headers['content-length']);
  let body = Buffer.allocUnsafe(Number.isSafeInteger(declared) && declared >= 0 && declared <= limit ? declared : 64 * 1024);
  readBody(
    request,
    payload,
    done,
    (chunk, length) => {
      if (length + chunk.length > body.length) {
        const grown = Buffer.allocUnsafe(Math.min(limit, Math.max(body.length * 2, length + chunk.length)));
        body.copy(grown, 0, 0, length);
        body = grown;
      }
      chunk.copy(body, length);
    },
    (length) => (length === body.length ? body : body.subarray(0, length)),
  );
}

/**
 * A request body as the chunks the socket delivered, untouched (the import route's parser): the
 * event loop neither allocates nor copies the file; the import pool moves the chunks to its
 * worker thread, which joins them (each chunk owns its memory, so the move copies nothing).
 * Limits as bodyAsItArrives.
 */
export function bodyAsChunks(request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: Buffer[]) => void): void {
  const chunks: Buffer[] = [];
  readBody(request, payload, done, (chunk) => chunks.push(chunk), () => chunks);
}
