import { join } from 'node:path';
import { z } from 'zod';
import { type LinkedResources, linksFromVariables, settingsFromLinks, sstLinks } from './links.ts';
import { providerKindOf } from '@yumina/ai/kinds';

export { type LinkedResources, settingsFromLinks, UNSET_SECRET, SECRET_LINKS, COMPONENT_LINKS } from './links.ts';

/**
 * The one place that reads the environment. Everything below receives the typed
 * object this returns. Every variable is listed in README.md's configuration table.
 */

/** The admission limits: what is set, else derived from the primary pool's size. */
function admissionLimits(
  concurrency: number,
  queue: number,
  maxWaitMs: number,
  poolMax: number,
  maxInFlight: number,
  loopPercent: number,
  warmUp: number,
  share: { bodyTimeoutMs: number; perAddress: number; perAccount: number },
) {
  const running = concurrency > 0 ? concurrency : Math.max(1, Math.floor((poolMax * 3) / 4));
  const waiting = queue >= 0 ? queue : running * 8;
  const places = running + waiting;
  return {
    concurrency: running,
    queue: waiting,
    maxWaitMs,
    maxInFlight: maxInFlight >= 0 ? maxInFlight : running * ADMISSION_IN_FLIGHT_PER_SLOT,
    maxLoopUtilization: loopPercent / 100,
    warmUp,
    bodyTimeoutMs: share.bodyTimeoutMs,
    // Unset: half of the places (running and waiting) per client address, a quarter per account.
    perAddress: share.perAddress >= 0 ? share.perAddress : Math.max(1, Math.floor(places / 2)),
    perAccount: share.perAccount >= 0 ? share.perAccount : Math.max(1, Math.floor(places / 4)),
  };
}

/** Refusals a replica answers on a private loopback server before it listens (ADMISSION_WARM_UP unset; containers/api/src/warm-up.ts). */
export const DEFAULT_ADMISSION_WARM_UP = 1_000;

/** The default cap of turns in flight per admission slot (ADMISSION_MAX_IN_FLIGHT unset). */
const ADMISSION_IN_FLIGHT_PER_SLOT = 40;

/** scrypt's cost (log2 N) for new password hashes unless PASSWORD_HASH_COST says otherwise; only test runs may go below it. */
export const DEFAULT_PASSWORD_HASH_COST = 14;

const int = (min: number, max: number, fallback: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .optional()
    .transform((v) => v ?? fallback);

const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, `must be a URL (${protocols.join(' or ')})`)
    .optional();

const text = (fallback: string) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : fallback));

/** One entry of TRUST_PROXY: an IPv4/IPv6 address or CIDR range, or a proxy-addr name (loopback, linklocal, uniquelocal). */
const TRUST_PROXY_ENTRY = /^(?:loopback|linklocal|uniquelocal|[0-9a-fA-F:.]+(?:\/\d{1,3})?)$/;

/**
 * The request header that proves a request came through the hops TRUST_PROXY names (the CDN adds
 * it with the value of TRUST_PROXY_SECRET; infra/router.ts). Lower case, as Node presents headers.
 */
export const PROXY_SECRET_HEADER = 'x-yumina-proxy-secret';

export const OAUTH_PROVIDERS = ['google', 'discord', 'twitter'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];
const OAUTH_FIELDS = ['CLIENT_ID', 'CLIENT_SECRET', 'AUTHORIZE_URL', 'TOKEN_URL', 'USERINFO_URL', 'ISSUER', 'JWKS_URL'] as const;

/** Endpoints of the real providers; every one is overridable (tests point them at a loopback OIDC server). */
const OAUTH_DEFAULTS: Record<OAuthProvider, Omit<OAuthProviderConfig, 'clientId' | 'clientSecret'>> = {
  google: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    issuer: 'https://accounts.google.com',
    jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
    scope: 'openid email profile',
  },
  discord: {
    authorizeUrl: 'https://discord.com/oauth2/authorize',
    tokenUrl: 'https://discord.com/api/oauth2/token',
    userinfoUrl: 'https://discord.com/api/users/@me',
    issuer: undefined,
    jwksUrl: undefined,
    scope: 'identify email',
  },
  twitter: {
    authorizeUrl: 'https://x.com/i/oauth2/authorize',
    tokenUrl: 'https://api.x.com/2/oauth2/token',
    userinfoUrl: 'https://api.x.com/2/users/me',
    issuer: undefined,
    jwksUrl: undefined,
    scope: 'users.read tweet.read',
  },
};

export interface OAuthProviderConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
  /** OpenID Connect providers (google): the id_token's issuer and key set. */
  issuer: string | undefined;
  jwksUrl: string | undefined;
  scope: string;
}

const oauthShape = Object.fromEntries(
  OAUTH_PROVIDERS.flatMap((p) =>
    OAUTH_FIELDS.map((f) => [
      `OAUTH_${p.toUpperCase()}_${f}`,
      f.endsWith('_URL') || f === 'ISSUER' ? url(['http:', 'https:']) : z.string().trim().min(1).optional(),
    ]),
  ),
) as Record<`OAUTH_${Uppercase<OAuthProvider>}_${(typeof OAUTH_FIELDS)[number]}`, z.ZodOptional<z.ZodString>>;

/** Guest preview turns an hour per address when GUEST_PREVIEW_TURNS_PER_HOUR is unset and the platform's provider is configured. */
export const DEFAULT_GUEST_TURNS_PER_HOUR = 5;

export const envSchema = z.object({
  ...oauthShape,
  NODE_ENV: z.enum(['development', 'production', 'test']).optional().default('development'),
  PORT: int(0, 65535, 3000),
  HOST: z.string().trim().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
  APP_MODE: z.enum(['local', 'container']).optional().default('local'),
  DATA_DIR: text('.data'),
  WEB_DIST: text('web/dist'),
  PUBLIC_ORIGIN: url(['http:', 'https:']),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  DATABASE_READ_URL: url(['postgres:', 'postgresql:']),
  DATABASE_QUERY_TIMEOUT_MS: int(1, 3_600_000, 60_000),
  DATABASE_CONNECT_TIMEOUT_MS: int(1, 600_000, 10_000),
  DATABASE_POOL_MAX: int(1, 100, 100),
  DATABASE_READ_POOL_MAX: int(1, 80, 80),
  DATABASE_SLOW_QUERY_MS: int(1, 3_600_000, 1_000),
  REDIS_URL: url(['redis:', 'rediss:']),
  GAMES_BUCKET: z.string().trim().min(3).max(63).optional(),
  REDIS_KEY_PREFIX: z.string().trim().max(100).optional().default(''),
  MAINTENANCE_PERIOD_MS: int(100, 86_400_000, 3_600_000),
  LEADER_LEASE_TTL_MS: int(100, 600_000, 30_000),
  REGION: text('local'),
  REPLICA_ID: z.string().trim().optional(),
  DEPLOYMENT_ID: text('dev'),
  SHUTDOWN_GRACE_MS: int(0, 600_000, 10_000),
  RUNTIME_CPU_PROFILE_SECONDS: z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number of seconds')
    .transform(Number)
    .pipe(z.number().int().max(180, 'must be at most 180 seconds (0 turns the CPU profile off)'))
    .optional()
    .transform((v) => v ?? 0),
  METRICS_TOKEN: z.string().trim().min(16, 'must be at least 16 characters').optional(),
  /** The operator's metrics as CloudWatch embedded-metric-format lines on stdout, this often (0 = off; default: every minute in container mode, off in local mode). */
  METRICS_EMF_INTERVAL_MS: int(0, 3_600_000, -1),
  PARTNERS: z.string().trim().min(2).optional(),
  IDENTITY_SIGNING_KEY: z.string().trim().min(1).optional(),
  IDENTITY_SIGNING_KEY_NEXT: z.string().trim().min(1).optional(),
  IDENTITY_SIGNING_KEY_PREVIOUS: z.string().trim().min(1).optional(),
  PARTNER_TOKEN_RATE_LIMIT_PER_MINUTE: int(1, 10_000, 30),
  DEMO_PARTNER_PORT: int(0, 65535, -1),
  OFFICIAL_AI_BASE_URL: url(['http:', 'https:']),
  OFFICIAL_AI_API_KEY: z.string().trim().min(1).optional(),
  OFFICIAL_AI_MODEL: text('openai/gpt-4o-mini'),
  OFFICIAL_AI_KIND: z
    .enum(['openai', 'anthropic', 'gemini'], { message: 'must be openai, anthropic or gemini' })
    .optional(),
  SUMMARY_MODEL: z.string().trim().min(1).optional(),
  SUMMARY_FALLBACK_MODEL: z.string().trim().min(1).optional(),
  GAME_COMPANION_DISABLED: z.enum(['0', '1', 'true', 'false']).optional(),
  /** Unset: 5 when the platform's provider is configured (guests get a few turns), else 0. */
  GUEST_PREVIEW_TURNS_PER_HOUR: int(0, 10_000, -1),
  /** The first account made becomes the administrator. Unset: on in local mode on the embedded database (a fresh data folder has nobody to review). */
  FIRST_ACCOUNT_ADMIN: z.enum(['0', '1', 'true', 'false']).optional(),
  WELCOME_CREDITS: int(0, 1_000_000, 100),
  SAMPLE_WORLDS: z.enum(['0', '1', 'true', 'false']).optional(),
  SECRETS_KEY: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9+/=_-]{43,}$/, 'must be a base64 or base64url encoding of 32 random bytes')
    .optional(),
  SESSION_TTL_DAYS: int(1, 365, 30),
  PASSWORD_HASH_COST: int(10, 17, DEFAULT_PASSWORD_HASH_COST),
  LOGIN_RATE_LIMIT_PER_MINUTE: int(1, 10_000, 10),
  AI_PRIVATE_NETWORK_ACCESS: z.enum(['allow', 'deny']).optional(),
  AI_REPLY_MAX_BYTES: int(1024, 64 * 1024 * 1024, 256 * 1024),
  /** The platform's price table (JSON, credits per million tokens; parsePrices). */
  AI_PRICES: z.string().trim().min(1).optional(),
  AI_FIRST_BYTE_TIMEOUT_MS: int(100, 3_600_000, 60_000),
  AI_IDLE_TIMEOUT_MS: int(100, 3_600_000, 60_000),
  TRUST_PROXY: z
    .string()
    .trim()
    .refine((v) => /^\d{1,2}$/.test(v) || v.split(',').every((a) => TRUST_PROXY_ENTRY.test(a.trim())), 'must be a hop count (0 = trust nothing) or a comma-separated list of proxy addresses/CIDR ranges')
    .optional(),
  // 32–128 characters without the load balancer's wildcards (* and ?): `openssl rand -hex 32`.
  TRUST_PROXY_SECRET: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9+/=_-]{32,128}$/, 'must be 32 to 128 letters, digits or + / = _ - (for example `openssl rand -hex 32`)')
    .optional(),
  SIGNUP_RATE_LIMIT_PER_HOUR: int(1, 100_000, 30),
  // Anonymous requests that hash a password (login, a sign-up's completion, a password reset) per
  // client address per minute, all of them together.
  PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: int(1, 100_000, 30),
  AI_CHECK_RATE_LIMIT_PER_MINUTE: int(1, 10_000, 30),
  IMPORT_RATE_LIMIT_PER_MINUTE: int(1, 10_000, 20),
  EVENT_STREAMS_PER_ADDRESS: int(1, 100_000, 20),
  // A sending turn's lock lease, renewed while it runs: a turn whose replica died frees its session within it (seconds).
  TURN_LEASE_SECONDS: int(3, 3_600, 30),
  ROOM_MAX_PLAYERS: int(2, 64, 8),
  ROOM_MAX_SPECTATORS: int(0, 1_000, 50),
  ROOM_MESSAGES_PER_MINUTE: int(1, 10_000, 20),
  ROOM_INVITE_HOURS: int(1, 24 * 90, 24 * 7),
  EVENT_STREAMS_PER_PROCESS: int(1, 1_000_000, 2_000),
  SMTP_URL: url(['smtp:', 'smtps:']),
  MAIL_FROM: z
    .string()
    .trim()
    .max(320)
    .regex(/^(?:[^<>]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/, 'must be an address, or a name and an address: `Yumina <no-reply@example.com>`')
    .optional(),
  MAIL_SES_SENDER: z.string().trim().min(3).max(320).optional(),
  MAIL_SES_CONFIGURATION_SET: z.string().trim().min(1).max(64).optional(),
  MAIL_OUTBOX_DIR: z.string().trim().min(1).optional(),
  ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR: int(1, 10_000, 5),
  // Unset (-1): derived from the pool (config.admission).
  ADMISSION_CONCURRENCY: int(1, 1_000, -1),
  ADMISSION_QUEUE: int(0, 100_000, -1),
  ADMISSION_MAX_WAIT_MS: int(1, 60_000, 2_000),
  // Turns in flight (admitted, not yet answered) per process: unset (-1) 40× the concurrency; 0 none.
  ADMISSION_MAX_IN_FLIGHT: int(0, 1_000_000, -1),
  // New turns are refused while the event loop was busier than this (percent of the last 10–50 ms) and
  // at least `concurrency` turns are in flight; 100 turns it off.
  ADMISSION_MAX_LOOP_UTILIZATION: int(1, 100, 90),
  // Refusals answered on a private loopback server before the replica listens (warm-up.ts); 0 none.
  ADMISSION_WARM_UP: int(0, 100_000, DEFAULT_ADMISSION_WARM_UP),
  // A turn's body that had not arrived with its headers must arrive within this (ms) or is answered 408.
  ADMISSION_BODY_TIMEOUT_MS: int(100, 300_000, 10_000),
  // Places of the admission queue (running and waiting) one client address / one account may hold
  // at once: unset (-1) half / a quarter of the places; 0 no share.
  ADMISSION_PER_ADDRESS: int(0, 100_000, -1),
  ADMISSION_PER_ACCOUNT: int(0, 100_000, -1),
  // Node's deadlines for a request's headers, and for the whole request (headers and body), in ms.
  HTTP_HEADERS_TIMEOUT_MS: int(1_000, 600_000, 20_000),
  HTTP_REQUEST_TIMEOUT_MS: int(1_000, 3_600_000, 120_000),
});

export type Env = z.input<typeof envSchema>;

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  /** HOST: the listen address; default 127.0.0.1 in local mode (the embedded default), 0.0.0.0 in container mode. */
  host: string;
  logLevel: string;
  mode: 'local' | 'container';
  dataDir: string;
  webDist: string;
  publicOrigin: string;
  version: string;
  shutdownGraceMs: number;
  database: {
    /** Unset: the embedded PGlite under dataDir. */
    url: string | undefined;
    readUrl: string | undefined;
    queryTimeoutMs: number;
    connectTimeoutMs: number;
    poolMax: number;
    readPoolMax: number;
    slowQueryMs: number;
  };
  store: { redisUrl: string | undefined; prefix: string };
  telemetry: {
    /** One-shot CPU profile of this process at start, in seconds (0 = off, at most 180). */
    cpuProfileSeconds: number;
    /** GET /metrics is served only when set, and only with this bearer token. */
    metricsToken: string | undefined;
    /** How often the operator's metrics are written as CloudWatch EMF lines (0 = never). */
    emfIntervalMs: number;
  };
  partners: {
    /** JSON partner list (packages/identity parsePartners); unset: the demo partner on a second loopback port. */
    json: string | undefined;
    /** PEM or JWK strings; unset: a key generated once under dataDir. */
    signingKey: { current: string; next: string | undefined; previous: string | undefined } | undefined;
    tokenRateLimitPerMinute: number;
    /** Port of the demo partner client (local mode with no PARTNERS); default PORT + 1 (0 = any free port). */
    demoPort: number;
  };
  ai: {
    /** The platform's official OpenAI-compatible provider (costs credits); unset: private connections only. */
    /** `kind`: the wire protocol (OFFICIAL_AI_KIND, or detected from the base URL's host when unset). */
    official: { baseUrl: string; apiKey: string; defaultModel: string; kind: 'openai' | 'anthropic' | 'gemini' } | undefined;
    summaryModel: string | undefined;
    /** The one-step fallback for summaries refused by the routed model. */
    summaryFallbackModel: string | undefined;
    /** AI_PRIVATE_NETWORK_ACCESS: may AI requests go to private network addresses (default allow in local mode, deny in container mode). */
    privateNetworkAccess: 'allow' | 'deny';
    /**
     * AI_PRICES: the platform's price per model in credits per million tokens of fresh input, cache
     * reads, cache writes and output (`*` for any other model); empty: the default price
     * (@yumina/billing DEFAULT_PRICE) for every model.
     */
    prices: Readonly<Record<string, { input: number; cacheRead: number; cacheWrite: number; output: number }>>;
    /** AI_REPLY_MAX_BYTES: one reply's text is cut at this many UTF-8 bytes (stored as truncated). */
    replyMaxBytes: number;
    /**
     * The deadlines of every provider call (turns, regenerate and continue, summaries, ai.complete,
     * the companion, the guest preview), as the AI client's call options: AI_FIRST_BYTE_TIMEOUT_MS
     * for the answer's first byte, AI_IDLE_TIMEOUT_MS between two reads of it after that.
     */
    deadlines: { firstByteTimeoutMs: number; idleTimeoutMs: number };
  };
  companion: {
    /** GAME_COMPANION_DISABLED: generation refused (403 COMPANION_DISABLED); saves keep working. */
    disabled: boolean;
  };
  /** Guest preview turns per hour per address on the official provider (0 = guests cannot send). */
  guestPreviewTurnsPerHour: number;
  /** Platform credits a new account receives when the official provider is configured (0 = none). */
  welcomeCredits: number;
  /** Publish the shipped sample worlds (packages/world/samples) on first start; default on in local mode. */
  sampleWorlds: boolean;
  /**
   * TRUST_PROXY: which hops in front of the server may name the client's address (X-Forwarded-For)
   * and the public host and scheme (X-Forwarded-Host/-Proto). A hop count (0 = none: the socket's
   * address is the client) or a list of proxy addresses/CIDR ranges. Default: 0 (trust nothing) in
   * both modes: name exactly the hops in front. Every per-address limit keys on the address derived from it.
   */
  trustProxy: number | string[];
  /**
   * TRUST_PROXY_SECRET: when set, only a request carrying it in the PROXY_SECRET_HEADER came through
   * the hops TRUST_PROXY names; any other request is treated as coming from its direct peer (its
   * X-Forwarded-For/-Host/-Proto are dropped before anything reads them).
   */
  trustProxySecret: string | undefined;
  /**
   * Mail (packages/mail): Amazon SES when the Email component is linked (MAIL_SES_SENDER), else SMTP
   * when SMTP_URL is set, else the outbox folder (MAIL_OUTBOX_DIR, default DATA_DIR/outbox), which
   * the development page /dev/outbox lists. Container mode needs one of the three set explicitly.
   */
  mail: {
    transport: 'ses' | 'smtp' | 'outbox';
    /** The From header: MAIL_FROM, else `Yumina <no-reply@…>` of the SES domain or the public host. */
    from: string;
    smtpUrl: string | undefined;
    sesConfigurationSet: string | undefined;
    outboxDir: string;
  };
  limits: {
    /** Sign-ups per client address per hour. */
    signupsPerHour: number;
    /** Anonymous requests that hash a password (login, a sign-up's completion, a reset) per client address per minute, together. */
    passwordHashesPerMinute: number;
    /**
     * Account mails (verification resends, password reset links, e-mail changes) per address and per
     * account per hour; per client address, four times as many.
     */
    accountMailPerHour: number;
    /** AI connection tests and model listings per account per minute. */
    aiChecksPerMinute: number;
    /** World imports (POST /api/worlds/import) per account per minute. */
    importsPerMinute: number;
    /** Open live update streams (server-sent events) per client address, and per process. */
    eventStreamsPerAddress: number;
    /** A sending turn's lock lease (s), renewed every third of it while the turn runs (TURN_LEASE_SECONDS). */
    turnLeaseSeconds: number;
    eventStreamsPerProcess: number;
  };
  /** Rooms (docs/ROOMS.md): members per room, each member's message rate, how long an invite link lasts by default. */
  rooms: {
    maxPlayers: number;
    maxSpectators: number;
    messagesPerMinute: number;
    inviteHours: number;
  };
  /**
   * Admission control of turns and live-stream opens (containers/api/src/admission.ts): how many
   * run their database work at once (default three quarters of the primary pool, a quarter left to
   * every other route), how many more may wait (default 8× that) and for how long at most (a safety:
   * the queue is sized to drain well within it); beyond,
   * 503 with Retry-After at once. A whole turn (admitted until answered) also passes a gate: at most
   * `maxInFlight` at once (0: no cap), and none new while the event loop's utilization over the last
   * 10–50 ms is above `maxLoopUtilization` (0–1; 1: never) with `concurrency` or more in flight.
   * Before listening, the replica answers `warmUp` refusals on a private loopback server, so its
   * first overload runs optimized code (containers/api/src/warm-up.ts; 0: none).
   */
  admission: {
    concurrency: number;
    queue: number;
    maxWaitMs: number;
    maxInFlight: number;
    maxLoopUtilization: number;
    warmUp: number;
    /**
     * A place is held only by a request whose body has arrived: one whose body had not come with
     * its headers gives its place back and takes one once the body is read, which must be within
     * this (ms) or the request is answered 408 REQUEST_TIMEOUT and its connection closed.
     */
    bodyTimeoutMs: number;
    /** Places (running and waiting) one client address, and one account (its login), may hold at once; 0: no share. */
    perAddress: number;
    perAccount: number;
  };
  /**
   * Node's deadlines (containers/api/src/app.ts): a request's headers must arrive within
   * `headersTimeoutMs`, the whole request (headers and body) within `requestTimeoutMs`; beyond, 408
   * and the connection closed.
   */
  http: { headersTimeoutMs: number; requestTimeoutMs: number };
  /** S3 bucket of game builds; unset: a folder under dataDir (objects/). */
  gamesBucket: string | undefined;
  maintenance: {
    /** How often each scheduled maintenance job runs (on exactly one replica). */
    periodMs: number;
    /** The leader lease: another replica takes over this long after the leader dies. */
    leaseTtlMs: number;
  };
  identity: { region: string; replicaId: string | undefined; deploymentId: string };
  auth: {
    /** Unset: generated once into dataDir/secrets.key (mode 0600). */
    secretsKey: string | undefined;
    sessionTtlDays: number;
    loginRateLimitPerMinute: number;
    /**
     * FIRST_ACCOUNT_ADMIN: the first account made (when no other account and no administrator
     * exists) becomes the administrator. Default on in local mode without DATABASE_URL.
     */
    firstAccountAdmin: boolean;
    /**
     * scrypt's cost for new password hashes, as log2 of N (14: N = 16,384, 16 MiB and ~50 ms a
     * hash). A stored hash keeps the cost it was made with. Below 14 only with NODE_ENV=test.
     */
    passwordHashCost: number;
    /** Cookies are Secure when the platform is served over https. */
    secureCookies: boolean;
    /** Configured OAuth providers (a provider is on when its client id and secret are set). */
    oauth: Partial<Record<OAuthProvider, OAuthProviderConfig>>;
  };
}

/**
 * TRUST_PROXY unset: trust nothing, in both modes. (Container mode used to trust one hop by
 * default, which let a client that reached the server directly name its own address.)
 */
function parseTrustProxy(raw: string | undefined): number | string[] {
  if (raw === undefined) return 0;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
}

/** The sender address without MAIL_FROM: the SES identity's (an address, or no-reply@ its domain), else no-reply@ the public host. */
function defaultSender(sesSender: string | undefined, publicOrigin: string): string {
  if (sesSender) return sesSender.includes('@') ? sesSender : `no-reply@${sesSender}`;
  return `no-reply@${new URL(publicOrigin).hostname}`;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

/** Loopback hosts are secure contexts for browsers, so a local rehearsal of production may use http there. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * What container mode (the production replicas) cannot start without: it never falls back to the
 * embedded PGlite, the in-memory store or keys generated on its own disk.
 */
export const CONTAINER_REQUIRED = ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'SECRETS_KEY', 'IDENTITY_SIGNING_KEY'] as const;
const CONTAINER_REQUIRED_WHY: Record<(typeof CONTAINER_REQUIRED)[number], string> = {
  DATABASE_URL: 'the primary PostgreSQL (link the Database or set DATABASE_URL)',
  REDIS_URL: 'the shared store (link the Store or set REDIS_URL)',
  PUBLIC_ORIGIN: "the platform's https origin",
  SECRETS_KEY: 'the key that encrypts stored provider keys (secret SecretsKey)',
  IDENTITY_SIGNING_KEY: 'the identity token signing key (secret IdentitySigningKey)',
};

function refuseHalfConfiguredContainer(settings: Record<string, string>): void {
  for (const name of CONTAINER_REQUIRED) {
    if (!settings[name]) throw new ConfigError(name, `is required in container mode: ${CONTAINER_REQUIRED_WHY[name]}`);
  }
  // A replica's own disk is no place for a password reset link: mail goes somewhere real, or to an outbox named on purpose.
  if (!settings.MAIL_SES_SENDER && !settings.SMTP_URL && !settings.MAIL_OUTBOX_DIR) {
    throw new ConfigError('SMTP_URL', 'or MAIL_SES_SENDER is required in container mode: where mail is sent (link the Email component, or set SMTP_URL; MAIL_OUTBOX_DIR keeps mail in a folder instead)');
  }
  refuseInsecureOrigin(settings, 'in container mode');
}

function refuseInsecureOrigin(settings: Record<string, string>, where: string): void {
  if (!settings.PUBLIC_ORIGIN) return;
  const origin = new URL(settings.PUBLIC_ORIGIN);
  if (origin.protocol !== 'https:' && !LOOPBACK_HOSTS.has(origin.hostname)) {
    throw new ConfigError('PUBLIC_ORIGIN', `must be an https origin ${where} (got ${JSON.stringify(settings.PUBLIC_ORIGIN)})`);
  }
}

/**
 * The settings a deployed function may require (infra/routes.ts FUNCTION_ROUTES lists each
 * function's). A function never starts on the embedded PGlite, the in-memory store, keys
 * generated on its own disk or the demo partner: without one of its settings it does not start.
 */
export const FUNCTION_SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'IDENTITY_SIGNING_KEY', 'PARTNERS', 'TRUST_PROXY_SECRET'] as const;
export type FunctionSetting = (typeof FUNCTION_SETTINGS)[number];
const FUNCTION_SETTING_WHY: Record<FunctionSetting, string> = {
  ...CONTAINER_REQUIRED_WHY,
  PUBLIC_ORIGIN: "the platform's https origin (cookies and the cross-site rule)",
  PARTNERS: 'the partner list (secret Partners)',
  TRUST_PROXY_SECRET: "the Router's proof (secret TrustProxySecret): a function answers only requests that came through the Router",
};

/**
 * The configuration of a deployed function (`name`, for the message), loaded once per cold start
 * like loadConfig, refusing to go on without any of `required`: the ConfigError names the first
 * missing setting and what provides it.
 */
export function loadFunctionConfig(
  name: string,
  required: readonly FunctionSetting[],
  source: Record<string, string | undefined> = process.env,
  links: LinkedResources = source === process.env ? sstLinks() : linksFromVariables(source),
): Config {
  const settings = settingsOf(source, links);
  for (const setting of required) {
    if (!settings[setting]) throw new ConfigError(setting, `is required by the ${name} function: ${FUNCTION_SETTING_WHY[setting]}`);
  }
  if (required.includes('PUBLIC_ORIGIN')) refuseInsecureOrigin(settings, `for the ${name} function`);
  return loadConfig(source, undefined, links);
}

/** The settings of `source`, each missing or empty one taken from the links. Empty strings count as unset, as shells often export VAR= for "no value". */
function settingsOf(source: Record<string, string | undefined>, links: LinkedResources): Record<string, string> {
  const cleaned: Record<string, string> = {};
  const linked = settingsFromLinks(links);
  for (const key of Object.keys(envSchema.shape)) {
    const v = source[key];
    if (v !== undefined && v !== '') cleaned[key] = v;
    else if (linked[key] !== undefined) cleaned[key] = linked[key];
  }
  return cleaned;
}

/**
 * Parses the environment once. Throws ConfigError naming the first bad variable. Settings missing
 * from the environment are taken from SST's links (`links`; by default this process's `Resource`
 * when reading process.env, or the `SST_RESOURCE_*` variables of another source).
 */
const creditsPerMillion = z.number({ message: 'must be a number of credits per million tokens' }).finite().min(0).max(1e9);
const priceEntry = z.strictObject({ input: creditsPerMillion, cacheRead: creditsPerMillion.optional(), cacheWrite: creditsPerMillion.optional(), output: creditsPerMillion });
const priceTable = z.record(z.string().trim().min(1).max(200), priceEntry);

/**
 * AI_PRICES: `{"model-id": {"input": 3000, "cacheRead": 300, "cacheWrite": 3750, "output": 15000}, "*": {...}}`
 * in credits per million tokens. A cache read defaults to a tenth of the input price, a cache write
 * to the input price.
 */
export function parsePrices(raw: string | undefined): Config['ai']['prices'] {
  if (!raw) return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError('AI_PRICES', 'must be a JSON object of model id → {input, cacheRead, cacheWrite, output} in credits per million tokens');
  }
  const parsed = priceTable.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError('AI_PRICES', `${issue.path.join('.') || 'the table'}: ${issue.message}`);
  }
  return Object.fromEntries(
    Object.entries(parsed.data).map(([model, p]) => [model, { input: p.input, cacheRead: p.cacheRead ?? p.input / 10, cacheWrite: p.cacheWrite ?? p.input, output: p.output }]),
  );
}

export function loadConfig(
  source: Record<string, string | undefined> = process.env,
  version = '0.1.0',
  links: LinkedResources = source === process.env ? sstLinks() : linksFromVariables(source),
): Config {
  const cleaned = settingsOf(source, links);
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const shown = cleaned[variable] === undefined ? '' : ` (got ${JSON.stringify(cleaned[variable])})`;
    throw new ConfigError(variable, `${issue.message}${shown}`);
  }
  const e = parsed.data;
  if (e.APP_MODE === 'container') refuseHalfConfiguredContainer(cleaned);
  const trustProxy = parseTrustProxy(e.TRUST_PROXY);
  if (e.TRUST_PROXY_SECRET && trustProxy === 0) {
    throw new ConfigError('TRUST_PROXY_SECRET', 'proves that a request came through the hops TRUST_PROXY names: set TRUST_PROXY too (docs/OPERATIONS.md)');
  }
  if (e.PASSWORD_HASH_COST < DEFAULT_PASSWORD_HASH_COST && e.NODE_ENV !== 'test') {
    throw new ConfigError('PASSWORD_HASH_COST', `below ${DEFAULT_PASSWORD_HASH_COST} weakens every new password hash; only test runs (NODE_ENV=test) may go lower (got "${e.PASSWORD_HASH_COST}")`);
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS', `must not exceed HTTP_REQUEST_TIMEOUT_MS (${e.HTTP_REQUEST_TIMEOUT_MS}): the headers are part of the request (got "${e.HTTP_HEADERS_TIMEOUT_MS}")`);
  }
  const publicOrigin = (e.PUBLIC_ORIGIN ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    // The embedded default serves only this machine (its mail outbox holds every account's links);
    // container mode sits behind a load balancer and listens on every interface.
    host: e.HOST || (e.APP_MODE === 'container' ? '0.0.0.0' : '127.0.0.1'),
    logLevel: e.LOG_LEVEL,
    mode: e.APP_MODE,
    dataDir: e.DATA_DIR,
    webDist: e.WEB_DIST,
    publicOrigin,
    version,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    database: {
      url: e.DATABASE_URL,
      readUrl: e.DATABASE_READ_URL,
      queryTimeoutMs: e.DATABASE_QUERY_TIMEOUT_MS,
      connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
      poolMax: e.DATABASE_POOL_MAX,
      readPoolMax: e.DATABASE_READ_POOL_MAX,
      slowQueryMs: e.DATABASE_SLOW_QUERY_MS,
    },
    store: { redisUrl: e.REDIS_URL, prefix: e.REDIS_KEY_PREFIX },
    gamesBucket: e.GAMES_BUCKET,
    companion: { disabled: e.GAME_COMPANION_DISABLED === '1' || e.GAME_COMPANION_DISABLED === 'true' },
    // Unset: with the platform's provider configured, a guest gets a few turns (5 an hour per address).
    guestPreviewTurnsPerHour:
      e.GUEST_PREVIEW_TURNS_PER_HOUR >= 0 ? e.GUEST_PREVIEW_TURNS_PER_HOUR : e.OFFICIAL_AI_BASE_URL && e.OFFICIAL_AI_API_KEY ? DEFAULT_GUEST_TURNS_PER_HOUR : 0,
    welcomeCredits: e.WELCOME_CREDITS,
    sampleWorlds: e.SAMPLE_WORLDS === undefined ? e.APP_MODE === 'local' : e.SAMPLE_WORLDS === '1' || e.SAMPLE_WORLDS === 'true',
    trustProxy,
    trustProxySecret: e.TRUST_PROXY_SECRET,
    admission: admissionLimits(
      e.ADMISSION_CONCURRENCY,
      e.ADMISSION_QUEUE,
      e.ADMISSION_MAX_WAIT_MS,
      e.DATABASE_POOL_MAX,
      e.ADMISSION_MAX_IN_FLIGHT,
      e.ADMISSION_MAX_LOOP_UTILIZATION,
      e.ADMISSION_WARM_UP,
      { bodyTimeoutMs: e.ADMISSION_BODY_TIMEOUT_MS, perAddress: e.ADMISSION_PER_ADDRESS, perAccount: e.ADMISSION_PER_ACCOUNT },
    ),
    http: { headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS, requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS },
    mail: {
      transport: e.MAIL_SES_SENDER ? 'ses' : e.SMTP_URL ? 'smtp' : 'outbox',
      from: e.MAIL_FROM ?? `Yumina <${defaultSender(e.MAIL_SES_SENDER, publicOrigin)}>`,
      smtpUrl: e.SMTP_URL,
      sesConfigurationSet: e.MAIL_SES_CONFIGURATION_SET,
      outboxDir: e.MAIL_OUTBOX_DIR ?? join(e.DATA_DIR, 'outbox'),
    },
    limits: {
      signupsPerHour: e.SIGNUP_RATE_LIMIT_PER_HOUR,
      passwordHashesPerMinute: e.PASSWORD_HASH_RATE_LIMIT_PER_MINUTE,
      accountMailPerHour: e.ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR,
      aiChecksPerMinute: e.AI_CHECK_RATE_LIMIT_PER_MINUTE,
      importsPerMinute: e.IMPORT_RATE_LIMIT_PER_MINUTE,
      eventStreamsPerAddress: e.EVENT_STREAMS_PER_ADDRESS,
      turnLeaseSeconds: e.TURN_LEASE_SECONDS,
      eventStreamsPerProcess: e.EVENT_STREAMS_PER_PROCESS,
    },
    rooms: {
      maxPlayers: e.ROOM_MAX_PLAYERS,
      maxSpectators: e.ROOM_MAX_SPECTATORS,
      messagesPerMinute: e.ROOM_MESSAGES_PER_MINUTE,
      inviteHours: e.ROOM_INVITE_HOURS,
    },
    ai: {
      official:
        e.OFFICIAL_AI_BASE_URL && e.OFFICIAL_AI_API_KEY
          ? {
              baseUrl: e.OFFICIAL_AI_BASE_URL.replace(/\/+$/, ''),
              apiKey: e.OFFICIAL_AI_API_KEY,
              defaultModel: e.OFFICIAL_AI_MODEL,
              kind: e.OFFICIAL_AI_KIND ?? providerKindOf(e.OFFICIAL_AI_BASE_URL),
            }
          : undefined,
      summaryModel: e.SUMMARY_MODEL,
      summaryFallbackModel: e.SUMMARY_FALLBACK_MODEL,
      privateNetworkAccess: e.AI_PRIVATE_NETWORK_ACCESS ?? (e.APP_MODE === 'container' ? 'deny' : 'allow'),
      prices: parsePrices(e.AI_PRICES),
      replyMaxBytes: e.AI_REPLY_MAX_BYTES,
      deadlines: { firstByteTimeoutMs: e.AI_FIRST_BYTE_TIMEOUT_MS, idleTimeoutMs: e.AI_IDLE_TIMEOUT_MS },
    },
    partners: {
      json: e.PARTNERS,
      signingKey: e.IDENTITY_SIGNING_KEY
        ? { current: e.IDENTITY_SIGNING_KEY, next: e.IDENTITY_SIGNING_KEY_NEXT, previous: e.IDENTITY_SIGNING_KEY_PREVIOUS }
        : undefined,
      tokenRateLimitPerMinute: e.PARTNER_TOKEN_RATE_LIMIT_PER_MINUTE,
      demoPort: e.DEMO_PARTNER_PORT >= 0 ? e.DEMO_PARTNER_PORT : e.PORT === 0 ? 0 : e.PORT + 1,
    },
    telemetry: {
      cpuProfileSeconds: e.RUNTIME_CPU_PROFILE_SECONDS,
      metricsToken: e.METRICS_TOKEN,
      emfIntervalMs: e.METRICS_EMF_INTERVAL_MS >= 0 ? e.METRICS_EMF_INTERVAL_MS : e.APP_MODE === 'container' ? 60_000 : 0,
    },
    maintenance: { periodMs: e.MAINTENANCE_PERIOD_MS, leaseTtlMs: e.LEADER_LEASE_TTL_MS },
    identity: { region: e.REGION, replicaId: e.REPLICA_ID, deploymentId: e.DEPLOYMENT_ID },
    auth: {
      secretsKey: e.SECRETS_KEY,
      sessionTtlDays: e.SESSION_TTL_DAYS,
      loginRateLimitPerMinute: e.LOGIN_RATE_LIMIT_PER_MINUTE,
      firstAccountAdmin:
        e.FIRST_ACCOUNT_ADMIN === undefined ? e.APP_MODE === 'local' && !e.DATABASE_URL : e.FIRST_ACCOUNT_ADMIN === '1' || e.FIRST_ACCOUNT_ADMIN === 'true',
      passwordHashCost: e.PASSWORD_HASH_COST,
      secureCookies: (e.PUBLIC_ORIGIN ?? '').startsWith('https:'),
      oauth: Object.fromEntries(
        OAUTH_PROVIDERS.flatMap((p) => {
          const v = (f: (typeof OAUTH_FIELDS)[number]) => (e as unknown as Record<string, string | undefined>)[`OAUTH_${p.toUpperCase()}_${f}`];
          const clientId = v('CLIENT_ID');
          const clientSecret = v('CLIENT_SECRET');
          if (!clientId || !clientSecret) return [];
          const d = OAUTH_DEFAULTS[p];
          return [
            [
              p,
              {
                clientId,
                clientSecret,
                authorizeUrl: v('AUTHORIZE_URL') ?? d.authorizeUrl,
                tokenUrl: v('TOKEN_URL') ?? d.tokenUrl,
                userinfoUrl: v('USERINFO_URL') ?? d.userinfoUrl,
                issuer: v('ISSUER') ?? d.issuer,
                jwksUrl: v('JWKS_URL') ?? d.jwksUrl,
                scope: d.scope,
              },
            ],
          ];
        }),
      ),
    },
  };
}
