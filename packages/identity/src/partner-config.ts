import { z } from 'zod';
import { PartnerConfigError } from './errors.ts';

/**
 * Partner configuration (§2.4), validated with zod. Browser-safe. One or more partners, keyed by slug.
 * Origins must be bare origins (scheme, host, port; no path); https is required except on loopback hosts.
 */

/**
 * Lifetime of every identity token (seed 000 §2.5, §8): fixed, not a per-partner setting. The
 * key-rotation waiting time in docs/PARTNERS.md assumes it.
 */
export const IDENTITY_TOKEN_TTL_SECONDS = 90;
/** Endpoint path of the key set below the issuer. */
export const JWKS_PATH = '/api/auth/jwks';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname) || hostname.endsWith('.localhost');
}

/** A bare http(s) origin, normalised (`https://a.example:443/` → `https://a.example`). */
export const originSchema = z.string().trim().transform((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be an origin such as https://game.example' });
    return z.NEVER;
  }
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  if (!bare || (url.protocol !== 'https:' && url.protocol !== 'http:') || value.replace(/\/$/, '').toLowerCase() !== url.origin) {
    ctx.addIssue({ code: 'custom', message: 'must be a bare origin (scheme, host, optional port; no path)' });
    return z.NEVER;
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    ctx.addIssue({ code: 'custom', message: 'must use https (http only for loopback hosts)' });
    return z.NEVER;
  }
  return url.origin;
});

const httpsUrlSchema = z.string().trim().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  } catch {
    return false;
  }
}, 'must be an https URL (http only for loopback hosts)');

export const partnerSlugSchema = z
  .string()
  .trim()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'must be lowercase letters, digits and inner dashes');

export const partnerInputSchema = z.object({
  slug: partnerSlugSchema,
  enabled: z.boolean().default(true),
  /** Origin of the partner client, the page the landing page frames. */
  clientOrigin: originSchema,
  /** Origin of the platform API (defaults to the issuer). */
  apiOrigin: originSchema.optional(),
  /** Value of the token `aud` claim (defaults to the slug). */
  audience: z.string().trim().min(1).max(256).optional(),
  /** The platform origin, value of the token `iss` claim. */
  issuer: originSchema,
  /** Defaults to `{issuer}/api/auth/jwks`. */
  jwksUrl: httpsUrlSchema.optional(),
  /**
   * Not a setting: tokens live 90 s for every partner. An older configuration that still names it
   * is accepted only with that value, so a different lifetime is never silently ignored.
   */
  tokenTtlSeconds: z
    .unknown()
    .refine((value) => value === undefined || value === IDENTITY_TOKEN_TTL_SECONDS, {
      message: `is not configurable: identity tokens live ${IDENTITY_TOKEN_TTL_SECONDS} s (remove the setting)`,
    })
    .optional(),
  /** Optional extra client origin used while developing (not part of the public view). */
  devOrigin: originSchema.optional(),
});

export type PartnerInput = z.input<typeof partnerInputSchema>;

export interface PartnerConfig {
  slug: string;
  enabled: boolean;
  clientOrigin: string;
  apiOrigin: string;
  audience: string;
  issuer: string;
  jwksUrl: string;
  tokenTtlSeconds: typeof IDENTITY_TOKEN_TTL_SECONDS;
  devOrigin: string | undefined;
}

/** Exactly the fields of §2.4, in that order. */
export interface PartnerPublicConfig {
  enabled: boolean;
  clientOrigin: string;
  apiOrigin: string;
  audience: string;
  issuer: string;
  jwksUrl: string;
  /** Always 90 (seed 000 §2.5). */
  tokenTtlSeconds: typeof IDENTITY_TOKEN_TTL_SECONDS;
}

export type PartnerRegistry = ReadonlyMap<string, PartnerConfig>;

const partnerListSchema = z.array(partnerInputSchema).min(1, 'at least one partner is required');

function describe(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0]!;
  const where = issue.path.length ? issue.path.join('.') : 'value';
  return `${prefix}${where}: ${issue.message}`;
}

/** Validates one partner. Throws PartnerConfigError naming the first bad field. */
export function parsePartner(input: unknown): PartnerConfig {
  const parsed = partnerInputSchema.safeParse(input);
  if (!parsed.success) throw new PartnerConfigError(describe(parsed.error, 'partner '));
  const p = parsed.data;
  if (p.clientOrigin === p.issuer) {
    throw new PartnerConfigError(`partner ${p.slug}: clientOrigin must differ from the platform origin (issuer)`);
  }
  return {
    slug: p.slug,
    enabled: p.enabled,
    clientOrigin: p.clientOrigin,
    apiOrigin: p.apiOrigin ?? p.issuer,
    audience: p.audience ?? p.slug,
    issuer: p.issuer,
    jwksUrl: p.jwksUrl ?? `${p.issuer}${JWKS_PATH}`,
    tokenTtlSeconds: IDENTITY_TOKEN_TTL_SECONDS,
    devOrigin: p.devOrigin,
  };
}

/**
 * Validates one or more partners: an object, an array, or a JSON string of either (as an
 * environment variable would hold). Slugs must be unique.
 */
export function parsePartners(input: unknown): PartnerRegistry {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new PartnerConfigError('partners: not valid JSON');
    }
  }
  const list = Array.isArray(value) ? value : [value];
  const parsed = partnerListSchema.safeParse(list);
  if (!parsed.success) throw new PartnerConfigError(describe(parsed.error, 'partners.'));
  const registry = new Map<string, PartnerConfig>();
  for (const item of list) {
    const partner = parsePartner(item);
    if (registry.has(partner.slug)) throw new PartnerConfigError(`partners: duplicate slug ${partner.slug}`);
    registry.set(partner.slug, partner);
  }
  return registry;
}

/** The public view of §2.4 (what GET /api/partners/<partner>/config answers): exactly these seven fields. */
export function publicPartnerConfig(partner: PartnerConfig): PartnerPublicConfig {
  return {
    enabled: partner.enabled,
    clientOrigin: partner.clientOrigin,
    apiOrigin: partner.apiOrigin,
    audience: partner.audience,
    issuer: partner.issuer,
    jwksUrl: partner.jwksUrl,
    tokenTtlSeconds: partner.tokenTtlSeconds,
  };
}

/**
 * The embedded default: one partner `demo` whose client is served on another loopback port, so a
 * newcomer sees the handoff work end to end. Pass the platform origin and the demo client origin.
 */
export function demoPartner(platformOrigin: string, demoClientOrigin: string): PartnerConfig {
  return parsePartner({ slug: 'demo', clientOrigin: demoClientOrigin, issuer: platformOrigin, audience: 'demo' });
}
