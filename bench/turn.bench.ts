import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { Browser } from '../tests/support/server.ts';
import type { MailServer } from '../tests/support/sign-up.ts';
import { type BaselineServer, baselineCheckout, PREVIOUS_RELEASE, processCpu, startBaselineServer } from './baseline.ts';
import { BENCH_ADMISSION, turnCpuAllowance } from './turn-guard.ts';
import { benchSignUp } from './sign-up.ts';
import { BenchChild } from './turn-ipc.ts';

/**
 * Issue 24 benchmark: one turn end to end through the HTTP API (send a message, read the streamed
 * reply to its end) on real PostgreSQL and Redis, with a loopback OpenAI-compatible provider that
 * streams a fixed ~300-token reply (100 chunks). Three processes, as a deployment has three
 * machines, so that none blocks the others' event loop or is charged with their CPU:
 *  - the provider (./turn-provider.ts, forked): the fake provider (tests/support/fake-openai.ts);
 *  - the server (./turn-server.ts, forked, with this process's environment): the container on a
 *    fresh database;
 *  - today's server (./baseline.ts): the platform at BASELINE, the last commit before the
 *    issue-24 rework of the turn, checked out as a git worktree under .bench/baselines/ (installed
 *    once, then reused) and run from its own source in a process of its own, on a fresh database
 *    of the same PostgreSQL and the same Redis (TURN_BENCH_REVISION=<commit> names another);
 *  - this process: the client (signups, settings, worlds, sessions, the turns, the report).
 * Three paths run interleaved in one run, in rotating order, at concurrency 1, 10 and 50 (one
 * session per account, N accounts):
 *  - `provider`: the same provider called directly (the floor: what a turn costs without us);
 *  - `today`: POST /api/sessions/:id/messages as BASELINE serves it (everything of that revision:
 *    the send path, the provider client, the turn lock, token counting, prompt assembly);
 *  - `new`: POST /api/sessions/:id/messages as the server serves it now.
 * Printed as `turn:` lines: time-to-first-token overhead over the provider alone (p50, p99),
 * turns per second, and server CPU milliseconds per turn: the CPU (user + system, read from
 * /proc/<pid>/stat before and after each phase) of the server process of that path during its
 * phases divided by their turns. It includes the process's idle share (GC, timers) and nothing of
 * the provider's, the client's or the other server's work. A last line per concurrency gives the provider
 * process's CPU per call in each path, for information (it grows with the prompt it parses).
 * Goals: CPU per turn ≤ 0.5× today's, TTFT overhead ≤ 5 ms p50 at concurrency 1, turns/s at
 * concurrency 50 ≥ 2× today's.
 * TURN_BENCH_PROFILE=<file.cpuprofile> writes a CPU profile of the server process during runs of
 * the new path alone (TURN_BENCH_PROFILE_CONCURRENCY sets their concurrency).
 */
const ACCOUNTS = 50;
/**
 * TURN_BENCH_GUARD=1 (`npm run bench:turn-guard`): the regression guard of issue 51, point 9. The
 * baseline is the previous release (bench/baseline.ts PREVIOUS_RELEASE) and the bench fails when
 * this tree's server CPU per turn, the median of its three concurrencies' ratios, is above the
 * allowance: 1.10× (the spread between runs of one revision on a shared machine), or what
 * docs/BENCHMARKS.md allows with its reason written beside it (./turn-guard.ts).
 */
const GUARD = process.env.TURN_BENCH_GUARD === '1';
/** The last commit before the issue-24 rework of the turn (6e23461 started it), or in guard mode the previous release. */
const BASELINE = process.env.TURN_BENCH_REVISION ?? (GUARD ? PREVIOUS_RELEASE : 'b8579489e989940ce24ceb674d01c8435c6e8e4a');
const sample = JSON.parse(readFileSync(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

type Path = 'provider' | 'today' | 'new';
interface Player {
  browser: Browser;
  /** The same player on today's server (an account, a world and sessions of its own there). */
  legacy: Browser;
  worldId: string;
  legacyWorldId: string;
  sessions: Record<'today' | 'new', string>;
}
interface Cpu {
  user: number;
  system: number;
}

let serverChild: BenchChild | undefined;
let providerChild: BenchChild | undefined;
let baseline: BaselineServer | undefined;
/** Rejects when today's server exits. */
let baselineExited: Promise<never> | undefined;
let serverUrl = '';
let providerUrl = '';
let chunks = 0;
const players: Player[] = [];

/** Reads an SSE response to its end; returns ms from the request to the first reply text. */
async function readTurn(res: Response, started: number, firstMarker: string, endMarker: string): Promise<number> {
  if (res.status !== 200 || !res.body) throw new Error(`turn failed: ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let first = 0;
  let tail = '';
  let ended = false;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const text = tail + decoder.decode(chunk, { stream: true });
    if (!first && text.includes(firstMarker)) first = performance.now() - started;
    if (!ended && text.includes(endMarker)) ended = true;
    tail = text.slice(-200);
  }
  if (!ended || tail.includes('event: error')) throw new Error(`turn did not finish: ${tail}`);
  return first;
}

/**
 * What the provider is asked when called alone: the prompt the server sent last (as big as a turn's:
 * the world's prompt and the history), so the overhead is the server's own time and not the
 * provider's reading of a larger request. TURN_BENCH_BASELINE=short asks with one short message instead.
 */
const SHORT_PROMPT = [{ role: 'user', content: 'I walk on.' }];
let baselinePrompt: unknown[] = SHORT_PROMPT;

async function oneTurn(path: Path, player: Player): Promise<number> {
  const started = performance.now();
  if (path === 'provider') {
    const res = await fetch(`${providerUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer any-key', 'x-bench-direct': '1' },
      body: JSON.stringify({ model: 'story-model', stream: true, stream_options: { include_usage: true }, messages: baselinePrompt }),
    });
    return readTurn(res, started, '"content":"The', '[DONE]');
  }
  const client = path === 'today' ? player.legacy : player.browser;
  const res = await client.fetch(`/api/sessions/${player.sessions[path]}/messages`, { method: 'POST', json: { content: 'I walk on.' } });
  return readTurn(res, started, 'event: delta', 'event: done').catch((err: Error) => {
    throw new Error(`${path === 'today' ? `today's server (${BASELINE.slice(0, 7)})` : 'this tree'}: ${err.message}`);
  });
}

/**
 * `work`, failing as soon as a child process fails (with its message) instead of hanging on it; when
 * the work fails first (a refused connection, a cut stream) but a child fails within a second, the
 * child's failure is what is reported.
 */
async function watched<T>(work: Promise<T>): Promise<T> {
  const children = [serverChild!.failed, providerChild!.failed, baselineExited!];
  try {
    return await Promise.race([work, ...children]);
  } catch (err) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([...children, new Promise((resolve) => (timer = setTimeout(resolve, 1000)))]).catch((childErr: Error) => {
      throw new Error(`${childErr.message} (${(err as Error).message})`, { cause: err });
    }).finally(() => clearTimeout(timer));
    throw err;
  }
}

const cpuMsSince = (before: Cpu, after: Cpu) => (after.user - before.user + after.system - before.system) / 1000;

interface Phase {
  ttft: number[];
  turns: number;
  wallMs: number;
  /** The path's server process's CPU during the phase. */
  cpuMs: number;
  /** The provider process's CPU during the phase. */
  providerCpuMs: number;
}

/** `perWorker` turns in each of `concurrency` sessions at once. */
async function phase(path: Path, concurrency: number, perWorker: number): Promise<Phase> {
  const ttft: number[] = [];
  const serverPid = path === 'today' ? baseline!.pid : serverChild!.child.pid!;
  const serverBefore = processCpu(serverPid);
  const providerBefore = await providerChild!.request<Cpu>('cpu');
  const started = performance.now();
  await watched(
    Promise.all(
      players.slice(0, concurrency).map(async (player) => {
        for (let i = 0; i < perWorker; i++) ttft.push(await oneTurn(path, player));
      }),
    ),
  );
  const wallMs = performance.now() - started;
  const serverAfter = processCpu(serverPid);
  const providerAfter = await providerChild!.request<Cpu>('cpu');
  if (path === 'new' && process.env.TURN_BENCH_BASELINE !== 'short') baselinePrompt = (await providerChild!.request<unknown[] | null>('last-prompt')) ?? SHORT_PROMPT;
  await providerChild!.request('reset'); // the loopback provider records requests: keep its memory flat
  return { ttft, turns: concurrency * perWorker, wallMs, cpuMs: cpuMsSince(serverBefore, serverAfter), providerCpuMs: cpuMsSince(providerBefore, providerAfter) };
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const median = (xs: number[]) => quantile(xs, 0.5);

/** Fresh sessions for both server paths (history stays comparable: both grow by the same turns). */
async function freshSessions(): Promise<void> {
  for (const player of players) {
    const today = await player.legacy.fetch(`/api/worlds/${player.legacyWorldId}/sessions`, { method: 'POST' });
    player.sessions.today = ((await today.json()) as { session: { id: string } }).session.id;
    const now = await player.browser.fetch(`/api/worlds/${player.worldId}/sessions`, { method: 'POST' });
    player.sessions.new = ((await now.json()) as { session: { id: string } }).session.id;
  }
}

beforeAll(async () => {
  // Today's code: checked out and installed on first use, then reused.
  baseline = await startBaselineServer(baselineCheckout(BASELINE), { SIGNUP_RATE_LIMIT_PER_HOUR: '1000', PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: '100000', ...BENCH_ADMISSION, DATABASE_POOL_MAX: '20', AI_PRIVATE_NETWORK_ACCESS: 'allow' });
  const child = baseline.child;
  baselineExited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`today's server (${BASELINE}) exited (${code})`))));
  baselineExited.catch(() => {});
  const [provider, server] = await Promise.allSettled([
    BenchChild.start('provider', new URL('./turn-provider.ts', import.meta.url)),
    BenchChild.start('server', new URL('./turn-server.ts', import.meta.url)),
  ]);
  if (provider.status === 'fulfilled') providerChild = provider.value.child;
  if (server.status === 'fulfilled') serverChild = server.value.child;
  if (provider.status === 'rejected') throw provider.reason;
  if (server.status === 'rejected') throw server.reason;
  const providerReady = provider.value.ready;
  const serverReady = server.value.ready;
  providerUrl = String(providerReady.url);
  chunks = Number(providerReady.chunks);
  serverUrl = String(serverReady.url);
  const serverDataDir = String(serverReady.dataDir);
  const stamp = Date.now();
  /** An account with the provider connected and the sample world, on one server. */
  const player = async (server: MailServer, i: number) => {
    const browser = new Browser(server.url);
    await watched(benchSignUp(server, browser, { email: `turn${i}-${stamp}@example.com` }));
    await browser.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'any-key' } });
    const world = (await (await browser.fetch('/api/worlds', { method: 'POST', json: { world: sample } })).json()) as { id: string };
    return { browser, worldId: world.id };
  };
  for (let i = 0; i < ACCOUNTS; i++) {
    const [now, today] = await Promise.all([player({ url: serverUrl, dataDir: serverDataDir }, i), player(baseline, i)]);
    players.push({ browser: now.browser, worldId: now.worldId, legacy: today.browser, legacyWorldId: today.worldId, sessions: { today: '', new: '' } });
  }
  await watched(freshSessions());
  if (process.env.TURN_BENCH_PROFILE) {
    // TURN_BENCH_PROFILE=<file.cpuprofile>: a CPU profile of the server process during the new path alone (concurrency 10), for where the time goes.
    for (const path of ['today', 'new'] as const) await phase(path, 10, 2);
    await serverChild!.request('profile-start');
    const c = Number(process.env.TURN_BENCH_PROFILE_CONCURRENCY ?? 10);
    for (let r = 0; r < 5; r++) await phase('new', c, Math.ceil(40 / c));
    await serverChild!.request('profile-stop', { file: process.env.TURN_BENCH_PROFILE });
    await watched(freshSessions());
  }

  const paths: Path[] = ['provider', 'today', 'new'];
  const lines = ['', `turn: one turn through the HTTP API (~300-token reply in ${chunks} chunks, real PostgreSQL + Redis), interleaved rounds in rotating order; today = ${BASELINE.slice(0, 7)}`];
  const tps: Record<Path, number[]> = { provider: [], today: [], new: [] };
  const cpuRatios: number[] = [];
  for (const [concurrency, perWorker, rounds] of [
    [1, 40, 6],
    [10, 4, 6],
    [50, 2, 6],
  ] as const) {
    for (const path of paths) await phase(path, concurrency, 2); // warm-up
    const all: Record<Path, Phase[]> = { provider: [], today: [], new: [] };
    for (let r = 0; r < rounds; r++) {
      const order = [...paths.slice(r % 3), ...paths.slice(0, r % 3)];
      for (const path of order) all[path].push(await phase(path, concurrency, perWorker));
    }
    const sum = (list: Phase[], key: 'turns' | 'wallMs' | 'cpuMs' | 'providerCpuMs') => list.reduce((s, p) => s + p[key], 0);
    const report: Record<Path, { p50: number; p99: number; tps: number; cpu: number; providerCpu: number }> = {} as never;
    for (const path of paths) {
      const ttft = all[path].flatMap((p) => p.ttft);
      const perRound = all[path].map((p) => (p.turns * 1000) / p.wallMs);
      tps[path].push(median(perRound));
      report[path] = {
        p50: quantile(ttft, 0.5),
        p99: quantile(ttft, 0.99),
        tps: median(perRound),
        cpu: sum(all[path], 'cpuMs') / sum(all[path], 'turns'),
        providerCpu: sum(all[path], 'providerCpuMs') / sum(all[path], 'turns'),
      };
    }
    const base = report.provider;
    const show = (path: 'today' | 'new') =>
      `${path} TTFT +${(report[path].p50 - base.p50).toFixed(1)} ms p50 / +${(report[path].p99 - base.p99).toFixed(1)} ms p99, ` +
      `${report[path].tps.toFixed(0)} turns/s, ${report[path].cpu.toFixed(2)} ms server CPU/turn`;
    cpuRatios.push(report.new.cpu / report.today.cpu);
    lines.push(
      `  concurrency ${String(concurrency).padStart(2)}: provider alone TTFT ${base.p50.toFixed(2)} ms p50, ${base.tps.toFixed(0)} streams/s (asked with ${baselinePrompt === SHORT_PROMPT ? 'one short message' : `the server's last prompt, ${(JSON.stringify(baselinePrompt).length / 1024).toFixed(0)} KB`})`,
      `                  ${show('today')}`,
      `                  ${show('new')}`,
      // issue 24's goals are against its own baseline; the guard's allowance is printed once below
      `                  new/today: CPU per turn ${(report.new.cpu / report.today.cpu).toFixed(2)}×${GUARD ? '' : ' (goal ≤ 0.5×)'}, turns/s ${(report.new.tps / report.today.tps).toFixed(2)}×` +
        (concurrency === 50 && !GUARD ? ' (goal ≥ 2×)' : '') +
        (concurrency === 1 ? `; TTFT overhead p50 ${(report.new.p50 - base.p50).toFixed(1)} ms${GUARD ? '' : ' (goal ≤ 5 ms)'}` : ''),
      `                  (provider process CPU per call: ${base.providerCpu.toFixed(2)} ms alone, ${report.today.providerCpu.toFixed(2)} ms for today, ${report.new.providerCpu.toFixed(2)} ms for new)`,
    );
    await watched(freshSessions());
  }
  console.log(`${lines.join('\n')}\n`);
  if (GUARD) {
    const allowance = turnCpuAllowance(readFileSync(new URL('../docs/BENCHMARKS.md', import.meta.url), 'utf8'));
    const ratio = median(cpuRatios);
    const verdict = `turn: guard: server CPU per turn ${ratio.toFixed(2)}× the previous release (${BASELINE.slice(0, 7)}; ${cpuRatios.map((r) => r.toFixed(2)).join(' / ')} at concurrency 1 / 10 / 50), allowed ${allowance.ratio.toFixed(2)}× (${allowance.reason})`;
    console.log(verdict);
    if (ratio > allowance.ratio) throw new Error(`${verdict}: a change raised the CPU of a turn. Find the cause, or write the reason in docs/BENCHMARKS.md as a line "turn-cpu-allowance: <ratio>× — <reason>".`);
  }
}, 900_000);

afterAll(async () => {
  await Promise.all([serverChild?.stop(), providerChild?.stop(), baseline?.stop()]);
});

describe('turn: one turn through the HTTP API, concurrency 1', () => {
  bench('provider alone (baseline)', async () => void (await oneTurn('provider', players[0]!)), { time: 1500, warmupTime: 200 });
  bench(`today's send path (${BASELINE.slice(0, 7)}, its own server)`, async () => void (await oneTurn('today', players[1]!)), { time: 1500, warmupTime: 200 });
  bench('POST /api/sessions/:id/messages', async () => void (await oneTurn('new', players[2]!)), { time: 1500, warmupTime: 200 });
});
