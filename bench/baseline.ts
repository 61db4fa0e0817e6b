import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateSigningKeyMaterial } from '@yumina/identity';
import { createTestDatabase, type TestDatabase } from '../tests/support/postgres.ts';
import { freePort, sharedRedisUrl, testPrefix } from '../tests/support/redis.ts';

/**
 * Baselines from history: a benchmark that compares with our own older code runs that code as it
 * was, a named commit of this repository, never a copy in the tree. The commit is checked out as
 * a git worktree under `.bench/baselines/<commit>` (git-ignored), installed once (`npm ci`,
 * preferring the npm cache) and reused by later runs; its server runs in a process of its own,
 * from its own source, on a fresh database of the real PostgreSQL.
 */
const root = resolve(import.meta.dirname, '..');
export const BASELINES_DIR = join(root, '.bench/baselines');

/** The commit issue 32's work (web pages, library at scale, overload) started from: those benchmarks' "today". */
export const ISSUE_32_BASELINE = '1887fa08a28921269e37cc19e9d3935d059a23de';

/**
 * The release before this tree: the commit production ran before the current migrations were
 * added (docs/OPERATIONS.md, "Migrations without downtime"). tests/previous-release.test.ts runs its
 * server against this tree's schema. Move it forward when a release ships (PREVIOUS_RELEASE in the
 * environment overrides it for one run).
 */
export const PREVIOUS_RELEASE = 'a4f46c92fcedcd3127978238bc25025b049b1b3b';

const run = (cmd: string, args: string[], cwd: string, timeout = 600_000) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}: ${r.stderr || r.stdout || r.error?.message}`);
  return r.stdout.trim();
};

/** The checkout of `commit` (a full hash), made and installed on first use; its folder. */
export function baselineCheckout(commit: string): string {
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new Error(`a baseline is a full commit hash, got ${JSON.stringify(commit)}`);
  const dir = join(BASELINES_DIR, commit);
  const installed = join(dir, '.bench-installed');
  if (existsSync(installed) && readFileSync(installed, 'utf8').trim() === commit) return dir;
  mkdirSync(BASELINES_DIR, { recursive: true });
  // A folder left by an interrupted run (or a worktree git no longer knows) is made again.
  run('git', ['worktree', 'prune'], root);
  if (existsSync(dir)) {
    spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
  }
  run('git', ['worktree', 'add', '--detach', dir, commit], root);
  if (run('git', ['rev-parse', 'HEAD'], dir) !== commit) throw new Error(`${dir} is not at ${commit}`);
  run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], dir);
  writeFileSync(installed, `${commit}\n`);
  return dir;
}

export interface BaselineServer {
  url: string;
  pid: number;
  child: ChildProcess;
  database: TestDatabase;
  /** Where its mail lands (MAIL_OUTBOX_DIR: a revision with verify-first sign-up mails its links there; older ones send none). */
  outbox: string;
  stop(): Promise<void>;
}

/**
 * The baseline's container (`node --import tsx containers/api/src/main.ts` in its checkout), in
 * container mode on a fresh database of the real PostgreSQL (its own migrations) and the real
 * Redis under a prefix of its own, mail to an outbox folder of its own, with `env` added. Resolves once its /health answers 200.
 * With `options.database`, on that database instead (its migrations run on it as at any start).
 */
export async function startBaselineServer(dir: string, env: Record<string, string> = {}, options: { database?: TestDatabase } = {}): Promise<BaselineServer> {
  // a database given (one this tree's migrations made: tests/previous-release.test.ts) is the caller's to drop
  const database = options.database ? { ...options.database, drop: async () => {} } : await createTestDatabase();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const outbox = mkdtempSync(join(tmpdir(), 'yumina-baseline-outbox-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'containers/api/src/main.ts'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      APP_MODE: 'container',
      PUBLIC_ORIGIN: url,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: database.url,
      REDIS_URL: sharedRedisUrl,
      REDIS_KEY_PREFIX: testPrefix(),
      SECRETS_KEY: randomBytes(32).toString('base64url'),
      IDENTITY_SIGNING_KEY: (await generateSigningKeyMaterial()).key,
      LOG_LEVEL: 'fatal',
      MAIL_OUTBOX_DIR: outbox,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    await database.drop();
    rmSync(outbox, { recursive: true, force: true });
  };
  const until = Date.now() + 180_000;
  for (;;) {
    if (await fetch(`${url}/health`).then((r) => r.status === 200, () => false)) break;
    if (child.exitCode !== null || Date.now() > until) {
      await stop();
      throw new Error(`the baseline server did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, pid: child.pid!, child, database, outbox, stop };
}

/** CPU time of a process (Linux /proc), as process.cpuUsage() gives it: microseconds of user and system time. */
export function processCpu(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (USER_HZ, 100 on Linux).
  return { user: (Number(fields[11]) * 1_000_000) / CLOCK_TICKS, system: (Number(fields[12]) * 1_000_000) / CLOCK_TICKS };
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
