import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';
import { IdentityTokenRejectedError, type TokenRejectionReason } from './errors.ts';
import type { IdentityMap } from './identity-claims.ts';

/**
 * Item 6a: the partner's server-side verifier. The key set is fetched from the JWKS URL once and
 * cached (jose's remote key set refetches only for an unknown kid, at most every 30 s, or when
 * its cache ages out). RS256 only. iss, aud, exp (required), iat, sub, sid, jti and the signature
 * are checked; every failure rejects (fails closed) with IdentityTokenRejectedError.
 */

export interface IdentityVerifierOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** Allowed clock skew. Default 5 s. */
  clockToleranceSeconds?: number;
  /** Oldest acceptable `iat`. Default 300 s. */
  maxTokenAgeSeconds?: number;
  /** JWKS fetch timeout. Default 5000 ms. */
  fetchTimeoutMs?: number;
  /** Minimum time between refetches for unknown kids. Default 30 000 ms. */
  refetchCooldownMs?: number;
  /** How long a fetched key set is used before it is refreshed. Default 600 000 ms. */
  cacheMaxAgeMs?: number;
}

export interface VerifiedIdentity {
  iss: string;
  aud: string;
  /** Platform user id: the partner's permanent key for the player. Keep it a string. */
  sub: string;
  /** Login session: scope authorization leases to (iss, sub, sid). */
  sid: string;
  jti: string;
  iat: number;
  exp: number;
  email: string;
  emailVerified: boolean;
  username: string | null;
  displayName: string;
  picture: string | null;
  identities: IdentityMap;
}

export interface IdentityVerifier {
  verify(token: string): Promise<VerifiedIdentity>;
}

const PROVIDERS = ['google', 'discord', 'twitter'] as const;

function reject(reason: TokenRejectionReason, message: string, cause?: unknown): never {
  throw new IdentityTokenRejectedError(reason, message, cause === undefined ? undefined : { cause });
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function toIdentity(payload: JWTPayload): VerifiedIdentity {
  const p = payload as Record<string, unknown>;
  if (!nonEmpty(p.sub)) reject('claims', 'sub must be a non-empty string');
  if (!nonEmpty(p.sid)) reject('claims', 'sid must be a non-empty string');
  if (!nonEmpty(p.jti)) reject('claims', 'jti must be a non-empty string');
  if (typeof p.iat !== 'number' || typeof p.exp !== 'number') reject('claims', 'iat and exp must be numbers');
  if (typeof p.email !== 'string') reject('claims', 'email must be a string');
  if (typeof p.email_verified !== 'boolean') reject('claims', 'email_verified must be a boolean');
  if (p.username !== null && typeof p.username !== 'string') reject('claims', 'username must be a string or null');
  if (!nonEmpty(p.display_name)) reject('claims', 'display_name must be a non-empty string');
  if (p.picture !== null && !(typeof p.picture === 'string' && p.picture.startsWith('https://'))) {
    reject('claims', 'picture must be an https URL or null');
  }
  const raw = p.identities;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) reject('claims', 'identities must be an object');
  const identities: IdentityMap = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!(PROVIDERS as readonly string[]).includes(key) || !nonEmpty(value)) {
      reject('claims', 'identities may hold only google, discord and twitter string ids');
    }
    identities[key as (typeof PROVIDERS)[number]] = value;
  }
  return {
    iss: p.iss as string,
    aud: p.aud as string,
    sub: p.sub,
    sid: p.sid,
    jti: p.jti,
    iat: p.iat,
    exp: p.exp,
    email: p.email,
    emailVerified: p.email_verified,
    username: p.username as string | null,
    displayName: p.display_name,
    picture: p.picture as string | null,
    identities,
  };
}

function classify(error: unknown): never {
  if (error instanceof IdentityTokenRejectedError) throw error;
  if (error instanceof errors.JWTExpired) reject('expired', 'token expired', error);
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') reject('issuer', 'unexpected issuer', error);
    if (error.claim === 'aud') reject('audience', 'unexpected audience', error);
    if (error.claim === 'nbf' || (error.claim === 'iat' && error.reason === 'check_failed')) {
      reject('not_yet_valid', 'token not valid yet or too old', error);
    }
    reject('claims', `claim ${error.claim} failed: ${error.reason}`, error);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    reject('algorithm', 'algorithm not allowed (RS256 only)', error);
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    reject('unknown_key', 'no published key matches the token', error);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) reject('signature', 'signature mismatch', error);
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) reject('malformed', 'malformed token', error);
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error instanceof errors.JOSEError) {
    reject('key_set_unavailable', 'the key set could not be used', error);
  }
  // Network failures and anything unforeseen: fail closed.
  reject('key_set_unavailable', 'the token could not be verified', error);
}

export function createIdentityVerifier(options: IdentityVerifierOptions): IdentityVerifier {
  const keySet = createRemoteJWKSet(new URL(options.jwksUrl), {
    timeoutDuration: options.fetchTimeoutMs ?? 5_000,
    cooldownDuration: options.refetchCooldownMs ?? 30_000,
    cacheMaxAge: options.cacheMaxAgeMs ?? 600_000,
  });
  const verifyOptions = {
    algorithms: ['RS256'],
    issuer: options.issuer,
    audience: options.audience,
    typ: 'JWT',
    clockTolerance: options.clockToleranceSeconds ?? 5,
    maxTokenAge: options.maxTokenAgeSeconds ?? 300,
    requiredClaims: ['iss', 'aud', 'exp', 'iat', 'sub', 'sid', 'jti'],
  };
  return {
    async verify(token: string): Promise<VerifiedIdentity> {
      if (typeof token !== 'string' || token.length === 0 || token.length > 16_384) reject('malformed', 'malformed token');
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keySet, verifyOptions));
      } catch (error) {
        classify(error);
      }
      if (typeof payload.aud !== 'string') reject('audience', 'aud must be a single string');
      return toIdentity(payload);
    },
  };
}
