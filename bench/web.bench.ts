import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { freePort } from '../tests/support/ports.ts';
import { Browser } from '../tests/support/server.ts';
import { baselineCheckout, ISSUE_32_BASELINE } from './baseline.ts';
import { benchSignUp } from './sign-up.ts';

/**
 * Issue 32: Lighthouse's mobile preset (a mid-range phone on slow 4G, simulated) with Debian's
 * Chromium against a production build served by `npm start` (embedded defaults, sample worlds on):
 * the home page, the library, a world page and the player of a sample world (signed in).
 * Goals: performance ≥ 95 on each, largest contentful paint ≤ 2.5 s, total blocking time ≤ 200 ms,
 * cumulative layout shift ≤ 0.05, accessibility 100.
 *
 * Today's figures beside them come from the baseline revision (WEB_BENCH_BASELINE, by default the
 * commit this work started from) checked out at run time as a git worktree under
 * .bench/baselines/<commit> and installed once (./baseline.ts); its `npm start` builds its web
 * app on first start. Both servers run at once; runs alternate between them (baseline, ours,
 * baseline, …) so load drift hits both alike; each page's figures are the median run by
 * performance score (WEB_BENCH_RUNS runs each, 3 by default). Prints `web:` lines and a table.
 *
 * `npm run bench:web` runs this file alone (~6 min on 2 cores).
 */
const BASELINE = process.env.WEB_BENCH_BASELINE ?? ISSUE_32_BASELINE;
const RUNS = Number(process.env.WEB_BENCH_RUNS ?? 3);
const CHROME = process.env.CHROME_PATH ?? '/usr/bin/chromium';
const root = resolve(import.meta.dirname, '..');
const WORLD = 'wld_sample_willow_street';
const PAGES = [
  { name: 'home', path: '/', signedIn: false },
  { name: 'library', path: '/library', signedIn: false },
  { name: 'world page', path: `/worlds/${WORLD}`, signedIn: false },
  { name: 'player (signed in)', path: `/play/${WORLD}`, signedIn: true },
] as const;
const GOALS = { performance: 95, lcpMs: 2500, tbtMs: 200, cls: 0.05, accessibility: 100 };

interface Figures {
  performance: number;
  accessibility: number;
  fcpMs: number;
  lcpMs: number;
  tbtMs: number;
  cls: number;
  /** JavaScript transferred (compressed bytes) on the page's load. */
  scriptBytes: number;
}

interface Served {
  label: string;
  url: string;
  cookie: string;
  process: ChildProcess;
  cleanup(): void;
}
const served: Served[] = [];

/** `npm start` (the container's main, production mode, embedded defaults) in `dir`, ready when the sample worlds are published. */
async function start(label: string, dir: string, cleanup: () => void): Promise<Served> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-web-bench-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'containers/api/src/main.ts'], {
    cwd: dir,
    env: { ...process.env, NODE_ENV: 'production', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SAMPLE_WORLDS: '1', DEMO_PARTNER_PORT: '0', DATABASE_URL: '', REDIS_URL: '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://localhost:${port}`;
  const deadline = Date.now() + 240_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${label}: the server exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error(`${label}: the server did not start in 240 s`);
    const worlds = await fetch(`${url}/api/library?pageSize=3`).then((r) => (r.ok ? (r.json() as Promise<{ worlds: unknown[] }>) : null), () => null);
    if (worlds && worlds.worlds.length > 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  // A player, with a session of the sample world already open (the player page then opens it, as a returning player's would).
  const player = new Browser(url);
  await benchSignUp({ url, dataDir }, player, { email: `bench-${Date.now()}@example.com`, password: 'a strong password', displayName: 'Bench Player', headers: { origin: url } });
  const cookie = player.cookieHeader;
  const session = await fetch(`${url}/api/worlds/${WORLD}/sessions`, { method: 'POST', headers: { cookie, origin: url } });
  if (session.status !== 201 && session.status !== 200) throw new Error(`${label}: opening a session answered ${session.status}`);
  return {
    label,
    url,
    cookie,
    process: child,
    cleanup: () => {
      cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One Lighthouse run (its CLI, mobile preset by default) of `url`. */
function lighthouse(url: string, cookie: string | null): Figures {
  const out = join(mkdtempSync(join(tmpdir(), 'yumina-lh-')), 'report.json');
  const args = [
    join(root, 'node_modules/lighthouse/cli/index.js'),
    url,
    '--quiet',
    '--only-categories=performance,accessibility',
    '--output=json',
    `--output-path=${out}`,
    '--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --disable-background-networking --disable-component-update --disable-sync --no-first-run --disable-quic',
    ...(cookie ? [`--extra-headers=${JSON.stringify({ Cookie: cookie })}`] : []),
  ];
  execFileSync(process.execPath, args, { env: { ...process.env, CHROME_PATH: CHROME }, stdio: ['ignore', 'ignore', 'pipe'] });
  const report = JSON.parse(readFileSync(out, 'utf8')) as {
    categories: Record<string, { score: number }>;
    audits: Record<string, { numericValue?: number; details?: { items?: { resourceType?: string; transferSize?: number }[] } }>;
    runtimeError?: { message: string };
  };
  rmSync(resolve(out, '..'), { recursive: true, force: true });
  if (report.runtimeError) throw new Error(`Lighthouse: ${report.runtimeError.message}`);
  const scripts = report.audits['network-requests']?.details?.items?.filter((i) => i.resourceType === 'Script') ?? [];
  return {
    performance: Math.round(report.categories.performance!.score * 100),
    accessibility: Math.round(report.categories.accessibility!.score * 100),
    fcpMs: report.audits['first-contentful-paint']!.numericValue!,
    lcpMs: report.audits['largest-contentful-paint']!.numericValue!,
    tbtMs: report.audits['total-blocking-time']!.numericValue!,
    cls: report.audits['cumulative-layout-shift']!.numericValue!,
    scriptBytes: scripts.reduce((sum, s) => sum + (s.transferSize ?? 0), 0),
  };
}

const medianRun = (runs: Figures[]): Figures => [...runs].sort((a, b) => a.performance - b.performance || b.lcpMs - a.lcpMs)[Math.floor(runs.length / 2)]!;
const show = (f: Figures) =>
  `performance ${f.performance}, LCP ${(f.lcpMs / 1000).toFixed(2)} s, TBT ${Math.round(f.tbtMs)} ms, CLS ${f.cls.toFixed(3)}, FCP ${(f.fcpMs / 1000).toFixed(2)} s, ` +
  `accessibility ${f.accessibility}, JS ${(f.scriptBytes / 1024).toFixed(0)} KB transferred`;
const meets = (f: Figures) => f.performance >= GOALS.performance && f.lcpMs <= GOALS.lcpMs && f.tbtMs <= GOALS.tbtMs && f.cls <= GOALS.cls && f.accessibility >= GOALS.accessibility;

beforeAll(async () => {
  const baseline = baselineCheckout(BASELINE);
  const [today, ours] = await Promise.all([start(`baseline ${BASELINE.slice(0, 7)}`, baseline, () => {}), start('this tree', root, () => {})]);
  served.push(today, ours);
  const results = new Map<string, { today: Figures[]; ours: Figures[] }>();
  // WEB_BENCH_PAGES=player (a comma-separated list of names' beginnings) runs some pages only.
  const only = process.env.WEB_BENCH_PAGES?.split(',');
  for (const page of PAGES.filter((p) => !only || only.some((o) => p.name.startsWith(o)))) {
    const runs = { today: [] as Figures[], ours: [] as Figures[] };
    for (let i = 0; i < RUNS; i++) {
      runs.today.push(lighthouse(today.url + page.path, page.signedIn ? today.cookie : null));
      runs.ours.push(lighthouse(ours.url + page.path, page.signedIn ? ours.cookie : null));
    }
    results.set(page.name, runs);
    const [a, b] = [medianRun(runs.today), medianRun(runs.ours)];
    console.log(`web: ${page.name}: ${show(b)} ${meets(b) ? '✓' : '✗'} goals | today ${show(a)} (median of ${RUNS} runs by score; all: ${runs.ours.map((r) => r.performance).join('/')} vs ${runs.today.map((r) => r.performance).join('/')})`);
  }
  console.log(`web: load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, Lighthouse mobile preset, ${CHROME}, baseline ${BASELINE}`);
  console.log('\n| page | performance | LCP | TBT | CLS | accessibility | JS transferred |\n|---|---|---|---|---|---|---|');
  for (const [name, runs] of results) {
    const [a, b] = [medianRun(runs.today), medianRun(runs.ours)];
    console.log(
      `| ${name} | **${b.performance}** (today ${a.performance}) | **${(b.lcpMs / 1000).toFixed(2)} s** (${(a.lcpMs / 1000).toFixed(2)} s) | **${Math.round(b.tbtMs)} ms** (${Math.round(a.tbtMs)} ms) | ` +
        `**${b.cls.toFixed(3)}** (${a.cls.toFixed(3)}) | **${b.accessibility}** (${a.accessibility}) | **${(b.scriptBytes / 1024).toFixed(0)} KB** (${(a.scriptBytes / 1024).toFixed(0)} KB) |`,
    );
  }
}, 1_800_000);

afterAll(async () => {
  for (const s of served) {
    s.process.kill('SIGTERM');
    await new Promise((r) => (s.process.exitCode !== null ? r(null) : s.process.once('exit', r)));
    s.cleanup();
  }
});

describe('web pages on a phone (Lighthouse mobile preset)', () => {
  // The figures are the Lighthouse runs above; this row times the shell's own answer for reference.
  bench('GET / (the shell, brotli)', async () => {
    const res = await fetch(served[1]!.url + '/', { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
    await res.arrayBuffer();
  }, { time: 500 });
});
