import { errorCode } from './error-code.ts';
import type { PoolStats, TelemetryEvent } from './events.ts';
import { createIdentity, type IdentityInput, type ReplicaIdentity } from './identity.ts';
import { MetricsRegistry, QUERY_SECONDS_BUCKETS, REQUEST_SECONDS_BUCKETS } from './metrics.ts';
import { renderRegistry } from './prometheus.ts';
import {
  HEALTHY_SAMPLE_EVERY_MS,
  type RuntimeSampler,
  type RuntimeSamplerOptions,
  type RuntimeTick,
  startRuntimeSampler,
} from './sampler.ts';
import { TimingWindow } from './timing-window.ts';
import type { TelemetrySink } from './sink.ts';

export const SLOW_QUERY_MS = 1000;

export interface TelemetryOptions {
  identity: IdentityInput | ReplicaIdentity;
  sink: TelemetrySink;
  /** Queries at or above this duration are also written one by one as `db.query`. Default 1000 ms. */
  slowQueryMs?: number;
  /** Read on every sampler tick and on every scrape; `db.pool` lines are written every healthy period and when clients start waiting. */
  poolStats?: () => readonly PoolStats[];
  /** Write one `http.request` line per request (the histogram is kept either way). Default true. */
  logRequests?: boolean;
  /** Passed to the runtime sampler (interval, healthy period, clock, delay monitor). */
  sampler?: Omit<RuntimeSamplerOptions, 'identity' | 'sink' | 'onTick'>;
}

export interface RequestTiming {
  method: string;
  /** The route template (`/api/worlds/:id`), never the raw URL; `unmatched` when no route matched. */
  route: string;
  status: number;
  durationMs: number;
}

/** The parts of a Fastify request/reply an onResponse hook needs (no Fastify dependency). */
export interface ResponseHookRequest {
  method: string;
  routeOptions?: { url?: string | undefined } | undefined;
}
export interface ResponseHookReply {
  statusCode: number;
  elapsedTime: number;
}

export interface Telemetry {
  readonly identity: ReplicaIdentity;
  /** Starts the runtime sampler (idempotent). */
  start(): void;
  /** Stops the runtime sampler; call on graceful shutdown. Idempotent. */
  stop(): void;
  /** For the db layer: one call per finished query. */
  recordQuery(pool: string, durationMs: number, ok: boolean, statement?: string): void;
  recordRequest(timing: RequestTiming): void;
  /** `app.addHook('onResponse', telemetry.onResponse)`. */
  onResponse(request: ResponseHookRequest, reply: ResponseHookReply, done?: () => void): void;
  captureError(err: unknown, where?: string): void;
  /** Writes one `db.pool` line per pool now. */
  reportPools(trigger?: 'periodic' | 'pressure'): void;
  /** Prometheus text exposition of every figure. */
  renderPrometheus(): string;
  readonly registry: MetricsRegistry;
  readonly sampler: RuntimeSampler | undefined;
}

function isIdentity(x: IdentityInput | ReplicaIdentity): x is ReplicaIdentity {
  return typeof (x as ReplicaIdentity).bootId === 'string' && typeof x.replicaId === 'string';
}

export function createTelemetry(options: TelemetryOptions): Telemetry {
  const identity = isIdentity(options.identity) ? options.identity : createIdentity(options.identity);
  const slowQueryMs = options.slowQueryMs ?? SLOW_QUERY_MS;
  const logRequests = options.logRequests ?? true;
  const healthyEveryMs = options.sampler?.healthyEveryMs ?? HEALTHY_SAMPLE_EVERY_MS;
  const emit = (event: TelemetryEvent) => {
    try {
      options.sink.emit(event);
    } catch {
      // Reporting never throws into the application.
    }
  };

  const registry = new MetricsRegistry();
  const info = registry.gauge('yumina_replica_info', 'Identity of this replica and process start (value is always 1).', [
    'region',
    'replica_id',
    'deployment_id',
    'boot_id',
  ]);
  info.set(
    { region: identity.region, replica_id: identity.replicaId, deployment_id: identity.deploymentId, boot_id: identity.bootId },
    1,
  );
  const cpuUser = registry.counter('process_cpu_user_seconds_total', 'User CPU time spent by the process, seconds.');
  const cpuSystem = registry.counter('process_cpu_system_seconds_total', 'System CPU time spent by the process, seconds.');
  const rss = registry.gauge('process_resident_memory_bytes', 'Resident set size, bytes.');
  const heapUsed = registry.gauge('nodejs_heap_used_bytes', 'V8 heap in use, bytes.');
  const heapTotal = registry.gauge('nodejs_heap_total_bytes', 'V8 heap allocated, bytes.');
  const uptime = registry.gauge('process_uptime_seconds', 'Seconds since the process started.');
  const elu = registry.gauge('nodejs_eventloop_utilization_ratio', 'Event-loop utilization over the last sampling interval, 0..1.');
  const delayP95 = registry.gauge('nodejs_eventloop_delay_p95_seconds', 'p95 event-loop delay over the last sampling interval, seconds.');
  const delayMax = registry.gauge('nodejs_eventloop_delay_max_seconds', 'Max event-loop delay over the last sampling interval, seconds.');
  const stalls = registry.counter('yumina_runtime_stalls_total', 'Sampling intervals reported as event-loop stalls.');
  const queryDuration = registry.histogram(
    'yumina_db_query_duration_seconds',
    'Duration of database queries per pool, seconds.',
    ['pool'],
    QUERY_SECONDS_BUCKETS,
  );
  const queries = registry.counter('yumina_db_queries_total', 'Database queries per pool and outcome.', ['pool', 'outcome']);
  const slowQueries = registry.counter('yumina_db_slow_queries_total', 'Queries at or above the slow-query threshold.', ['pool']);
  const poolConnections = registry.gauge('yumina_db_pool_connections', 'Connections of a pool by state (total, idle).', [
    'pool',
    'state',
  ]);
  const poolWaiting = registry.gauge('yumina_db_pool_waiting_clients', 'Callers waiting for a pool connection.', ['pool']);
  const requestDuration = registry.histogram(
    'yumina_http_request_duration_seconds',
    'HTTP request duration by method, route template and status, seconds.',
    ['method', 'route', 'status'],
    REQUEST_SECONDS_BUCKETS,
  );
  const errors = registry.counter('yumina_errors_total', 'Captured errors by code.', ['code']);

  const waitingBefore = new Map<string, number>();
  let lastPoolReportAt = Number.NEGATIVE_INFINITY;
  // Query and request timing summarised per healthy period: records at the default level with the identity.
  const queryWindows = new Map<string, TimingWindow>();
  const requestWindow = new TimingWindow();
  let windowStartedAt: number | undefined;
  const reportTimings = (at: number) => {
    const periodMs = Math.round(at - (windowStartedAt ?? at));
    windowStartedAt = at;
    for (const [pool, window] of queryWindows) {
      const summary = window.take();
      if (summary) emit({ type: 'db.queries', ...identity, pool, periodMs, ...summary });
    }
    const requests = requestWindow.take();
    if (requests) emit({ type: 'http.requests', ...identity, periodMs, ...requests });
  };

  const readPools = (): readonly PoolStats[] => {
    if (!options.poolStats) return [];
    const pools = options.poolStats();
    for (const p of pools) {
      poolConnections.set({ pool: p.pool, state: 'total' }, p.total);
      poolConnections.set({ pool: p.pool, state: 'idle' }, p.idle);
      poolWaiting.set({ pool: p.pool }, p.waiting);
    }
    return pools;
  };

  const reportPools = (trigger: 'periodic' | 'pressure' = 'periodic', pools = readPools()) => {
    for (const p of pools) emit({ type: 'db.pool', ...identity, pool: p.pool, total: p.total, idle: p.idle, waiting: p.waiting, trigger });
  };

  const onTick = (tick: RuntimeTick) => {
    const f = tick.figures;
    if (tick.stalled) stalls.inc();
    elu.set({}, f.eventLoopUtilization);
    if (!Number.isNaN(f.delay.p95Ms)) delayP95.set({}, f.delay.p95Ms / 1000);
    if (!Number.isNaN(f.delay.maxMs)) delayMax.set({}, f.delay.maxMs / 1000);
    if (windowStartedAt === undefined) windowStartedAt = tick.at;
    else if (tick.at - windowStartedAt >= healthyEveryMs) reportTimings(tick.at);
    if (!options.poolStats) return;
    const pools = readPools();
    if (tick.at - lastPoolReportAt >= healthyEveryMs) {
      lastPoolReportAt = tick.at;
      reportPools('periodic', pools);
    } else {
      const pressured = pools.filter((p) => p.waiting > 0 && (waitingBefore.get(p.pool) ?? 0) === 0);
      if (pressured.length) reportPools('pressure', pressured);
    }
    for (const p of pools) waitingBefore.set(p.pool, p.waiting);
  };

  registry.onCollect(() => {
    const cpu = process.cpuUsage();
    cpuUser.setTotal({}, cpu.user / 1e6);
    cpuSystem.setTotal({}, cpu.system / 1e6);
    const memory = process.memoryUsage();
    rss.set({}, memory.rss);
    heapUsed.set({}, memory.heapUsed);
    heapTotal.set({}, memory.heapTotal);
    uptime.set({}, Math.round(process.uptime() * 10) / 10);
  });
  registry.onCollect(() => {
    readPools();
  });

  let sampler: RuntimeSampler | undefined;

  const recordRequest = (t: RequestTiming) => {
    try {
      const status = Number.isInteger(t.status) ? t.status : 0;
      const durationMs = Math.round(t.durationMs * 10) / 10;
      requestDuration.observe({ method: t.method, route: t.route, status: String(status) }, t.durationMs / 1000);
      requestWindow.add(t.durationMs, status >= 500);
      if (logRequests) emit({ type: 'http.request', ...identity, method: t.method, route: t.route, status, durationMs });
    } catch {
      // never into the application
    }
  };

  return {
    identity,
    registry,
    get sampler() {
      return sampler;
    },
    start() {
      if (sampler) return;
      sampler = startRuntimeSampler({ ...options.sampler, identity, sink: { emit }, onTick });
    },
    stop() {
      sampler?.stop();
    },
    recordQuery(pool, durationMs, ok, statement) {
      try {
        queryDuration.observe({ pool }, durationMs / 1000);
        queries.inc({ pool, outcome: ok ? 'ok' : 'error' });
        let window = queryWindows.get(pool);
        if (!window) queryWindows.set(pool, (window = new TimingWindow()));
        window.add(durationMs, !ok);
        if (durationMs >= slowQueryMs) {
          slowQueries.inc({ pool });
          const event: TelemetryEvent = {
            type: 'db.query',
            ...identity,
            pool,
            durationMs: Math.round(durationMs * 10) / 10,
            ok,
            slowQueryMs,
          };
          if (statement !== undefined) event.statement = statement.slice(0, 200);
          emit(event);
        }
      } catch {
        // never into the application
      }
    },
    recordRequest,
    onResponse(request, reply, done) {
      recordRequest({
        method: request.method,
        route: request.routeOptions?.url ?? 'unmatched',
        status: reply.statusCode,
        durationMs: reply.elapsedTime,
      });
      done?.();
    },
    captureError(err, where) {
      try {
        const e = err instanceof Error ? err : new Error(typeof err === 'string' ? err : 'non-error value thrown');
        const code = errorCode(e);
        errors.inc({ code: code ?? 'none' });
        const event: TelemetryEvent = { type: 'error', ...identity, name: e.name, message: e.message };
        if (code !== undefined) event.code = code;
        if (e.stack !== undefined) event.stack = e.stack;
        if (where !== undefined) event.where = where;
        emit(event);
      } catch {
        // never into the application
      }
    },
    reportPools(trigger = 'periodic') {
      try {
        reportPools(trigger);
      } catch {
        // never into the application
      }
    },
    renderPrometheus() {
      return renderRegistry(registry);
    },
  };
}
