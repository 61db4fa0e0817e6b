/**
 * npm run start-time [-- --later=3]
 *
 * How long `npm start` takes until the platform is ready, as a newcomer meets it: the time from
 * spawning `npm start` to the first 200 of GET /health (the readiness answer: the database
 * answers), polled every 100 ms. On the embedded default only (no DATABASE_URL, no REDIS_URL), on
 * folders of its own, so the checkout's ./.data and web/dist are left alone:
 *  1. first start of a fresh clone: no web build yet (it builds the web app) and a fresh data folder
 *     (PGlite created, migrations applied, sample worlds published);
 *  2. first start on a fresh data folder with the web app already built;
 *  3. later starts: the same data folder and build again (`--later`, default 3; the median is printed).
 * Each server is stopped (SIGTERM) before the next starts. Prints the machine (CPU model and
 * count, memory, Node, the load average at the start) beside the figures, for the README.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const later = Number(/^--later=(\d+)$/.exec(process.argv.find((a) => a.startsWith('--later=')) ?? '')?.[1] ?? 3);

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

/** The environment of a newcomer's `npm start`: none of the test run's database or store settings. */
function newcomerEnv(dataDir: string, webDist: string, port: number, demoPort: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(DATABASE_|REDIS_|APP_MODE$|PUBLIC_ORIGIN$|NODE_ENV$|SAMPLE_WORLDS$|OFFICIAL_AI_|SMTP_URL$|MAIL_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, DATA_DIR: dataDir, WEB_DIST: webDist, PORT: String(port), DEMO_PARTNER_PORT: String(demoPort), LOG_LEVEL: 'warn' };
}

async function ready(port: number, child: ChildProcess, t0: number): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return performance.now() - t0;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // npm runs the server in a child of its own: the whole process group is stopped.
  process.kill(-child.pid!, 'SIGTERM');
  const force = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
  await exited;
  clearTimeout(force);
}

async function timeStart(dataDir: string, webDist: string): Promise<number> {
  const [port, demoPort] = [await freePort(), await freePort()];
  const t0 = performance.now();
  const child = spawn('npm', ['start'], { cwd: root, env: newcomerEnv(dataDir, webDist, port, demoPort), stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  try {
    return await ready(port, child, t0);
  } finally {
    await stop(child);
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const cpu = cpus();
console.log(
  `machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the start`,
);
const scratch = mkdtempSync(join(tmpdir(), 'yumina-start-time-'));
try {
  const webDist = join(scratch, 'web-dist');
  const first = await timeStart(join(scratch, 'data-1'), webDist);
  console.log(`start-time: first start of a fresh clone (builds the web app, fresh data folder): ${seconds(first)}`);
  const built = await timeStart(join(scratch, 'data-2'), webDist);
  console.log(`start-time: first start on a fresh data folder, web app built: ${seconds(built)}`);
  const runs: number[] = [];
  for (let i = 0; i < later; i++) runs.push(await timeStart(join(scratch, 'data-2'), webDist));
  console.log(`start-time: later start (same data folder): median ${seconds(median(runs))} of ${runs.map(seconds).join(', ')}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
