import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { CHROMIUM } from './browser.js';
import { OwnPostgres, postgresBinaries } from './postgres-server.js';
import { OwnRedis } from './redis-server.js';

/**
 * The servers a test run uses, set up once per run by the global setup (./global-setup.ts) before
 * any test file: DATABASE_URL and REDIS_URL when given (CI or a developer's own servers), else a
 * PostgreSQL and a Redis of the run's own, started in a temporary folder and stopped at the end
 * (a watchdog stops them if the run dies first). Their URLs go into process.env, which every test
 * worker inherits, so both ways are the same path from there on: every test file creates a database
 * of its own on that server and a key prefix of its own on that Redis.
 *
 * What the machine must have and no npm package ships, Debian's redis-server and chromium, is
 * installed with apt-get when missing and the run is root on Debian; otherwise the run fails with one
 * line naming the package. Nothing is ever skipped for a missing service.
 */

/** A Redis key prefix of a test's own (tests share the run's Redis). */
export const testPrefix = () => `test:${randomBytes(4).toString('hex')}:`;

/** A server URL a test file uses: set by the global setup when the environment did not give it. */
export function serverUrl(name: 'DATABASE_URL' | 'REDIS_URL'): string {
  const url = process.env[name];
  if (!url) throw new Error(`${name} is not set: run the tests with vitest (\`npm test\`), whose global setup starts the servers (tests/support/services.ts).`);
  return url;
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Debian packages the tests need that no npm package ships, with how to tell they are there. */
const SYSTEM_PACKAGES = [
  { pkg: 'redis-server', why: 'Redis', present: () => onPath('redis-server') },
  { pkg: 'chromium', why: 'the browser tests', present: () => isExecutable(CHROMIUM) },
];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Installs the missing ones through apt-get (root on Debian), once, in one line; else one line of what to install. */
export function ensureSystemPackages(): void {
  const missing = SYSTEM_PACKAGES.filter((p) => !p.present());
  if (missing.length === 0) return;
  const names = missing.map((p) => p.pkg).join(' ');
  const what = missing.map((p) => `${p.pkg} (${p.why})`).join(' and ');
  if (process.getuid?.() !== 0 || !isExecutable('/usr/bin/apt-get')) {
    throw new Error(`The tests need Debian's ${what}: install with \`apt-get install -y ${names}\` as root.`);
  }
  console.log(`[tests] installing Debian's ${what}: apt-get install -y ${names}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('apt-get', ['install', '-y', '-qq', ...missing.map((p) => p.pkg)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const detail = ((err as { stderr?: Buffer }).stderr?.toString() || (err as Error).message).trim().split('\n').at(-1);
    throw new Error(`The tests need Debian's ${what}, and \`apt-get install -y ${names}\` failed: ${detail}`);
  }
  const still = missing.filter((p) => !p.present());
  if (still.length > 0) throw new Error(`The tests need Debian's ${still.map((p) => p.pkg).join(' and ')}, still missing after apt-get install.`);
}

/** A given server that does not answer fails the run at once, in one line. */
async function probeGiven(name: 'DATABASE_URL' | 'REDIS_URL', url: string): Promise<void> {
  try {
    if (name === 'DATABASE_URL') {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.query('select 1');
      } finally {
        await c.end().catch(() => {});
      }
    } else {
      const c = new Redis(url, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.ping();
      } finally {
        c.disconnect();
      }
    }
  } catch (err) {
    throw new Error(`${name}=${url} does not answer (${(err as Error).message}); unset ${name} and the tests start their own server.`);
  }
}

/**
 * Starts what the environment does not give, sets DATABASE_URL and REDIS_URL for the workers, and
 * returns the teardown that stops them and removes their folder. Says in one line what it uses.
 */
export async function startServices(): Promise<() => Promise<void>> {
  await postgresBinaries(); // a missing PostgreSQL fails here, before any test, even with DATABASE_URL (tests/health.test.ts starts its own)
  const given = { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL };
  await Promise.all(Object.entries(given).flatMap(([name, url]) => (url ? [probeGiven(name as keyof typeof given, url)] : [])));
  if (given.DATABASE_URL && given.REDIS_URL) {
    console.log('[tests] PostgreSQL and Redis: DATABASE_URL and REDIS_URL');
    return async () => {};
  }
  let postgres: OwnPostgres | undefined;
  let redis: OwnRedis | undefined;
  const teardown = () => Promise.all([postgres?.destroy(), redis?.stop()]).then(() => {});
  const [pgStart, redisStart] = await Promise.allSettled([
    given.DATABASE_URL ? undefined : OwnPostgres.start({ settings: { max_connections: '400' } }),
    given.REDIS_URL ? undefined : OwnRedis.start(),
  ]);
  if (pgStart.status === 'fulfilled') postgres = pgStart.value;
  if (redisStart.status === 'fulfilled') redis = redisStart.value;
  for (const started of [pgStart, redisStart]) {
    if (started.status === 'rejected') {
      await teardown();
      throw started.reason;
    }
  }
  if (postgres) process.env.DATABASE_URL = postgres.url;
  if (redis) process.env.REDIS_URL = redis.url;
  const pgLine = postgres ? `PostgreSQL ${postgres.version} of the run's own on 127.0.0.1:${postgres.port}` : 'PostgreSQL from DATABASE_URL';
  const redisLine = redis ? `Redis of the run's own on 127.0.0.1:${redis.port}` : 'Redis from REDIS_URL';
  console.log(`[tests] ${pgLine}${postgres ? ` (in ${postgres.dir})` : ''}, ${redisLine}; stopped at the end of the run`);
  return async () => {
    await teardown();
    if (postgres) delete process.env.DATABASE_URL;
    if (redis) delete process.env.REDIS_URL;
  };
}
