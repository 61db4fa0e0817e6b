import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Real PostgreSQL for integration tests: DATABASE_URL when set (CI), else the machine's local
 * server. Each test file gets a database of its own, dropped at the end.
 * Without a reachable server the suites are skipped locally; under CI that is a failure.
 */
export const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function probe(): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    if (process.env.CI) throw new Error(`CI requires PostgreSQL at ${adminUrl}: ${(err as Error).message}`);
    console.warn(`[tests] PostgreSQL at ${adminUrl} unreachable; its integration suites are skipped: ${(err as Error).message}`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export const hasPostgres: boolean = await probe();

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A direct connection outside the pools under test, for looking at the server's side. */
export async function observer(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  return c;
}
