/**
 * A single-flight, briefly cached check of one dependency.
 *
 * - Concurrent callers share the one in-flight run of the dependency check.
 * - A settled result (up or down) is served from cache for `cacheMs`; only then does a new run start.
 * - A caller waits at most `responseLimitMs` from its own arrival. If the run is still going then,
 *   that caller gets a `timeout` result, but the run stays shared: later callers join it and no new
 *   run starts until it settles. Its settled result is then cached like any other.
 * - Each caller's timeout handle is cleared as soon as the run settles.
 */

export type ProbeStatus = 'up' | 'down' | 'timeout';

export interface ProbeResult {
  name: string;
  status: ProbeStatus;
  /** Time the underlying run took (or, for `timeout`, has taken so far), in milliseconds. */
  latencyMs: number;
  /** ISO time at which this status was determined. */
  checkedAt: string;
  error?: string;
}

export interface ProbeOptions {
  /** How long a settled result is served before a new run may start. Default 1000 ms. */
  cacheMs?: number;
  /** How long one caller waits for a running check before answering `timeout`. Default 5000 ms. */
  responseLimitMs?: number;
  /** Monotonic clock in milliseconds. Default `performance.now()`. */
  now?: () => number;
}

export interface Probe {
  readonly name: string;
  /** Never rejects. */
  check(): Promise<ProbeResult>;
  /** True while an underlying run has not settled. */
  readonly running: boolean;
  /** How many underlying runs have started so far. */
  readonly runs: number;
}

export const PROBE_CACHE_MS = 1000;
export const PROBE_RESPONSE_LIMIT_MS = 5000;
/** Deadline of the SQL `select 1` readiness probe (seed §2.1); the caller's db deadline scope applies it. */
export const HEALTH_SQL_PROBE_DEADLINE_MS = 4000;
const ERROR_TEXT_LIMIT = 300;

interface Flight {
  startedAt: number;
  settled: Promise<ProbeResult>;
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.length > ERROR_TEXT_LIMIT ? `${text.slice(0, ERROR_TEXT_LIMIT)}…` : text;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

export function createProbe(name: string, run: () => Promise<void>, options: ProbeOptions = {}): Probe {
  const cacheMs = options.cacheMs ?? PROBE_CACHE_MS;
  const responseLimitMs = options.responseLimitMs ?? PROBE_RESPONSE_LIMIT_MS;
  const now = options.now ?? (() => performance.now());

  let flight: Flight | undefined;
  let cached: { result: ProbeResult; settledAt: number } | undefined;
  let runs = 0;

  function start(): Flight {
    runs += 1;
    const startedAt = now();
    const settle = (status: 'up' | 'down', error?: string): ProbeResult => {
      const settledAt = now();
      const result: ProbeResult = {
        name,
        status,
        latencyMs: round(settledAt - startedAt),
        checkedAt: new Date().toISOString(),
      };
      if (error !== undefined) result.error = error;
      cached = { result, settledAt };
      flight = undefined;
      return result;
    };
    let pending: Promise<void>;
    try {
      pending = Promise.resolve(run());
    } catch (err) {
      pending = Promise.reject(err);
    }
    const settled = pending.then(
      () => settle('up'),
      (err: unknown) => settle('down', errorText(err)),
    );
    return { startedAt, settled };
  }

  function check(): Promise<ProbeResult> {
    if (!flight && cached && now() - cached.settledAt < cacheMs) return Promise.resolve(cached.result);
    if (!flight) flight = start();
    const current = flight;
    return new Promise<ProbeResult>((resolve) => {
      let done = false;
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        resolve({
          name,
          status: 'timeout',
          latencyMs: round(now() - current.startedAt),
          checkedAt: new Date().toISOString(),
          error: `still running after ${responseLimitMs} ms`,
        });
      }, responseLimitMs);
      // A diagnostic wait must not hold a shutting-down process open.
      timer.unref?.();
      current.settled.then((result) => {
        clearTimeout(timer);
        if (done) return;
        done = true;
        resolve(result);
      });
    });
  }

  return {
    name,
    check,
    get running() {
      return flight !== undefined;
    },
    get runs() {
      return runs;
    },
  };
}
