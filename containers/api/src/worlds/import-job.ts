import { createHash } from 'node:crypto';
import { cardPictures, type SizedPicture } from '@yumina/assets/picture';
import { findUnsafeText, JSON_MAX_DEPTH, jsonDepthExceeds } from '@yumina/http';
import { decodeBase64, IMPORT_MAX_DEPTH, type ImportMedia, type ImportResult, importWorld, pngWithoutText } from '@yumina/world';
import { z } from 'zod';

/**
 * One import, from the request body's bytes to the import result: everything that costs time in
 * proportion to the file (reading the body's JSON or multipart form, base64, the PNG's chunks, the
 * conversion and validation, the card's picture sized for the cover and the avatar, the world's
 * JSON text) happens here, so that a large file runs in a worker thread (import-pool.ts) and never
 * on the event loop; what comes back is what the route stores. Node-only; no database, no store.
 *
 * Bodies:
 *  - `application/json`: `{"world": <any JSON>}` or `{"file": {"name", "base64"}}` (at most 5 MiB),
 *    checked by the same guards as every JSON body (depth, U+0000 and lone surrogates, prototype
 *    keys), then parsed here;
 *  - `multipart/form-data`: the first file field (its file name names a lorebook that has none);
 *  - anything else (`image/png`, `application/octet-stream`, …): the file's bytes themselves, with
 *    `?name=` for its name.
 */

export interface ImportJob {
  /** The body: its bytes, or the chunks it arrived in (joined by the job, in the job's thread). */
  bytes: Uint8Array | readonly Uint8Array[];
  contentType: string;
  /** `?name=` of a raw body. */
  fileName?: string;
}

/** The card's picture, sized (sharp, in the job's thread): the route stores both as the world's assets. */
export interface ImportPicture {
  /** The ImportMedia (and ImportAsset) id of the source picture. */
  sourceId: string;
  cover: SizedPicture;
  avatar: SizedPicture;
  /** The picture as the card holds it (a PNG card's image without the card's text chunks), for card exports. */
  original: Uint8Array;
  /** Its SHA-256 (hex), hashed here so the route's event loop does not hash megabytes. */
  originalSha256: string;
}

export type ImportJobResult =
  | {
      kind: 'done';
      /** On success, `media` holds what is stored as the world's assets besides the picture (the picture's own bytes stay in the job's thread). */
      result: ImportResult;
      fileName: string | null;
      picture: ImportPicture | null;
      /** The imported world as JSON text (what the worlds table stores), or null for a refused import. */
      definition: string | null;
      /** A card's cardSource as JSON text (worlds.card_source), or null; `result.cardSource` is left out (null). */
      cardSource: string | null;
    }
  | { kind: 'bad-body'; status: 400 | 413 | 415; code: string; message: string };

/** JSON import bodies keep the limit of the other world routes. */
export const JSON_IMPORT_LIMIT = 5 * 1024 * 1024;
/** A card file (PNG or JSON) sent as a binary body or a multipart form. */
export const FILE_IMPORT_LIMIT = 16 * 1024 * 1024;

const jsonBody = z
  .object({
    world: z.unknown().optional(),
    file: z.object({ name: z.string().max(255).optional(), base64: z.string().min(1) }).strict().optional(),
  })
  .strict()
  .refine((body) => (body.world === undefined) !== (body.file === undefined), { message: 'send exactly one of "world" (JSON) or "file" ({name, base64})' });

const bad = (status: 400 | 413 | 415, code: string, message: string): ImportJobResult => ({ kind: 'bad-body', status, code, message });
const describe = (path: (string | number)[]) => (path.length ? path.join('.') : '(body)');

/** Keys JSON bodies may not carry (Fastify's parser refuses them the same way). */
function poisonedKey(value: unknown, path: (string | number)[] = []): (string | number)[] | null {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = poisonedKey(value[index], [...path, index]);
      if (found) return found;
    }
  } else if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (key === '__proto__' || (key === 'constructor' && item && typeof item === 'object' && 'prototype' in item)) return [...path, key];
      const found = poisonedKey(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

const nameOf = (fileName: string | null | undefined) => fileName?.replace(/\.[^.]+$/, '').trim() || undefined;

/**
 * The card's picture (the PNG card's own image, or else a V3 `icon` asset embedded as a data: URI),
 * sized for the library card (cover) and the chat (avatar). A picture that cannot be read is not
 * kept, and the report says why; the import goes on.
 */
async function sizePicture(result: Extract<ImportResult, { ok: true }>): Promise<ImportPicture | null> {
  const source = result.media.find((item) => item.embedded === 'picture') ?? result.media.find((item) => item.embedded === 'data' && item.type === 'icon');
  if (!source) return null;
  try {
    const { cover, avatar } = await cardPictures(source.bytes);
    // A PNG card's own image keeps every chunk but the card's text (which the export writes anew).
    const original = source.embedded === 'picture' ? pngWithoutText(source.bytes, ['chara', 'ccv3']) : source.bytes;
    return { sourceId: source.id, cover, avatar, original, originalSha256: createHash('sha256').update(original).digest('hex') };
  } catch (error) {
    const asset = result.report.assets.find((item) => item.id === source.id)!;
    asset.notKept = `${(error as Error).message}; the world has no cover or avatar (upload one in the studio)`;
    return null;
  }
}

async function importBytes(input: Uint8Array | unknown, fileName: string | null): Promise<ImportJobResult> {
  const fallbackName = nameOf(fileName);
  const result = importWorld(input, fallbackName ? { fallbackName } : {});
  // Too deep to walk is the client's mistake, like a JSON body too deep (400 with the path).
  if (!result.ok && result.code === 'TOO_DEEP') return bad(400, 'IMPORT_TOO_DEEP', `The file nests deeper than ${IMPORT_MAX_DEPTH} levels at ${result.issues[0]?.path || '(file)'}.`);
  if (!result.ok) return { kind: 'done', result, fileName, picture: null, definition: null, cardSource: null };
  const picture = await sizePicture(result);
  const media = picture ? result.media.filter((item) => item.id !== picture.sourceId) : result.media;
  const cardSource = result.cardSource ? JSON.stringify(result.cardSource) : null;
  return { kind: 'done', result: { ...result, media, cardSource: null }, fileName, picture, definition: JSON.stringify(result.world), cardSource };
}

/** The job's body as chunks (one, when it came as bytes). */
export const chunksOf = (job: ImportJob): readonly Uint8Array[] => (job.bytes instanceof Uint8Array ? [job.bytes] : job.bytes);

/** The job's body length, whether bytes or chunks. */
export const jobLength = (job: ImportJob): number => chunksOf(job).reduce((sum, chunk) => sum + chunk.length, 0);

export async function runImportJob(input: ImportJob): Promise<ImportJobResult> {
  const job = { ...input, bytes: input.bytes instanceof Uint8Array ? input.bytes : Buffer.concat(input.bytes) };
  const type = job.contentType.split(';')[0]!.trim().toLowerCase();
  if (job.bytes.length === 0) return bad(400, 'EMPTY_UPLOAD', 'Send the file as the request body (or as a multipart form field named "file").');

  if (type === 'application/json') {
    if (job.bytes.length > JSON_IMPORT_LIMIT) return bad(413, 'FST_ERR_CTP_BODY_TOO_LARGE', `A JSON import body may be at most ${JSON_IMPORT_LIMIT / 1024 / 1024} MiB; send a larger card as the file itself (a binary body or a multipart form, up to ${FILE_IMPORT_LIMIT / 1024 / 1024} MiB).`);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(job.bytes);
    } catch {
      return bad(400, 'BAD_REQUEST', 'The request body is not UTF-8 text.');
    }
    if (jsonDepthExceeds(text)) return bad(400, 'JSON_TOO_DEEP', `The request body nests deeper than ${JSON_MAX_DEPTH} levels.`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return bad(400, 'FST_ERR_CTP_INVALID_JSON_BODY', `The request body is not valid JSON: ${(error as Error).message}`);
    }
    const poisoned = poisonedKey(parsed);
    if (poisoned) return bad(400, 'FST_ERR_CTP_INVALID_JSON_BODY', `Invalid request body: ${describe(poisoned)} is not allowed`);
    const unsafe = findUnsafeText(parsed);
    if (unsafe) return bad(400, 'INVALID_TEXT', `Invalid request body: ${describe(unsafe)}: must not contain U+0000 or unpaired surrogate characters`);
    const body = jsonBody.safeParse(parsed);
    if (!body.success) return bad(400, 'VALIDATION_FAILED', `Invalid request body: ${body.error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`).join('; ')}`);
    if (body.data.file) {
      const base64 = body.data.file.base64;
      if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(base64)) return bad(400, 'BAD_REQUEST', 'file.base64 is not base64.');
      return importBytes(decodeBase64(base64), body.data.file.name ?? null);
    }
    return importBytes(body.data.world, null);
  }

  if (job.bytes.length > FILE_IMPORT_LIMIT) return bad(413, 'FST_ERR_CTP_BODY_TOO_LARGE', `A file to import may be at most ${FILE_IMPORT_LIMIT / 1024 / 1024} MiB.`);
  if (type === 'multipart/form-data') {
    let form: FormData;
    try {
      // undici's multipart reader (Node's own fetch): no dependency, and this runs off the event loop.
      form = await new Response(job.bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': job.contentType } }).formData();
    } catch (error) {
      return bad(400, 'BAD_REQUEST', `The multipart form could not be read: ${(error as Error).message}`);
    }
    const named = form.get('file');
    const file = named instanceof Blob ? named : [...form.values()].find((value): value is File => value instanceof Blob);
    if (!file) return bad(400, 'BAD_REQUEST', 'The multipart form has no file: send the card as a field named "file".');
    return importBytes(new Uint8Array(await file.arrayBuffer()), 'name' in file && typeof file.name === 'string' ? file.name : null);
  }
  return importBytes(job.bytes, job.fileName ?? null);
}

/** The buffers of a job result, to be moved (not copied) between threads. */
export function transferablesOf(result: ImportJobResult): ArrayBuffer[] {
  if (result.kind !== 'done' || !result.result.ok) return [];
  const seen = new Set<ArrayBuffer>();
  const original = result.picture?.original;
  if (original && original.buffer instanceof ArrayBuffer && original.byteOffset === 0 && original.byteLength === original.buffer.byteLength) seen.add(original.buffer);
  // The sized pictures (tens of kilobytes, in buffers sharp made) are copied.
  for (const { bytes } of result.result.media as ImportMedia[]) {
    const buffer = bytes.buffer;
    if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) seen.add(buffer);
  }
  return [...seen];
}
