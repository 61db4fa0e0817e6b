import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@yumina/config';
import { type RunningServer, startServer } from '../../containers/api/src/server.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { sharedRedisUrl, testPrefix } from './redis.ts';

export interface TestServer extends RunningServer {
  database: TestDatabase;
  dataDir: string;
  stop(): Promise<void>;
}

/** The container on a fresh database of the real PostgreSQL and the real Redis, on a free loopback port. */
export async function startTestServer(
  env: Record<string, string> | ((databaseUrl: string) => Record<string, string>) = {}, options: { web?: boolean; redis?: boolean; logDestination?: import('pino').DestinationStream } = {}): Promise<TestServer> {
  const database = await createTestDatabase({ migrated: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-test-'));
  const given = typeof env === 'function' ? env(database.url) : env;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'fatal',
    DATA_DIR: dataDir,
    SAMPLE_WORLDS: '0',
    // Test servers share one PostgreSQL (max_connections 100 by default) between parallel suites:
    // small pools unless a test asks for more.
    DATABASE_POOL_MAX: '10',
    DATABASE_READ_POOL_MAX: '5',
    // Password hashes at scrypt N = 2^10 instead of production's 2^14 (~3 instead of ~46 ms of CPU
    // each, and a run makes ~800): the same code and format. A suite that measures what a hash
    // costs sets production's (tests/security/signup.test.ts); one that runs as production gets it.
    ...(given.NODE_ENV === undefined || given.NODE_ENV === 'test' ? { NODE_ENV: 'test', PASSWORD_HASH_COST: '10' } : {}),
    // Suites sign up and sign in many accounts from one address within a minute: the per-address
    // budget of password hashes is raised (tests/security/password-hashing.test.ts sets its own).
    PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: '100000',
    DATABASE_URL: database.url,
    ...(options.redis === false ? {} : { REDIS_URL: sharedRedisUrl, REDIS_KEY_PREFIX: testPrefix() }),
    ...given,
  });
  const server = await startServer(config, { web: options.web ?? false, logDestination: options.logDestination });
  return {
    ...server,
    database,
    dataDir,
    async stop() {
      await server.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { Browser } from './http-client.ts';
