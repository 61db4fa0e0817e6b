import { Resource } from 'sst/resource';

/**
 * The one place that maps SST's linked resources (infra/*.ts `link: [...]`, read at run time with
 * the `sst` package's `Resource`) to the settings loadConfig parses. An environment variable of
 * the same name always wins over a link.
 */

/** What a link carries: SST puts each linked component's properties under its name. */
export type LinkedResources = Record<string, unknown>;

/** A secret that exists (so `sst deploy` never stops on it) but holds no value yet. */
export const UNSET_SECRET = 'none';

/** Secrets (sst.Secret name → setting). */
export const SECRET_LINKS = {
  SecretsKey: 'SECRETS_KEY',
  IdentitySigningKey: 'IDENTITY_SIGNING_KEY',
  IdentitySigningKeyNext: 'IDENTITY_SIGNING_KEY_NEXT',
  IdentitySigningKeyPrevious: 'IDENTITY_SIGNING_KEY_PREVIOUS',
  MetricsToken: 'METRICS_TOKEN',
  Partners: 'PARTNERS',
  DatabaseReadUrl: 'DATABASE_READ_URL',
  TrustProxySecret: 'TRUST_PROXY_SECRET',
} as const;

/** Components: the names infra/ gives them. */
export const COMPONENT_LINKS = { database: 'Database', store: 'Store', objects: 'Objects', email: 'Email' } as const;

const record = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** The settings the links provide (only those they do provide). */
export function settingsFromLinks(links: LinkedResources): Record<string, string> {
  const out: Record<string, string> = {};
  const db = record(links[COMPONENT_LINKS.database]);
  const host = str(db?.host);
  if (db && host) {
    const user = encodeURIComponent(str(db.username) ?? 'postgres');
    const password = str(db.password);
    const auth = password ? `${user}:${encodeURIComponent(password)}` : user;
    out.DATABASE_URL = `postgres://${auth}@${host}:${str(db.port) ?? '5432'}/${encodeURIComponent(str(db.database) ?? 'postgres')}`;
  }
  const store = record(links[COMPONENT_LINKS.store]);
  const storeHost = str(store?.host);
  if (store && storeHost) {
    // SST's ElastiCache cluster requires TLS in transit; a link that says otherwise (tls: false) gets redis://.
    const scheme = store.tls === false ? 'redis' : 'rediss';
    const password = str(store.password);
    const auth = password ? `${encodeURIComponent(str(store.username) ?? 'default')}:${encodeURIComponent(password)}@` : '';
    out.REDIS_URL = `${scheme}://${auth}${storeHost}:${str(store.port) ?? '6379'}`;
  }
  const bucket = str(record(links[COMPONENT_LINKS.objects])?.name);
  if (bucket) out.GAMES_BUCKET = bucket;
  // The Email component (sst.aws.Email): its sending identity (an address or a domain) and configuration set.
  const email = record(links[COMPONENT_LINKS.email]);
  const sender = str(email?.sender);
  if (sender) out.MAIL_SES_SENDER = sender;
  const configSet = str(email?.configSet);
  if (sender && configSet) out.MAIL_SES_CONFIGURATION_SET = configSet;
  for (const [name, setting] of Object.entries(SECRET_LINKS)) {
    const value = str(record(links[name])?.value);
    if (value && value !== UNSET_SECRET) out[setting] = value;
  }
  return out;
}

/** The names a settings mapping reads, for `Resource` (which throws on a name that is not linked). */
const LINK_NAMES = [...Object.values(COMPONENT_LINKS), ...Object.keys(SECRET_LINKS)];

/** This process's links through SST's `Resource` (empty when the process was not started by SST). */
export function sstLinks(): LinkedResources {
  const out: LinkedResources = {};
  for (const name of LINK_NAMES) {
    if (name in Resource) out[name] = (Resource as unknown as LinkedResources)[name];
  }
  return out;
}

/** Links given as SST passes them, `SST_RESOURCE_<Name>` JSON variables (a source other than process.env). */
export function linksFromVariables(source: Record<string, string | undefined>): LinkedResources {
  const out: LinkedResources = {};
  for (const name of LINK_NAMES) {
    const raw = source[`SST_RESOURCE_${name}`];
    if (!raw) continue;
    try {
      out[name] = JSON.parse(raw);
    } catch {
      // A malformed link is no link; the setting it would give is then reported missing by name.
    }
  }
  return out;
}
