import { UpdatesRefused } from './errors.ts';

/**
 * Keyset cursors of the update lists (issue 24), the same shape as the library's: the last row's
 * time in microseconds since the epoch and its id, base64url JSON. A page resumes right after it:
 * `(created_at, id) < (cursor)`, inside the index, never an OFFSET.
 */
export interface ListCursor {
  key: string;
  id: string;
}

export const encodeListCursor = (c: ListCursor): string => Buffer.from(JSON.stringify([c.key, c.id])).toString('base64url');

export function decodeListCursor(text: string): ListCursor {
  try {
    const [key, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (typeof key === 'string' && /^-?\d{1,20}$/.test(key) && typeof id === 'string' && id.length <= 100) return { key, id };
  } catch {
    // falls through to the refusal
  }
  throw new UpdatesRefused(400, 'BAD_CURSOR', 'This page cursor is not valid; start again from the first page.');
}

/** `(column, idColumn) < cursor` with its two parameters pushed onto `params`; '' without a cursor. */
export function beforeCursor(cursor: string | undefined, column: string, idColumn: string, params: unknown[]): string {
  if (!cursor) return '';
  const c = decodeListCursor(cursor);
  params.push(c.key, c.id);
  return `(${column}, ${idColumn}) < (timestamptz 'epoch' + $${params.length - 1}::float8 * interval '1 microsecond', $${params.length}::text)`;
}

