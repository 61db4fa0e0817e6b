import { randomBytes } from 'node:crypto';

/** Random text ids (128 bits, base64url): never numeric, never guessable, never reused. */
export function newId(prefix: 'acc' | 'ses' | 'per' | 'wld' | 'upd' | 'ast' | 'msg' | 'cnv' | 'chk'): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}

export function newSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
