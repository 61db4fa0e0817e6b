import type { Probe, ProbeResult, ProbeStatus } from './probe.ts';

/**
 * The readiness answer (GET /health) built from dependency probes.
 *
 * Rules:
 * - `down` + HTTP 503 when any required dependency (by default `primary`) is not `up`
 *   (a `timeout` counts as not up).
 * - `degraded` + HTTP 200 when every required dependency is up but an optional one
 *   (read database, shared store) is not: the app keeps serving (reads fall back to the primary,
 *   the store to its in-memory fallback).
 * - `ok` + HTTP 200 otherwise.
 */

export type ReadinessStatus = 'ok' | 'degraded' | 'down';

export interface DependencyReport {
  status: ProbeStatus;
  required: boolean;
  latencyMs: number;
  checkedAt: string;
  error?: string;
}

export interface ReadinessBody {
  status: ReadinessStatus;
  checkedAt: string;
  dependencies: Record<string, DependencyReport>;
  replica: Record<string, string>;
  uptimeSeconds: number;
  version: string;
}

export interface ReadinessAnswer {
  statusCode: 200 | 503;
  headers: Record<string, string>;
  body: ReadinessBody;
}

export interface ReadinessOptions {
  /** Names of probes whose failure makes the replica not ready. Default `['primary']`. */
  required?: readonly string[];
  /** Replica identity fields (region, replicaId, deploymentId, bootId). */
  replica?: Record<string, string>;
  version?: string;
  /** Seconds since process start. Default `process.uptime()`. */
  uptimeSeconds?: () => number;
}

/** Both health endpoints answer with this header. */
export const HEALTH_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'cache-control': 'no-store' });

/** Runs every probe at once (each is bounded by its response limit) and builds the answer. */
export async function readiness(probes: readonly Probe[], options: ReadinessOptions = {}): Promise<ReadinessAnswer> {
  const required = new Set(options.required ?? ['primary']);
  const results: ProbeResult[] = await Promise.all(probes.map((p) => p.check()));
  const dependencies: Record<string, DependencyReport> = {};
  let requiredFailing = false;
  let optionalFailing = false;
  for (const result of results) {
    const isRequired = required.has(result.name);
    const report: DependencyReport = {
      status: result.status,
      required: isRequired,
      latencyMs: result.latencyMs,
      checkedAt: result.checkedAt,
    };
    if (result.error !== undefined) report.error = result.error;
    dependencies[result.name] = report;
    if (result.status !== 'up') {
      if (isRequired) requiredFailing = true;
      else optionalFailing = true;
    }
  }
  // A required dependency without a probe cannot be shown to be up.
  for (const name of required) {
    if (!(name in dependencies)) {
      requiredFailing = true;
      dependencies[name] = {
        status: 'down',
        required: true,
        latencyMs: 0,
        checkedAt: new Date().toISOString(),
        error: 'no probe configured',
      };
    }
  }
  const status: ReadinessStatus = requiredFailing ? 'down' : optionalFailing ? 'degraded' : 'ok';
  return {
    statusCode: requiredFailing ? 503 : 200,
    headers: { ...HEALTH_HEADERS },
    body: {
      status,
      checkedAt: new Date().toISOString(),
      dependencies,
      replica: { ...(options.replica ?? {}) },
      uptimeSeconds: Math.round((options.uptimeSeconds ?? (() => process.uptime()))() * 10) / 10,
      version: options.version ?? 'unknown',
    },
  };
}

export interface LivenessBody {
  status: 'ok';
  replica: Record<string, string>;
  uptimeSeconds: number;
  version: string;
}

/** GET /health/live: touches nothing but the process itself. */
export function liveness(options: Omit<ReadinessOptions, 'required'> = {}): {
  statusCode: 200;
  headers: Record<string, string>;
  body: LivenessBody;
} {
  return {
    statusCode: 200,
    headers: { ...HEALTH_HEADERS },
    body: {
      status: 'ok',
      replica: { ...(options.replica ?? {}) },
      uptimeSeconds: Math.round((options.uptimeSeconds ?? (() => process.uptime()))() * 10) / 10,
      version: options.version ?? 'unknown',
    },
  };
}
