import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DbPool, runMigrations } from '@yumina/db';
import pg from 'pg';
import { freePort } from './ports.js';
import { requireOrSkip } from './required.js';

/**
 * Real PostgreSQL for integration tests: DATABASE_URL when set (CI), else the machine's local
 * server. Each test file gets a database of its own, dropped at the end.
 * Without a reachable server the suites are skipped locally; when services are required
 * (CI, DATABASE_URL or REDIS_URL set: see ./required.ts) that is a failure.
 */
export const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * An admin connection. The shared server may be briefly full while parallel suites run
 * ("too many clients", SQLSTATE 53300): that is waited out (up to 30 s), never taken for absence.
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

async function probe(): Promise<boolean> {
  let client: pg.Client | undefined;
  try {
    client = await adminClient();
    await client.query('select 1');
    return true;
  } catch (err) {
    return requireOrSkip(`PostgreSQL at ${adminUrl}`, (err as Error).message);
  } finally {
    await client?.end().catch(() => {});
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
  const admin = await adminClient();
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
  const database = await createTestDatabase();
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
 * A PostgreSQL server of the test's own (initdb into a temporary directory, its own port), which the
 * test may stop and start again without touching the shared server. Runs as the `postgres` user
 * when the tests run as root (PostgreSQL refuses to run as root).
 */
export class OwnPostgres {
  #child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly bin: string,
    readonly asPostgres: boolean,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<OwnPostgres> {
    const version = readdirSync('/usr/lib/postgresql').sort().at(-1);
    if (!version) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
    const asPostgres = process.getuid?.() === 0;
    const dir = mkdtempSync(join(tmpdir(), 'yumina-own-pg-'));
    if (asPostgres) {
      const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString());
      chownSync(dir, id('-u'), id('-g'));
    }
    const own = new OwnPostgres(await freePort(), dir, `/usr/lib/postgresql/${version}/bin`, asPostgres);
    own.#run('initdb', ['-D', `${dir}/data`, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await own.start();
    return own;
  }

  #command(tool: string, args: string[]): [string, string[]] {
    const path = `${this.bin}/${tool}`;
    return this.asPostgres ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
  }

  #run(tool: string, args: string[]): void {
    const [cmd, argv] = this.#command(tool, args);
    execFileSync(cmd, argv, { stdio: 'ignore' });
  }

  #running(): boolean {
    try {
      this.#run('pg_ctl', ['status', '-D', `${this.dir}/data`]);
      return true;
    } catch {
      return false; // pg_ctl status exits non-zero when no server runs on that directory
    }
  }

  async start(): Promise<void> {
    const args = ['-D', `${this.dir}/data`, '-p', String(this.port), '-k', this.dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
    const [cmd, argv] = this.#command('postgres', args);
    const child = spawn(cmd, argv, { stdio: 'ignore' });
    this.#child = child;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 1000 });
      c.on('error', () => {});
      try {
        await c.connect();
        await c.query('select 1');
        await c.end();
        return;
      } catch {
        await c.end().catch(() => {});
        if (child.exitCode !== null || Date.now() > deadline) throw new Error('own PostgreSQL did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** Fast shutdown: the server disconnects its clients, then exits. */
  async stop(): Promise<void> {
    if (this.#running()) this.#run('pg_ctl', ['stop', '-D', `${this.dir}/data`, '-m', 'fast', '-w']);
    const child = this.#child;
    if (child && child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
