import { SignJWT } from 'jose';
import { SigningUnavailableError } from './errors.ts';
import { buildIdentityClaims, type IdentityAccount, type LinkedIdentities } from './identity-claims.ts';
import type { PartnerConfig } from './partner-config.ts';
import { SIGNING_ALG, type SigningKeySet } from './signing-keys.ts';

/** Issues the identity token of §2.5 for one partner. Node-only (signs with the current key). */

export interface IssueIdentityTokenInput {
  keys: SigningKeySet;
  account: IdentityAccount;
  /** Login-session id, stable across renewals of one login. */
  sessionId: string;
  identities: LinkedIdentities | null | undefined;
  partner: Pick<PartnerConfig, 'issuer' | 'audience' | 'tokenTtlSeconds'>;
  now?: Date | number;
}

export interface IssuedIdentityToken {
  token: string;
  /** ISO 8601; informational, the signed `exp` is authoritative. */
  expiresAt: string;
}

/**
 * Signs with `keys.current` (RS256, `kid` in the header, `typ: JWT`). A failure of the signing
 * backend becomes SigningUnavailableError (the endpoint answers 503).
 */
export async function issueIdentityToken(input: IssueIdentityTokenInput): Promise<IssuedIdentityToken> {
  const claims = buildIdentityClaims({
    account: input.account,
    sessionId: input.sessionId,
    identities: input.identities,
    issuer: input.partner.issuer,
    audience: input.partner.audience,
    ttlSeconds: input.partner.tokenTtlSeconds,
    now: input.now ?? Date.now(),
  });
  const { current } = input.keys;
  let token: string;
  try {
    token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: current.kid, typ: 'JWT' })
      .sign(current.privateKey);
  } catch (cause) {
    throw new SigningUnavailableError(undefined, { cause });
  }
  return { token, expiresAt: new Date(claims.exp * 1000).toISOString() };
}
