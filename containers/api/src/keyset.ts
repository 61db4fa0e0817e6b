import { z } from 'zod';
import { decodeCursor, encodeCursor } from './worlds/library.ts';

/**
 * Keyset pages for the lists that grow (issue 24): a list ordered by a time column and the id
 * resumes right after the last row it sent, `(column, id) < (cursor)` (or `>` ascending), inside
 * the index on (…, column, id); never an OFFSET that reads the skipped rows again. The cursor is
 * the library's (worlds/library.ts): the time in microseconds since the epoch and the id.
 */
export const keysetQuery = (defaultLimit: number, maxLimit: number) =>
  z.object({
    cursor: z.string().max(400).optional(),
    limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
  });

/** The column's time key as text (exact microseconds), to select beside a row: `… as k`. */
export const timeKey = (column: string): string => `(extract(epoch from ${column}) * 1000000)::bigint::text`;

/**
 * The condition that resumes after `cursor` over (`column`, `idColumn`) in `direction`, its two
 * parameters pushed onto `params`; an empty string without a cursor. A bad cursor is a 400.
 */
export function afterCursor(cursor: string | undefined, column: string, idColumn: string, direction: 'asc' | 'desc', params: unknown[]): string {
  if (!cursor) return '';
  const c = decodeCursor(cursor);
  params.push(c.key, c.id);
  return `(${column}, ${idColumn}) ${direction === 'desc' ? '<' : '>'} (timestamptz 'epoch' + $${params.length - 1}::float8 * interval '1 microsecond', $${params.length}::text)`;
}

/** The page of `rows` (fetched with limit + 1) and the cursor after its last row, null at the end. */
export function keysetPage<R extends { id: string; k: string }>(rows: R[], limit: number): { rows: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last ? encodeCursor({ key: last.k, id: last.id }) : null };
}
