import { z } from 'zod';

/**
 * The one place that reads the environment. Everything below receives the typed
 * object this returns. Every variable is listed in README.md's configuration table.
 */

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

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).optional().default('development'),
  PORT: int(0, 65535, 3000),
  HOST: text('0.0.0.0'),
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
  REGION: text('local'),
  REPLICA_ID: z.string().trim().optional(),
  DEPLOYMENT_ID: text('dev'),
  SHUTDOWN_GRACE_MS: int(0, 600_000, 10_000),
  SECRETS_KEY: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9+/=_-]{43,}$/, 'must be a base64 or base64url encoding of 32 random bytes')
    .optional(),
  SESSION_TTL_DAYS: int(1, 365, 30),
  LOGIN_RATE_LIMIT_PER_MINUTE: int(1, 10_000, 10),
});

export type Env = z.input<typeof envSchema>;

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
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
  store: { redisUrl: string | undefined };
  identity: { region: string; replicaId: string | undefined; deploymentId: string };
  auth: {
    /** Unset: generated once into dataDir/secrets.key (mode 0600). */
    secretsKey: string | undefined;
    sessionTtlDays: number;
    loginRateLimitPerMinute: number;
    /** Cookies are Secure when the platform is served over https. */
    secureCookies: boolean;
  };
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

/** Parses the environment once. Throws ConfigError naming the first bad variable. */
export function loadConfig(source: Record<string, string | undefined> = process.env, version = '0.1.0'): Config {
  // Empty strings count as unset, as shells often export VAR= for "no value".
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const v = source[key];
    if (v !== undefined && v !== '') cleaned[key] = v;
  }
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const shown = cleaned[variable] === undefined ? '' : ` (got ${JSON.stringify(cleaned[variable])})`;
    throw new ConfigError(variable, `${issue.message}${shown}`);
  }
  const e = parsed.data;
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    mode: e.APP_MODE,
    dataDir: e.DATA_DIR,
    webDist: e.WEB_DIST,
    publicOrigin: (e.PUBLIC_ORIGIN ?? `http://localhost:${e.PORT}`).replace(/\/$/, ''),
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
    store: { redisUrl: e.REDIS_URL },
    identity: { region: e.REGION, replicaId: e.REPLICA_ID, deploymentId: e.DEPLOYMENT_ID },
    auth: {
      secretsKey: e.SECRETS_KEY,
      sessionTtlDays: e.SESSION_TTL_DAYS,
      loginRateLimitPerMinute: e.LOGIN_RATE_LIMIT_PER_MINUTE,
      secureCookies: (e.PUBLIC_ORIGIN ?? '').startsWith('https:'),
    },
  };
}
