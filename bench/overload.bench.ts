import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import pg from 'pg';
import { parseEvents } from '../tests/support/collector.ts';
import { adminUrl } from '../tests/support/postgres.ts';
import { Browser } from '../tests/support/server.ts';
import { baselineCheckout, ISSUE_32_BASELINE } from './baseline.ts';
import { benchSignUp } from './sign-up.ts';
import { BenchChild } from './turn-ipc.ts';
import { RawConnection, serializeRequest } from './raw-http.ts';

/**
 * Issue 32: overload is shed early. 2,000 turns sent at once to one replica on real PostgreSQL and
 * Redis (the pool tests use: 10 connections), each on a session of its own (100 players × 20
 * sessions), against a loopback provider answering a short reply. Four processes: this one (the
 * players), the server (./overload-server.ts), the provider (./overload-provider.ts) and a prober
 * asking GET /health/live every 5 ms during the burst (./overload-prober.ts).
 * Goal: every turn completes or is refused (503 SERVER_BUSY, Retry-After) within 100 ms, none
 * waits out a timeout (DB_POOL_TIMEOUT, or a first byte after 5 s), /health/live p99 ≤ 50 ms
 * during the burst, and the server's event loop never stalls more than 100 ms.
 * Each server takes OVERLOAD_BENCH_BURSTS bursts (default 3), a second apart, each starting at other
 * players' sessions (those admitted first have not played yet); every burst has its line and its
 * verdict, the first being the replica's first overload since it started. Before them the server
 * serves three rounds of ten turns at once (every database connection has run a turn) and the
 * harness warms its own code (the players' two rounds of GET /health/live at once, the prober 2 s).
 * A refusal's time is taken where the player reads it (the first byte on its socket, from the
 * request's own write) and, beside it, where the server wrote it (its response's 'finish').
 * A summary line per server counts the bursts that met the goal.
 * Today's figures come from the baseline revision (OVERLOAD_BENCH_BASELINE, by default the commit
 * issue 32's work started from), checked out at run time (./baseline.ts) and measured by the same
 * harness first (OVERLOAD_BENCH_BASELINE=none: this tree alone). Prints `overload:` lines.
 * The players (this process) and the provider run under SCHED_BATCH (schedule(), below): their
 * wake-ups never preempt the server, as on a deployment where they are other machines.
 * OVERLOAD_BENCH_DEBUG=1 prints each probe's send, its wait before the server read it, the server's
 * time on it and the way back; ADMISSION_* settings in the environment reach the server.
 * OVERLOAD_BENCH_TURNS changes the burst's size; OVERLOAD_BENCH_PROFILE=<file> writes a CPU profile
 * of this tree's server during each burst to <file>.<burst> (./overload-server.ts),
 * OVERLOAD_BENCH_CLIENT_PROFILE=<file> one of the players' process.
 */
const TURNS = Number(process.env.OVERLOAD_BENCH_TURNS ?? 2000);
const BURSTS = Number(process.env.OVERLOAD_BENCH_BURSTS ?? 3);
/** Turns at once in a warm-up round: the server's pool size (overload-server.ts). */
const WARM_TURNS = 10;
const PLAYERS = 100;
const BASELINE = process.env.OVERLOAD_BENCH_BASELINE ?? ISSUE_32_BASELINE;
/** The sample world each side plays: its own tree's copy (a sample that changed since the baseline may not validate there). */
const worldOf = (server: URL) => JSON.parse(readFileSync(new URL('../packages/world/samples/ashen-depths.json', server), 'utf8')) as unknown;

interface Outcome {
  kind: 'completed' | 'refused' | 'failed';
  /** When its request was handed to the kernel (its write returned), ms after the burst began. */
  sentMs: number;
  /** First byte of the answer (headers), ms after the burst began. */
  answeredMs: number;
  /** The end of the answer (the reply's last event for a completed turn). */
  endedMs: number;
  code: string;
}

/**
 * The players' client: one raw keep-alive connection per turn, opened before the burst (players
 * whose browsers already talk to the site), each request serialized ahead and written in one call
 * (./raw-http.ts). The 2,000 players stand for 2,000 browsers, each with its own CPU; so the
 * client's own work per request must be as small as can be, or its queue is measured as the
 * server's. (Global fetch made 2,000 requests at once cost the players' process ~0.9 s before the
 * first reached the server; node:http's client on keep-alive connections still ~100 µs per request
 * and answer, which delayed both the 'finish' taken as the send and the answer's reading by up to
 * ~0.1 s behind what the socket saw.)
 */
async function openConnections(url: string, n: number): Promise<RawConnection[]> {
  const { port, hostname } = new URL(url);
  const probe = serializeRequest('GET', `${url}/health/live`, {});
  return Promise.all(
    Array.from({ length: n }, async () => {
      const connection = await RawConnection.open(Number(port), hostname);
      const { status } = await connection.send(probe).response;
      if (status !== 200) throw new Error(`GET /health/live answered ${status}`);
      return connection;
    }),
  );
}

/** A turn's request: its path (how the server's records name it) and its bytes, serialized ahead with the player's cookie, the JSON body and its length. */
interface TurnRequest {
  path: string;
  bytes: Buffer;
}

function prepared(url: string, player: Browser, session: string): TurnRequest {
  const path = `/api/sessions/${session}/messages`;
  const body = Buffer.from(JSON.stringify({ content: 'I light a torch.' }));
  const headers = { cookie: player.cookieHeader, 'content-type': 'application/json', 'x-forwarded-for': addressOf(player) };
  return { path, bytes: serializeRequest('POST', `${url}${path}`, headers, body) };
}

/**
 * Each player's own client address, as the load balancer in front of a replica names it
 * (X-Forwarded-For; the server trusts its loopback hop, overload-server.ts): 100 browsers are 100
 * addresses, and the admission queue's share per client address (issue 43) applies to each, not to
 * the whole burst as if it came from one client.
 */
const addresses = new Map<Browser, string>();
const addressOf = (player: Browser): string => {
  let address = addresses.get(player);
  if (!address) addresses.set(player, (address = `198.18.${Math.floor(addresses.size / 250)}.${(addresses.size % 250) + 1}`));
  return address;
};

/** Sends one turn on `connection` and classifies its answer: a reply ending with `done`, a 503 SERVER_BUSY with Retry-After, or a failure. */
function turn(connection: RawConnection, request: Buffer, start: number): Promise<Outcome> {
  const { sentAt, response } = connection.send(request);
  const sentMs = sentAt - start;
  return response.then(
    (res) => {
      const answeredMs = res.firstByteAt - start;
      const endedMs = res.endedAt - start;
      const text = res.body.toString('utf8');
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        const events = parseEvents(text);
        const error = events.find((e) => e.event === 'error');
        if (error) return { kind: 'failed', sentMs, answeredMs, endedMs, code: String((error.data as { code?: string }).code ?? 'ERROR_EVENT') };
        const last = events.at(-1)?.event;
        return { kind: last === 'done' ? 'completed' : 'failed', sentMs, answeredMs, endedMs, code: last ?? 'NO_EVENTS' };
      }
      let code = `HTTP_${res.status}`;
      try {
        code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? code;
      } catch {
        // not JSON: the status stands for it
      }
      const refused = res.status === 503 && code === 'SERVER_BUSY' && Number(res.headers['retry-after']) > 0;
      return { kind: refused ? 'refused' : 'failed', sentMs, answeredMs, endedMs, code };
    },
    (err: Error & { code?: string }) => {
      const at = performance.now() - start;
      return { kind: 'failed', sentMs, answeredMs: at, endedMs: at, code: err.code ?? 'NETWORK' };
    },
  );
}

let providerUrl = '';
const children: BenchChild[] = [];

/** Players (each with their own AI connection to the provider and a world) and `TURNS` sessions spread over them. */
async function prepare(url: string, dataDir: string, world: unknown): Promise<{ player: Browser; session: string }[]> {
  const sessions: { player: Browser; session: string }[] = [];
  const perPlayer = Math.ceil(TURNS / PLAYERS);
  const queue = Array.from({ length: PLAYERS }, (_, i) => i);
  const worker = async () => {
    for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
      const player = new Browser(url);
      await benchSignUp({ url, dataDir }, player, { email: `overload-${i}-${Date.now()}@example.com` });
      const ai = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: providerUrl, defaultModel: 'm', apiKey: 'sk-bench' } });
      if (!ai.ok) throw new Error(`AI settings: ${ai.status} ${await ai.text()}`);
      const created = await player.fetch('/api/worlds', { method: 'POST', json: { world } });
      if (created.status !== 201) throw new Error(`world: ${created.status} ${await created.text()}`);
      const { id } = (await created.json()) as { id: string };
      for (let s = 0; s < perPlayer && sessions.length < TURNS; s++) {
        const res = await player.fetch(`/api/worlds/${id}/sessions`, { method: 'POST' });
        if (res.status !== 201) throw new Error(`session: ${res.status} ${await res.text()}`);
        sessions.push({ player, session: ((await res.json()) as { session: { id: string } }).session.id });
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return sessions;
}

const pct = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
};

/**
 * A quiet PostgreSQL for each server measured: the one before it wrote thousands of turns (today's
 * server completes all 6,000) and dropped its database, and the cluster's checkpoint of that work
 * would otherwise land in the next server's bursts. CHECKPOINT writes it out now; then a pause.
 */
async function settleDatabase(): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
  await new Promise((r) => setTimeout(r, 2000));
}

/** BURSTS bursts against the server of `file` (this tree's or the baseline checkout's copy of overload-server.ts), a second apart: their figures' lines. */
async function measure(label: string, file: URL): Promise<string[]> {
  await settleDatabase();
  const [{ child: server, ready }, { child: prober }] = await Promise.all([BenchChild.start(`${label} server`, file), BenchChild.start('prober', new URL('./overload-prober.ts', import.meta.url))]);
  schedule(server.child.pid!, 'other');
  schedule(prober.child.pid!, 'other');
  children.push(server, prober);
  const url = String(ready.url);
  const sessions = await prepare(url, String(ready.dataDir), worldOf(file));
  const requests = sessions.map(({ player, session }) => prepared(url, player, session));
  // Warm-up, as a replica that has been serving: rounds of WARM_TURNS turns at once (as many as the
  // pool has connections, so that every database connection has run a turn's statements: a
  // PostgreSQL backend's first statements on each table load its catalog caches), each round on
  // sessions of its own; then one open connection per turn of the burst.
  const warm = await openConnections(url, WARM_TURNS);
  // A turn refused (the server still busy with what came before) is sent again a moment later.
  const one = async (c: RawConnection, request: Buffer) => {
    for (let attempt = 0; ; attempt++) {
      const outcome = await turn(c, request, performance.now());
      if (outcome.kind === 'completed') return;
      if (outcome.kind === 'failed' || attempt === 10) throw new Error(`warm-up: a turn ended ${outcome.kind} (${outcome.code})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  for (let round = 0; round < 3; round++) {
    await Promise.all(warm.map((c, i) => one(c, requests[round * WARM_TURNS + i]!.bytes)));
  }
  for (const c of warm) c.close();
  const connections = await openConnections(url, requests.length);
  // The harness's own processes warmed too (they stand for 2,000 browsers and a load balancer, each
  // on a machine of its own, whose code is compiled long before): the prober probes for 2 s, and
  // the players send two rounds of GET /health/live at once through the code that sends the turns.
  await prober.request('probe-start', { url });
  const liveness = serializeRequest('GET', `${url}/health/live`, {});
  for (let round = 0; round < 2; round++) {
    const start = performance.now();
    await Promise.all(connections.map((c) => turn(c, liveness, start)));
  }
  await new Promise((r) => setTimeout(r, 2000));
  await prober.request('probe-stop');
  const lines: string[] = [];
  for (let b = 0; b < BURSTS; b++) {
    if (b > 0) await new Promise((r) => setTimeout(r, 1000));
    // Each burst starts at another player's sessions: those admitted first have not played yet.
    const shift = Math.floor((b * requests.length) / BURSTS);
    const turns = [...requests.slice(shift), ...requests.slice(0, shift)];
    lines.push(await burst(BURSTS > 1 ? `${label}, burst ${b + 1} of ${BURSTS}` : label, b + 1, server, prober, url, turns, connections));
  }
  for (const c of connections) c.close();
  await Promise.all([server.stop(), prober.stop()]);
  const met = lines.filter((l) => l.endsWith('goal MET')).length;
  console.log(`overload: ${label}: goal met in ${met} of ${lines.length} bursts`);
  return lines;
}

/** One burst of `turns` on `connections` (one each), with the server's stall and the prober's latencies over it; the figures' line. */
async function burst(label: string, index: number, server: BenchChild, prober: BenchChild, url: string, turns: TurnRequest[], connections: RawConnection[]): Promise<string> {
  await server.request('stall-reset');
  await prober.request('probe-start', { url });
  const clientProfile = process.env.OVERLOAD_BENCH_CLIENT_PROFILE;
  const profiler = clientProfile ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const start = performance.now();
  const startEpoch = performance.timeOrigin + start;
  const pending = turns.map((t, i) => turn(connections[i]!, t.bytes, start));
  const issuedMs = performance.now() - start;
  const outcomes = await Promise.all(pending);
  if (profiler && clientProfile) {
    writeFileSync(`${clientProfile}.${index}`, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    profiler.disconnect();
  }
  const probe = await prober.request<{ p50: number; p99: number; max: number; count: number; failed: number; trace: [number, number][] }>('probe-stop');
  const stall = await server.request<{ maxMs: number; p99Ms: number }>('stall');
  const arrived = (await server.request<number[]>('arrivals')).map((t) => t - startEpoch);
  const answers = await server.request<Record<string, number>>('answers');
  if (process.env.OVERLOAD_BENCH_DEBUG) {
    const seen = await server.request<[number, number][]>('probes');
    const rows = probe.trace.map(([sentAt, endedAt], i) => {
      const [at, fin] = seen[i] ?? [Number.NaN, Number.NaN];
      return `sent ${(sentAt - startEpoch).toFixed(1)} wait ${(at - sentAt).toFixed(1)} in ${(fin - at).toFixed(2)} back ${(endedAt - fin).toFixed(1)} = ${(endedAt - sentAt).toFixed(1)}`;
    });
    console.log(`probes (${seen.length} seen):\n  ${rows.join('\n  ')}`);
  }
  const written = outcomes.map((o, i) => (answers[turns[i]!.path] ?? Number.NaN) - startEpoch);

  const of = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind);
  const [completed, refused, failed] = [of('completed'), of('refused'), of('failed')];
  const codes = Object.entries(failed.reduce<Record<string, number>>((acc, o) => ((acc[o.code] = (acc[o.code] ?? 0) + 1), acc), {}))
    .map(([code, n]) => `${n} ${code}`)
    .join(', ');
  // From each request's own send (its write), and from the burst's start.
  const own = (o: Outcome, at: number) => at - (Number.isNaN(o.sentMs) ? 0 : o.sentMs);
  const ms = (x: number) => x.toFixed(0);
  const timedOut = outcomes.filter((o) => o.code === 'DB_POOL_TIMEOUT' || own(o, o.answeredMs) > 5000).length;
  const slowRefusals = refused.filter((o) => own(o, o.endedMs) > 100).length;
  const refusedWritten = outcomes.flatMap((o, i) => (o.kind === 'refused' ? [written[i]! - o.sentMs] : []));
  const sent = outcomes.map((o) => o.sentMs).filter((t) => !Number.isNaN(t));
  const met = failed.length === 0 && timedOut === 0 && slowRefusals === 0 && probe.p99 <= 50 && stall.maxMs <= 100;
  const line =
    `overload: ${label}: ${outcomes.length} turns at once (issued in ${ms(issuedMs)} ms, sent ${ms(pct(sent, 0))}–${ms(pct(sent, 1))} ms after the burst began): ` +
    `${completed.length} completed (first byte from its own send p50 ${ms(pct(completed.map((o) => own(o, o.answeredMs)), 0.5))} ms, p99 ${ms(pct(completed.map((o) => own(o, o.answeredMs)), 0.99))} ms, max ${ms(pct(completed.map((o) => own(o, o.answeredMs)), 1))} ms; ` +
    `done p99 ${ms(pct(completed.map((o) => own(o, o.endedMs)), 0.99))} ms; from the burst's start: first byte p99 ${ms(pct(completed.map((o) => o.answeredMs), 0.99))} ms, done max ${ms(pct(completed.map((o) => o.endedMs), 1))} ms), ` +
    `${refused.length} refused 503 (from its own send p99 ${ms(pct(refused.map((o) => own(o, o.endedMs)), 0.99))} ms, max ${ms(pct(refused.map((o) => own(o, o.endedMs)), 1))} ms, over 100 ms: ${slowRefusals}; written by the server p99 ${ms(pct(refusedWritten, 0.99))} ms, max ${ms(pct(refusedWritten, 1))} ms after its send, over 100 ms: ${refusedWritten.filter((t) => !(t <= 100)).length}; from the burst's start max ${ms(pct(refused.map((o) => o.endedMs), 1))} ms), ` +
    `${failed.length} failed${codes ? ` (${codes})` : ''}; waited out a timeout (DB_POOL_TIMEOUT or first byte > 5 s after its send): ${timedOut}; ` +
    `/health/live p50 ${probe.p50.toFixed(1)} ms, p99 ${probe.p99.toFixed(1)} ms, max ${probe.max.toFixed(0)} ms (${probe.count} probes, ${probe.failed} failed); ` +
    `longest event-loop stall ${stall.maxMs.toFixed(0)} ms; burst ${(performance.now() - start).toFixed(0)} ms; ` +
    `requests reached the server ${ms(pct(arrived, 0))}–${ms(pct(arrived, 1))} ms after the burst began (p50 ${ms(pct(arrived, 0.5))} ms); goal ${met ? 'MET' : 'NOT met'}`;
  console.log(line);
  return line;
}

/**
 * Sets a process's Linux scheduling policy (all its threads). The players (this process) and the
 * provider stand for machines of their own, and run under SCHED_BATCH: a batch task that wakes up
 * never preempts the task running on its CPU, and still gets its fair share of the CPUs. Otherwise
 * each answer the server writes wakes the players' process, which (a task that slept) takes the
 * CPU from the server in the middle of its burst, and so does the provider at each call; on a
 * real deployment neither runs on the server's CPUs. The server and the prober are forked from
 * this process and would inherit the policy: they are set back to the normal one (SCHED_OTHER),
 * as is PostgreSQL's (the machine's own). OVERLOAD_BENCH_BATCH=0 leaves every process normal.
 */
function schedule(pid: number, policy: 'batch' | 'other'): void {
  if (process.env.OVERLOAD_BENCH_BATCH === '0' || !scheduling) return;
  try {
    execFileSync('chrt', ['--all-tasks', `--${policy}`, '--pid', '0', String(pid)], { stdio: 'pipe' });
  } catch (err) {
    // Not Linux, or no chrt (util-linux): every process stays as it is, and the figures say so.
    scheduling = false;
    console.log(`overload: the players could not be set to SCHED_BATCH (${(err as Error).message.split('\n')[0]}); they may preempt the server`);
  }
}
let scheduling = true;

beforeAll(async () => {
  const { child: provider, ready } = await BenchChild.start('provider', new URL('./overload-provider.ts', import.meta.url));
  children.push(provider);
  schedule(process.pid, 'batch');
  schedule(provider.child.pid!, 'batch');
  providerUrl = String(ready.url);
  // Today: the baseline revision's server, with this harness's server file copied into its checkout
  // (written again on every run, so the checkout always holds this tree's harness).
  // OVERLOAD_BENCH_BASELINE=none measures this tree alone.
  if (BASELINE !== 'none') {
    const baseline = baselineCheckout(BASELINE);
    copyFileSync(resolve(import.meta.dirname, 'overload-server.ts'), join(baseline, 'bench/overload-server.ts'));
    await measure(`today (${BASELINE.slice(0, 7)})`, pathToFileURL(join(baseline, 'bench/overload-server.ts')));
    await provider.request('reset');
  }
  await measure('this tree', new URL('./overload-server.ts', import.meta.url));
}, 1_200_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
});

describe('overload', () => {
  bench('noop (figures are the overload: lines above)', () => {}, { time: 10, iterations: 1 });
});
