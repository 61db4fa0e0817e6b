import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { PROXY_SECRET_HEADER, FUNCTION_TRUST_PROXY } from '../infra/proxy-proof.ts';
import { FUNCTION_ROUTES, type FunctionRoute } from '../infra/routes.ts';
import { FunctionProcess } from '../scripts/function-process.ts';
import { buildFunctionUrlEvent, type FunctionUrlEvent } from '../scripts/function-url-event.ts';
import { CONTAINER_BUNDLE, functionBundleFile } from '../scripts/build.ts';
import { processCpu } from './baseline.ts';
import { containerSettings } from '../tests/support/container-settings.ts';
import { createTestDatabase, type TestDatabase } from '../tests/support/postgres.ts';
import { freePort, sharedRedisUrl, testPrefix } from '../tests/support/redis.ts';
import { Browser } from '../tests/support/server.ts';
import { benchSignUp } from './sign-up.ts';

/**
 * Issue 33: what production runs, started cold, on real PostgreSQL and Redis, beside today's
 * TypeScript-at-run-time path (tsx). Measured by the clock of this process, from the moment the
 * process is forked to its first answer; interleaved (compiled, tsx, compiled, …) so both paths
 * see the same machine.
 *  - function bundles: the size of each dist/functions/<folder>/handler.mjs (`npm run build`;
 *    the global setup builds them). Goal ≤ 1 MB each;
 *  - function cold start: a fresh `node` loads the function (scripts/lambda-runtime.mjs, the
 *    Lambda runtime's part) and answers its first Function URL event, a real request of that
 *    function (with a login session for partner-token and world-updates, so the first event opens
 *    the pool and the store and reads the session). Compiled: the bundle; today: handler.ts under
 *    `node --import tsx`. Goal ≤ 250 ms p50 compiled;
 *  - container start: process start to the first `GET /health` 200 (polled every 10 ms), container
 *    mode on a migrated database. Compiled: `node containers/api/dist/main.mjs` (the image's CMD);
 *    today: `node --import tsx containers/api/src/main.ts`. Goal ≤ 2 s p50 compiled. The container
 *    warms its refusal path before it listens (issue 32); ADMISSION_WARM_UP in the bench's
 *    environment reaches it (`0`: the start without the warm-up).
 * Beside each wall-clock figure, the CPU time (user + system, /proc) the started process had used
 * at that moment: on a shared machine the wall clock also counts waiting for a core, the CPU time
 * does not. Printed as `cold-start:` lines. COLD_START_RUNS (default 9) sets the runs per path.
 */
const RUNS = Number(process.env.COLD_START_RUNS ?? 9);
const root = resolve(import.meta.dirname, '..');
const ORIGIN = 'https://platform.test';
/** The Router's proof, which every function requires (TRUST_PROXY_SECRET) and every event below carries. */
const PROXY_SECRET = randomBytes(32).toString('hex');
const PARTNERS = JSON.stringify([{ slug: 'starfall', clientOrigin: 'https://play.starfall.example', issuer: ORIGIN, audience: 'starfall' }]);

let database: TestDatabase;
let setup: ChildProcess | undefined;
let settings: Record<string, string>;
let events: Record<FunctionRoute['function'], FunctionUrlEvent>;

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** The environment a Lambda of `route` gets: its settings, nothing inherited. */
function lambdaEnv(route: FunctionRoute): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, NODE_ENV: 'production', PARTNER_TOKEN_RATE_LIMIT_PER_MINUTE: '10000' };
  for (const s of route.settings) env[s] = s === 'TRUST_PROXY_SECRET' ? PROXY_SECRET : settings[s];
  if ((route.settings as readonly string[]).includes('DATABASE_URL')) env.DATABASE_POOL_MAX = '2';
  if ((route.settings as readonly string[]).includes('REDIS_URL')) env.REDIS_KEY_PREFIX = settings.REDIS_KEY_PREFIX;
  if ((route.settings as readonly string[]).includes('TRUST_PROXY_SECRET')) env.TRUST_PROXY = FUNCTION_TRUST_PROXY;
  return env;
}

interface Start {
  /** Wall clock, ms. */
  ms: number;
  /** The process's CPU time by then, ms. */
  cpuMs: number;
}
const cpuMsOf = (pid: number) => {
  const cpu = processCpu(pid);
  return (cpu.user + cpu.system) / 1000;
};

/** One cold start of a function: fork to first answer. */
async function functionColdStart(route: FunctionRoute, compiled: boolean): Promise<Start> {
  const started = performance.now();
  const fn = new FunctionProcess({
    module: compiled ? functionBundleFile(route) : `functions/${route.folder}/handler.ts`,
    loader: compiled ? [] : ['--import', 'tsx'],
    env: lambdaEnv(route),
    label: route.folder,
  });
  try {
    const result = await fn.invoke(events[route.function]).catch(async (err: Error) => {
      await fn.ready; // a load failure is the better message
      throw err;
    });
    const elapsed = performance.now() - started;
    const cpuMs = cpuMsOf(fn.child.pid!);
    if (result.statusCode >= 300) throw new Error(`${route.folder}: ${result.statusCode} ${result.body}`);
    return { ms: elapsed, cpuMs };
  } finally {
    await fn.stop();
  }
}

/** One container start: process start to the first /health 200. */
async function containerStart(compiled: boolean): Promise<Start> {
  const port = await freePort();
  const args = compiled ? [CONTAINER_BUNDLE] : ['--import', 'tsx', 'containers/api/src/main.ts'];
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH, NODE_ENV: 'production', ...containerSettings(ORIGIN), DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error', PARTNERS, ...(process.env.ADMISSION_WARM_UP ? { ADMISSION_WARM_UP: process.env.ADMISSION_WARM_UP } : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.status === 200, () => false);
      if (ok) return { ms: performance.now() - started, cpuMs: cpuMsOf(child.pid!) };
      if (child.exitCode !== null) throw new Error(`the container exited: ${stderr}`);
      if (performance.now() - started > 60_000) throw new Error(`no /health 200 within 60 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

beforeAll(async () => {
  const loadAtStart = loadavg()[0]!.toFixed(1);
  database = await createTestDatabase();
  settings = {
    ...containerSettings(ORIGIN),
    DATABASE_URL: database.url,
    REDIS_URL: sharedRedisUrl,
    REDIS_KEY_PREFIX: testPrefix(),
    PUBLIC_ORIGIN: ORIGIN,
    PARTNERS,
  };

  // A migrated database with an account, its login session and a world: the compiled container's
  // first start migrates it, and its API makes them.
  const port = await freePort();
  setup = spawn(process.execPath, [CONTAINER_BUNDLE], {
    cwd: root,
    env: { PATH: process.env.PATH, ...settings, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error' },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; !(await fetch(`${url}/health`).then((r) => r.ok, () => false)); i++) {
    if (i > 600) throw new Error('the setup container did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const player = new Browser(url);
  await benchSignUp({ url, outbox: settings.MAIL_OUTBOX_DIR! }, player, { email: `cold-${Date.now()}@example.com` });
  const world = JSON.parse(readFileSync(resolve(root, 'packages/world/samples/ashen-depths.json'), 'utf8'));
  const worldId = ((await (await player.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
  const exited = new Promise((r) => setup!.once('exit', r));
  setup.kill('SIGTERM');
  await exited;

  const cookie = player.cookieHeader;
  // Every event comes through the Router: it carries the Router's proof.
  const proof = { [PROXY_SECRET_HEADER]: PROXY_SECRET };
  const json = { 'content-type': 'application/json', ...proof };
  events = {
    partnerConfig: buildFunctionUrlEvent({ method: 'GET', url: '/api/partners/starfall/config', headers: proof }),
    partnerToken: buildFunctionUrlEvent({ method: 'POST', url: '/api/partners/starfall/token', headers: { cookie, origin: ORIGIN, ...proof } }),
    jwks: buildFunctionUrlEvent({ method: 'GET', url: '/api/auth/jwks', headers: proof }),
    worldUpdates: buildFunctionUrlEvent({ method: 'GET', url: `/api/worlds/${worldId}/updates`, headers: { cookie, ...proof } }),
    worldValidate: buildFunctionUrlEvent({ method: 'POST', url: '/api/worlds/validate', headers: json, body: JSON.stringify(world) }),
  };

  const lines = ['', `cold-start: what production runs, started cold (${RUNS} runs per path, interleaved), real PostgreSQL + Redis`];
  for (const route of FUNCTION_ROUTES) {
    const bytes = statSync(resolve(root, functionBundleFile(route))).size;
    lines.push(`  bundle ${route.folder.padEnd(15)} ${(bytes / 1024).toFixed(0).padStart(5)} KB (${bytes} bytes; goal ≤ 1 MB ${bytes <= 1_000_000 ? '✓' : '✗'})`);
  }
  const report = (label: string, compiled: Start[], tsx: Start[], goalMs: number) => {
    const c50 = quantile(compiled.map((s) => s.ms), 0.5);
    const t50 = quantile(tsx.map((s) => s.ms), 0.5);
    const range = (xs: Start[]) => `${ms(Math.min(...xs.map((s) => s.ms)))}–${ms(Math.max(...xs.map((s) => s.ms)))}`;
    const cpu = (xs: Start[]) => ms(quantile(xs.map((s) => s.cpuMs), 0.5));
    lines.push(
      `  ${label} compiled ${ms(c50)} p50 (${range(compiled)}; CPU ${cpu(compiled)}; goal ≤ ${goalMs} ms ${c50 <= goalMs ? '✓' : '✗'}), ` +
        `tsx ${ms(t50)} p50 (${range(tsx)}; CPU ${cpu(tsx)}): ${(t50 / c50).toFixed(1)}× faster`,
    );
  };
  for (const route of FUNCTION_ROUTES) {
    const compiled: Start[] = [];
    const tsx: Start[] = [];
    await functionColdStart(route, true); // the first start of anything pays for the disk cache
    for (let r = 0; r < RUNS; r++) {
      compiled.push(await functionColdStart(route, true));
      tsx.push(await functionColdStart(route, false));
    }
    report(`function ${route.folder.padEnd(15)}`, compiled, tsx, 250);
  }
  const compiled: Start[] = [];
  const tsx: Start[] = [];
  for (let r = 0; r < RUNS; r++) {
    compiled.push(await containerStart(true));
    tsx.push(await containerStart(false));
  }
  report('container to /health 200', compiled, tsx, 2000);
  lines.push(`  (1-minute load average ${loadAtStart} at the start, ${loadavg()[0]!.toFixed(1)} at the end)`);
  console.log(`${lines.join('\n')}\n`);
}, 1_800_000);

afterAll(async () => {
  setup?.kill('SIGKILL');
  await database?.drop();
});

describe('cold start of the compiled output', () => {
  const worldUpdates = FUNCTION_ROUTES.find((r) => r.function === 'worldUpdates')!;
  bench('world-updates bundle: fork to first answer', async () => void (await functionColdStart(worldUpdates, true)), { iterations: 5, time: 0 });
  bench('container bundle: process start to /health 200', async () => void (await containerStart(true)), { iterations: 3, time: 0 });
});
