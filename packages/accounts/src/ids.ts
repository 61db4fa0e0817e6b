import { randomBytes } from 'node:crypto';
import type { IdPrefix } from '@yumina/sandbox';

/**
 * Random text ids (128 bits, base64url): never numeric, never guessable, never reused. Their form
 * (prefix, `_`, base64url) is the one `isPlatformId` in @yumina/sandbox checks, on the server and
 * in the browser before an id a world's interface sends becomes part of a request path.
 */
export function newId(prefix: Exclude<IdPrefix, 'ntf'>): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}

export function newSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
