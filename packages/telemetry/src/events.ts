import type { ReplicaIdentity } from './identity.ts';
import type { TimingSummary } from './timing-window.ts';

/** Delay figures of the event loop, in milliseconds, with the timer resolution already subtracted. */
export interface LoopDelay {
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** The larger of the histogram's max and the sampling timer's lateness. */
  maxMs: number;
  /** Histogram samples taken in the interval. 0 means the loop never got to sample: read as a stall. */
  samples: number;
}

export interface RuntimeFigures {
  /** Length of the measured interval. */
  intervalMs: number;
  /** Process CPU time over the interval as a share of one core, in percent (can exceed 100). */
  cpuPercent: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Event-loop utilization over the interval, 0..1. */
  eventLoopUtilization: number;
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  uptimeSeconds: number;
  delay: LoopDelay;
}

export type StallReason = 'p95' | 'max' | 'timer-late' | 'no-samples';

export type RuntimeSampleEvent = { type: 'runtime.sample' } & ReplicaIdentity & RuntimeFigures;

export type RuntimeStallEvent = { type: 'runtime.stall' } & ReplicaIdentity &
  RuntimeFigures & {
    reasons: StallReason[];
    /** How late the sampling timer fired. */
    timerLateMs: number;
  };

export interface PoolStats {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
}

export type DbPoolEvent = { type: 'db.pool' } & ReplicaIdentity &
  PoolStats & {
    /** Why this line was written: the periodic report or clients starting to wait. */
    trigger: 'periodic' | 'pressure';
  };

export type DbQueryEvent = { type: 'db.query' } & ReplicaIdentity & {
    pool: string;
    durationMs: number;
    ok: boolean;
    slowQueryMs: number;
    statement?: string;
  };

/** Every query of one pool over one healthy period (seed 000 §2.2: query timing at the default level). */
export type DbQueriesEvent = { type: 'db.queries' } & ReplicaIdentity &
  TimingSummary & {
    pool: string;
    periodMs: number;
  };

/** Every request over one healthy period; `failed` counts 5xx answers. */
export type HttpRequestsEvent = { type: 'http.requests' } & ReplicaIdentity & TimingSummary & { periodMs: number };

export type HttpRequestEvent = { type: 'http.request' } & ReplicaIdentity & {
    method: string;
    route: string;
    status: number;
    durationMs: number;
  };

export type ErrorEvent = { type: 'error' } & ReplicaIdentity & {
    name: string;
    message: string;
    code?: string;
    stack?: string;
    where?: string;
  };

export interface CpuProfileStack {
  samples: number;
  /** Share of all non-idle samples, percent. */
  percent: number;
  /** Innermost frame first: `functionName url:line:column`. */
  frames: string[];
}

export type CpuProfileEvent = { type: 'runtime.cpu_profile' } & ReplicaIdentity & {
    seconds: number;
    samplingIntervalMs: number;
    totalSamples: number;
    idleSamples: number;
    stacks: CpuProfileStack[];
  };

export type TelemetryEvent =
  | RuntimeSampleEvent
  | RuntimeStallEvent
  | DbPoolEvent
  | DbQueryEvent
  | DbQueriesEvent
  | HttpRequestEvent
  | HttpRequestsEvent
  | ErrorEvent
  | CpuProfileEvent;

export type TelemetryEventType = TelemetryEvent['type'];
