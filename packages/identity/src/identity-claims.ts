/**
 * The claims of the identity token (§2.5), built as a pure function so the issuer and the
 * benchmark baseline sign exactly the same object. Browser-safe.
 */

export const IDENTITY_PROVIDERS = ['google', 'discord', 'twitter'] as const;
export type IdentityProvider = (typeof IDENTITY_PROVIDERS)[number];

export type IdentityMap = { [P in IdentityProvider]?: string };

/** The account fields the token carries. */
export interface IdentityAccount {
  /** Platform user id: random, never reused, always a string. */
  id: string;
  email: string;
  emailVerified: boolean;
  username: string | null;
  displayName: string | null;
  picture: string | null;
}

/**
 * Providers linked through a completed OAuth login on the platform: a list of
 * `{provider, subject}` or a map provider → subject. Other providers are ignored.
 */
export type LinkedIdentities =
  | Iterable<{ provider: string; subject: string }>
  | Readonly<Record<string, string | null | undefined>>;

export interface IdentityClaims {
  iss: string;
  aud: string;
  sub: string;
  sid: string;
  iat: number;
  exp: number;
  jti: string;
  email: string;
  email_verified: boolean;
  username: string | null;
  display_name: string;
  picture: string | null;
  identities: IdentityMap;
}

export interface ClaimsInput {
  account: IdentityAccount;
  /** Login-session id, stable across renewals of one login. */
  sessionId: string;
  identities: LinkedIdentities | null | undefined;
  issuer: string;
  audience: string;
  ttlSeconds: number;
  now: Date | number;
  jti?: string;
}

const KNOWN = new Set<string>(IDENTITY_PROVIDERS);

export function identityMap(linked: LinkedIdentities | null | undefined): IdentityMap {
  const out: IdentityMap = {};
  if (!linked) return out;
  const entries: Array<[string, unknown]> =
    Symbol.iterator in Object(linked)
      ? [...(linked as Iterable<{ provider: string; subject: string }>)].map((l) => [l?.provider, l?.subject])
      : Object.entries(linked);
  for (const [provider, subject] of entries) {
    if (typeof provider !== 'string' || !KNOWN.has(provider)) continue;
    if (typeof subject !== 'string' || subject.length === 0) continue;
    if (Object.hasOwn(out, provider)) continue; // the first linked identity per provider wins
    out[provider as IdentityProvider] = subject;
  }
  return out;
}

/** An absolute https URL, or null. */
export function httpsPictureOrNull(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && !url.username && !url.password ? url.href : null;
  } catch {
    return null;
  }
}

/** Never empty: the display name, else the username, else the e-mail's local part, else "Player". */
export function displayNameOf(account: IdentityAccount): string {
  return (
    account.displayName?.trim() ||
    account.username?.trim() ||
    account.email.split('@', 1)[0]?.trim() ||
    'Player'
  );
}

export function buildIdentityClaims(input: ClaimsInput): IdentityClaims {
  const { account } = input;
  if (typeof account.id !== 'string' || account.id.length === 0) throw new TypeError('account.id must be a non-empty string');
  if (typeof input.sessionId !== 'string' || input.sessionId.length === 0) {
    throw new TypeError('sessionId must be a non-empty string');
  }
  const nowMs = typeof input.now === 'number' ? input.now : input.now.getTime();
  const iat = Math.floor(nowMs / 1000);
  return {
    iss: input.issuer,
    aud: input.audience,
    sub: account.id,
    sid: input.sessionId,
    iat,
    exp: iat + input.ttlSeconds,
    jti: input.jti ?? globalThis.crypto.randomUUID(),
    email: account.email,
    email_verified: account.emailVerified === true,
    username: account.username ?? null,
    display_name: displayNameOf(account),
    picture: httpsPictureOrNull(account.picture),
    identities: identityMap(input.identities),
  };
}
