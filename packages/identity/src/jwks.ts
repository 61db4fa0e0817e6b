import { createHash } from 'node:crypto';
import type { PublicSigningJwk, SigningKeySet } from './signing-keys.ts';

/** A standard JSON Web Key Set (RFC 7517) holding public parts only. */
export interface JsonWebKeySet {
  keys: PublicSigningJwk[];
}

/**
 * The published key set: the current key, the staged next key (so verifiers hold it before it
 * signs) and the previous keys (so tokens they signed still verify). Public members only
 * (kty, n, e, kid, alg, use); private members are never copied.
 */
export function buildJwks(keys: SigningKeySet): JsonWebKeySet {
  const seen = new Set<string>();
  const out: PublicSigningJwk[] = [];
  for (const key of [keys.current, ...(keys.next ? [keys.next] : []), ...keys.previous]) {
    if (seen.has(key.kid)) continue;
    seen.add(key.kid);
    const { kty, n, e, kid, alg, use } = key.publicJwk;
    out.push({ kty, n, e, kid, alg, use });
  }
  return { keys: out };
}

/** Cache lifetime of the published key set; the rotation procedure waits longer than this. */
export const JWKS_MAX_AGE_SECONDS = 300;

/** A strong validator for the key set, derived from its public members. */
export function jwksEtag(jwks: JsonWebKeySet): string {
  const digest = createHash('sha256').update(JSON.stringify(jwks.keys)).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}
