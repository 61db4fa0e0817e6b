import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { DbPool, runMigrations } from '@yumina/db';
import pg from 'pg';
import { serverUrl } from './services.js';

export { OwnPostgres } from './postgres-server.js';

/**
 * Real PostgreSQL for integration tests: DATABASE_URL when given, else the server the global setup
 * started for the run (./services.ts). Each test file gets a database of its own, dropped at the end.
 */
export const adminUrl = serverUrl('DATABASE_URL');

/**
 * An admin connection. The shared server may be briefly full while parallel suites run
 * ("too many clients", SQLSTATE 53300): that is waited out (up to 30 s).
 */
async function adminClient(url = adminUrl): Promise<pg.Client> {
  const deadline = Date.now() + 30_000;
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => {});
      if ((err as { code?: string }).code !== '53300' || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
    }
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Where the global setup names the run's migrated template database (createTemplateDatabase). */
const TEMPLATE_ENV = 'YUMINA_TEST_TEMPLATE_DB';

/**
 * A database of the test file's own: empty, or with `migrated` a copy of the run's migrated
 * template when the global setup made one (copying it takes a fraction of applying every migration
 * anew, which each of a hundred test servers did; the server's own run of the migrations at startup
 * then finds them all applied).
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? process.env[TEMPLATE_ENV] : undefined;
  const admin = await adminClient();
  try {
    await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = await adminClient();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface MigratedDatabase extends TestDatabase {
  /** A pool on it: 4 connections, a 10 s query deadline. */
  db: DbPool;
}

/** A database of the test file's own with every migration applied and a pool on it; `drop()` ends the pool first. */
export async function createMigratedDatabase(): Promise<MigratedDatabase> {
  const database = await createTestDatabase({ migrated: true });
  const db = new DbPool({ name: 'primary', connectionString: database.url, max: 4, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
  const drop = async () => {
    await db.end();
    await database.drop();
  };
  try {
    await runMigrations(db, resolve(import.meta.dirname, '../../migrations'));
  } catch (err) {
    await drop();
    throw err;
  }
  return { ...database, db, drop };
}

/** A direct connection outside the pools under test, for looking at the server's side. */
export async function observer(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
}

/**
 * Once per run (the global setup, ./global-setup.ts): a database with every migration applied, the
 * template test databases are copied from (createTestDatabase's `migrated`), named in the
 * environment the test workers inherit. Returns the teardown that drops it.
 */
export async function createTemplateDatabase(): Promise<() => Promise<void>> {
  // Made before the template exists, so migrated from empty.
  const { db, ...database } = await createMigratedDatabase();
  // A template is copied only while no one is connected to it.
  await db.end();
  process.env[TEMPLATE_ENV] = database.name;
  return async () => {
    delete process.env[TEMPLATE_ENV];
    await database.drop();
  };
}
