import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import type { EventLoopUtilization } from 'node:perf_hooks';
import type { LoopDelay, RuntimeFigures, StallReason } from './events.ts';
import type { ReplicaIdentity } from './identity.ts';
import type { TelemetrySink } from './sink.ts';

/** Stall thresholds of seed §2.2. */
export const STALL_P95_MS = 50;
export const STALL_MAX_MS = 1000;
export const STALL_TIMER_LATE_MS = 1000;
export const HEALTHY_SAMPLE_EVERY_MS = 30_000;
export const SAMPLE_INTERVAL_MS = 1000;
export const DELAY_RESOLUTION_MS = 10;

/** What the sampler reads from a delay histogram (the shape of perf_hooks' IntervalHistogram). */
export interface DelayMonitor {
  enable?(): unknown;
  disable?(): unknown;
  reset(): void;
  readonly count: number;
  readonly max: number;
  readonly mean: number;
  percentile(p: number): number;
}

export interface RuntimeTick {
  figures: RuntimeFigures;
  stalled: boolean;
  reasons: StallReason[];
  timerLateMs: number;
  /** Sampler clock at this tick, ms. */
  at: number;
}

export interface RuntimeSamplerOptions {
  identity: ReplicaIdentity;
  sink: TelemetrySink;
  /** How often the loop is measured. Default 1000 ms. */
  intervalMs?: number;
  /** How often a healthy `runtime.sample` is written. Default 30 000 ms. */
  healthyEveryMs?: number;
  /** Resolution of the delay histogram; its values include it, so it is subtracted. Default 10 ms. */
  resolutionMs?: number;
  /** Monotonic clock, ms. Default `performance.now()`. */
  now?: () => number;
  /** Default: `monitorEventLoopDelay({ resolution })`, enabled by the sampler. */
  delayMonitor?: DelayMonitor;
  /** Called after each measurement (metrics, pool reporting). Errors are swallowed. */
  onTick?: (tick: RuntimeTick) => void;
}

export interface RuntimeSampler {
  /** Stops measuring; no record is written afterwards. Idempotent. */
  stop(): void;
  readonly stalls: number;
  readonly latest: RuntimeTick | undefined;
}

const NS_PER_MS = 1e6;
const round = (v: number, digits = 1) => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

interface Baseline {
  at: number;
  cpu: NodeJS.CpuUsage;
  elu: EventLoopUtilization;
}

function readDelay(monitor: DelayMonitor, resolutionMs: number): LoopDelay {
  const samples = monitor.count;
  const usable = samples > 0 && Number.isFinite(monitor.mean);
  const ms = (ns: number) => (usable && Number.isFinite(ns) ? round(Math.max(0, ns / NS_PER_MS - resolutionMs)) : Number.NaN);
  return {
    p50Ms: ms(monitor.percentile(50)),
    p95Ms: ms(monitor.percentile(95)),
    p99Ms: ms(monitor.percentile(99)),
    maxMs: ms(monitor.max),
    samples: usable ? samples : 0,
  };
}

function stallReasons(delay: LoopDelay, timerLateMs: number): StallReason[] {
  const reasons: StallReason[] = [];
  // An empty histogram (NaN) means the loop never got to measure: that is a stall, not "0 ms".
  if (delay.samples === 0 || Number.isNaN(delay.p95Ms) || Number.isNaN(delay.maxMs)) reasons.push('no-samples');
  if (delay.p95Ms >= STALL_P95_MS) reasons.push('p95');
  if (delay.maxMs >= STALL_MAX_MS) reasons.push('max');
  if (timerLateMs >= STALL_TIMER_LATE_MS) reasons.push('timer-late');
  return reasons;
}

/** Worst-of merge for the healthy sample's window. */
function mergeDelay(a: LoopDelay | undefined, b: LoopDelay): LoopDelay {
  if (!a) return { ...b };
  const worst = (x: number, y: number) => (Number.isNaN(x) ? y : Number.isNaN(y) ? x : Math.max(x, y));
  return {
    p50Ms: worst(a.p50Ms, b.p50Ms),
    p95Ms: worst(a.p95Ms, b.p95Ms),
    p99Ms: worst(a.p99Ms, b.p99Ms),
    maxMs: worst(a.maxMs, b.maxMs),
    samples: a.samples + b.samples,
  };
}

/**
 * Measures the event loop every `intervalMs` and writes a `runtime.stall` record for each stalled
 * interval and a `runtime.sample` every `healthyEveryMs` otherwise. A blocked process reports its
 * stall once it resumes. Timers are unref'd, every error is swallowed (and reported as an `error`
 * record at most once per healthy period).
 */
export function startRuntimeSampler(options: RuntimeSamplerOptions): RuntimeSampler {
  const intervalMs = options.intervalMs ?? SAMPLE_INTERVAL_MS;
  const healthyEveryMs = options.healthyEveryMs ?? HEALTHY_SAMPLE_EVERY_MS;
  const resolutionMs = options.resolutionMs ?? DELAY_RESOLUTION_MS;
  if (!(intervalMs > resolutionMs)) throw new RangeError('sampling interval must exceed the delay resolution');
  const now = options.now ?? (() => performance.now());
  const { identity, sink } = options;
  const monitor: DelayMonitor = options.delayMonitor ?? monitorEventLoopDelay({ resolution: resolutionMs });

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  let retry: NodeJS.Timeout | undefined;
  let expectedAt = 0;
  /** When the last interval was measured: time before it is already accounted for. */
  let measuredAt = 0;
  let stalls = 0;
  let latest: RuntimeTick | undefined;
  let lastErrorAt = Number.NEGATIVE_INFINITY;

  const snapshot = (): Baseline => ({ at: now(), cpu: process.cpuUsage(), elu: perf.eventLoopUtilization() });
  let tickBase: Baseline;
  let reportBase: Baseline;
  let windowDelay: LoopDelay | undefined;

  const figuresSince = (base: Baseline, at: number, cpu: NodeJS.CpuUsage, elu: EventLoopUtilization, delay: LoopDelay): RuntimeFigures => {
    const elapsedMs = Math.max(at - base.at, 0.001);
    const cpuUserMs = (cpu.user - base.cpu.user) / 1000;
    const cpuSystemMs = (cpu.system - base.cpu.system) / 1000;
    const memory = process.memoryUsage();
    return {
      intervalMs: round(elapsedMs),
      cpuPercent: round(((cpuUserMs + cpuSystemMs) / elapsedMs) * 100),
      cpuUserMs: round(cpuUserMs),
      cpuSystemMs: round(cpuSystemMs),
      eventLoopUtilization: round(perf.eventLoopUtilization(elu, base.elu).utilization, 3),
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      uptimeSeconds: round(process.uptime()),
      delay,
    };
  };

  const safeEmit: TelemetrySink['emit'] = (event) => {
    try {
      sink.emit(event);
    } catch {
      // never into the application
    }
  };

  const reportFailure = (err: unknown, at: number) => {
    if (at - lastErrorAt < healthyEveryMs) return;
    lastErrorAt = at;
    const e = err instanceof Error ? err : new Error(String(err));
    safeEmit({ type: 'error', ...identity, name: e.name, message: e.message, where: 'runtime-sampler' });
  };

  /**
   * `dueAt`: when this tick's timer was due. Lateness is taken here, in the check phase, so a block
   * that runs between our timer and this read (another timer of the same phase) is caught too.
   */
  const measure = (dueAt: number, retriedLateMs?: number) => {
    immediate = undefined;
    retry = undefined;
    if (stopped) return;
    const at = now();
    try {
      // A timer that came due while the previous interval was being measured late (a block that
      // ran between our timer and its read) is late only since that read: the block was reported.
      const timerLateMs = retriedLateMs ?? Math.max(0, at - Math.max(dueAt, measuredAt));
      const delay = readDelay(monitor, resolutionMs);
      if (timerLateMs >= STALL_TIMER_LATE_MS && retriedLateMs === undefined && !(delay.maxMs >= STALL_MAX_MS)) {
        // We saw the block but the delay monitor's own timer has not fired since: its sample of
        // the block would land in the next interval and be reported a second time. Read again
        // once the monitor has had its turn, without resetting in between.
        retry = setTimeout(measure, resolutionMs * 2, dueAt, timerLateMs);
        retry.unref();
        return;
      }
      // The monitor loses a delay that spans its reset (reset forgets its previous timestamp);
      // our own timer's lateness is a delay measurement too, so the max is the larger of both.
      if (!(delay.maxMs >= timerLateMs)) delay.maxMs = round(timerLateMs);
      monitor.reset();
      measuredAt = at;
      const cpu = process.cpuUsage();
      const elu = perf.eventLoopUtilization();
      const figures = figuresSince(tickBase, at, cpu, elu, delay);
      tickBase = { at, cpu, elu };
      windowDelay = mergeDelay(windowDelay, delay);
      const reasons = stallReasons(delay, timerLateMs);
      const stalled = reasons.length > 0;
      if (stalled) {
        stalls += 1;
        safeEmit({ type: 'runtime.stall', ...identity, ...figures, reasons, timerLateMs: round(timerLateMs) });
      } else if (at - reportBase.at >= healthyEveryMs) {
        safeEmit({ type: 'runtime.sample', ...identity, ...figuresSince(reportBase, at, cpu, elu, windowDelay) });
        reportBase = { at, cpu, elu };
        windowDelay = undefined;
      }
      latest = { figures, stalled, reasons, timerLateMs: round(timerLateMs), at };
      options.onTick?.(latest);
    } catch (err) {
      reportFailure(err, at);
    }
  };

  const schedule = () => {
    if (stopped) return;
    expectedAt = now() + intervalMs;
    timer = setTimeout(onTimer, intervalMs);
    timer.unref();
  };

  function onTimer() {
    timer = undefined;
    if (stopped) return;
    // Read in the check phase: after a block, the delay monitor's own timer (due in the same
    // timers phase) must record the block into this interval, or the block would show up
    // one interval later as a second stall. A pending re-read already covers this interval.
    if (!retry) {
      immediate = setImmediate(measure, expectedAt);
      immediate.unref();
    }
    schedule();
  }

  try {
    monitor.enable?.();
    tickBase = snapshot();
    reportBase = tickBase;
    measuredAt = tickBase.at;
    monitor.reset();
    schedule();
  } catch (err) {
    stopped = true;
    reportFailure(err, 0);
  }

  return {
    stop() {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
      if (retry) clearTimeout(retry);
      try {
        monitor.disable?.();
      } catch {
        // ignored
      }
    },
    get stalls() {
      return stalls;
    },
    get latest() {
      return latest;
    },
  };
}
