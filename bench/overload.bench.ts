import { copyFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { readEvents } from '../tests/support/collector.ts';
import { Browser } from '../tests/support/server.ts';
import { baselineCheckout, ISSUE_32_BASELINE } from './baseline.ts';
import { benchSignUp } from './sign-up.ts';
import { BenchChild } from './turn-ipc.ts';

/**
 * Issue 32: overload is shed early. 2,000 turns sent at once to one replica on real PostgreSQL and
 * Redis (the pool tests use: 10 connections), each on a session of its own (100 players × 20
 * sessions), against a loopback provider answering a short reply. Four processes: this one (the
 * players), the server (./overload-server.ts), the provider (./overload-provider.ts) and a prober
 * asking GET /health/live every 5 ms during the burst (./overload-prober.ts).
 * Goal: every turn completes or is refused (503 SERVER_BUSY, Retry-After) within 100 ms, none
 * waits out a timeout (DB_POOL_TIMEOUT, or a first byte after 5 s), /health/live p99 ≤ 50 ms
 * during the burst, and the server's event loop never stalls more than 100 ms.
 * Today's figures come from the baseline revision (OVERLOAD_BENCH_BASELINE, by default the commit
 * issue 32's work started from), checked out at run time (./baseline.ts) and measured by the same
 * harness first (OVERLOAD_BENCH_BASELINE=none: this tree alone). Prints `overload:` lines.
 * OVERLOAD_BENCH_TURNS changes the burst's size; OVERLOAD_BENCH_PROFILE=<file> writes a CPU profile
 * of this tree's server during the burst (./overload-server.ts).
 */
const TURNS = Number(process.env.OVERLOAD_BENCH_TURNS ?? 2000);
const PLAYERS = 100;
const BASELINE = process.env.OVERLOAD_BENCH_BASELINE ?? ISSUE_32_BASELINE;
const world = JSON.parse(readFileSync(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8')) as unknown;

interface Outcome {
  kind: 'completed' | 'refused' | 'failed';
  /** First byte of the answer (headers), ms after the burst began. */
  answeredMs: number;
  /** The end of the answer (the reply's last event for a completed turn). */
  endedMs: number;
  code: string;
}

let providerUrl = '';
const children: BenchChild[] = [];

/** Players (each with their own AI connection to the provider and a world) and `TURNS` sessions spread over them. */
async function prepare(url: string, dataDir: string): Promise<{ player: Browser; session: string }[]> {
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

async function turn(player: Browser, session: string, start: number): Promise<Outcome> {
  try {
    const res = await player.fetch(`/api/sessions/${session}/messages`, { method: 'POST', json: { content: 'I light a torch.' } });
    const answeredMs = performance.now() - start;
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
      const events = await readEvents(res);
      const error = events.find((e) => e.event === 'error');
      const endedMs = performance.now() - start;
      if (error) return { kind: 'failed', answeredMs, endedMs, code: String((error.data as { code?: string }).code ?? 'ERROR_EVENT') };
      return { kind: events.at(-1)?.event === 'done' ? 'completed' : 'failed', answeredMs, endedMs, code: events.at(-1)?.event ?? 'NO_EVENTS' };
    }
    const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
    const code = body?.error?.code ?? `HTTP_${res.status}`;
    const endedMs = performance.now() - start;
    const refused = res.status === 503 && code === 'SERVER_BUSY' && Number(res.headers.get('retry-after')) > 0;
    return { kind: refused ? 'refused' : 'failed', answeredMs, endedMs, code };
  } catch (err) {
    const at = performance.now() - start;
    return { kind: 'failed', answeredMs: at, endedMs: at, code: (err as { cause?: { code?: string } }).cause?.code ?? 'NETWORK' };
  }
}

const pct = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
};

/** One burst against the server of `file` (this tree's or the baseline checkout's copy of overload-server.ts). */
async function measure(label: string, file: URL): Promise<string> {
  const [{ child: server, ready }, { child: prober }] = await Promise.all([BenchChild.start(`${label} server`, file), BenchChild.start('prober', new URL('./overload-prober.ts', import.meta.url))]);
  children.push(server, prober);
  const url = String(ready.url);
  const sessions = await prepare(url, String(ready.dataDir));
  // Warm-up: a few turns one after another.
  for (const { player, session } of sessions.slice(0, 5)) await turn(player, session, performance.now());
  await server.request('stall-reset');
  await prober.request('probe-start', { url });
  const start = performance.now();
  const startEpoch = performance.timeOrigin + start;
  const outcomes = await Promise.all(sessions.map(({ player, session }) => turn(player, session, start)));
  const probe = await prober.request<{ p50: number; p99: number; max: number; count: number; failed: number }>('probe-stop');
  const stall = await server.request<{ maxMs: number; p99Ms: number }>('stall');
  const arrived = (await server.request<number[]>('arrivals')).map((t) => t - startEpoch);
  await Promise.all([server.stop(), prober.stop()]);

  const of = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind);
  const [completed, refused, failed] = [of('completed'), of('refused'), of('failed')];
  const codes = Object.entries(failed.reduce<Record<string, number>>((acc, o) => ((acc[o.code] = (acc[o.code] ?? 0) + 1), acc), {}))
    .map(([code, n]) => `${n} ${code}`)
    .join(', ');
  const timedOut = outcomes.filter((o) => o.code === 'DB_POOL_TIMEOUT' || o.answeredMs > 5000).length;
  const line =
    `overload: ${label}: ${outcomes.length} turns at once: ${completed.length} completed (answered p50 ${pct(completed.map((o) => o.answeredMs), 0.5).toFixed(0)} ms, ` +
    `p99 ${pct(completed.map((o) => o.answeredMs), 0.99).toFixed(0)} ms; done p99 ${pct(completed.map((o) => o.endedMs), 0.99).toFixed(0)} ms), ` +
    `${refused.length} refused 503 (slowest refusal ${pct(refused.map((o) => o.answeredMs), 1).toFixed(0)} ms, p99 ${pct(refused.map((o) => o.answeredMs), 0.99).toFixed(0)} ms), ` +
    `${failed.length} failed${codes ? ` (${codes})` : ''}; waited out a timeout: ${timedOut}; ` +
    `/health/live p50 ${probe.p50.toFixed(1)} ms, p99 ${probe.p99.toFixed(1)} ms, max ${probe.max.toFixed(0)} ms (${probe.count} probes, ${probe.failed} failed); ` +
    `longest event-loop stall ${stall.maxMs.toFixed(0)} ms; burst ${(performance.now() - start).toFixed(0)} ms; ` +
    `requests reached the server ${pct(arrived, 0).toFixed(0)}–${pct(arrived, 1).toFixed(0)} ms after the burst began (p50 ${pct(arrived, 0.5).toFixed(0)} ms)`;
  console.log(line);
  return line;
}

beforeAll(async () => {
  const { child: provider, ready } = await BenchChild.start('provider', new URL('./overload-provider.ts', import.meta.url));
  children.push(provider);
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
