import type { Counter, Histogram } from '@yumina/telemetry';
import { admissionOf } from './admission.ts';
import type { AppContext } from './context.ts';
import { openWatchingStreams } from './event-stream.ts';

/**
 * What an operator watches (issue 51, point 6; docs/OPERATIONS.md "What an operator watches"):
 * turn latency (to the first token and to the end), turns that failed, provider errors by kind,
 * admission refusals and the queue's depth, open streams, event-loop stalls. They are in
 * Prometheus' form at GET /metrics and, in container mode, written every minute as CloudWatch
 * embedded-metric-format (EMF) lines on stdout, which CloudWatch Logs turns into metrics of the
 * namespace `Yumina` with the dimension `Service`; the alarms of infra/alarms.ts watch them.
 */
export const METRICS_NAMESPACE = 'Yumina';
export const METRICS_SERVICE = 'api';

/** The metrics each EMF line declares, with their units (infra/alarms.ts alarms on some of them). */
export const EMF_METRICS = {
  Turns: 'Count',
  TurnsFailed: 'Count',
  TurnLatency: 'Milliseconds',
  TurnFirstToken: 'Milliseconds',
  ProviderErrors: 'Count',
  AdmissionRefusals: 'Count',
  AdmissionQueueDepth: 'Count',
  OpenStreams: 'Count',
  EventLoopStalls: 'Count',
  EventLoopDelayMax: 'Milliseconds',
} as const;
export type EmfMetric = keyof typeof EMF_METRICS;

/** EMF takes at most 100 values of one metric in one line; beyond, an even sample of them. */
const MAX_VALUES = 100;
const TURN_BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300];

export interface OperatorMetrics {
  /** A turn ended: its time from the request to the end and to the first token (null: none came), and how it ended. */
  turn(outcome: 'complete' | 'failed' | 'stopped', totalMs: number, firstTokenMs: number | null): void;
  /** A provider call failed with this error code (AI_RATE_LIMITED, AI_TIMEOUT, …). */
  providerError(kind: string): void;
  /** The EMF lines for the time since the last call (each a JSON object), and starts a new period. */
  emf(now?: number): Record<string, unknown>[];
  stop(): void;
}

const perContext = new WeakMap<AppContext, OperatorMetrics>();

export function operatorMetricsOf(ctx: AppContext): OperatorMetrics {
  let metrics = perContext.get(ctx);
  if (!metrics) {
    metrics = createOperatorMetrics(ctx);
    perContext.set(ctx, metrics);
  }
  return metrics;
}

const evenSample = (values: number[]): number[] => {
  if (values.length <= MAX_VALUES) return values;
  const step = values.length / MAX_VALUES;
  return Array.from({ length: MAX_VALUES }, (_, i) => values[Math.floor(i * step)]!);
};

function counterTotal(ctx: AppContext, name: string): number {
  const family = ctx.telemetry.registry.metrics.find((m) => m.name === name) as Counter | undefined;
  let total = 0;
  for (const s of family?.series.values() ?? []) total += s.value;
  return total;
}

function createOperatorMetrics(ctx: AppContext): OperatorMetrics {
  const { registry } = ctx.telemetry;
  const turnSeconds = registry.histogram('yumina_turn_duration_seconds', 'Turns from the request to the end of the reply, by outcome.', ['outcome'], TURN_BUCKETS) as Histogram;
  const firstToken = registry.histogram('yumina_turn_first_token_seconds', "Turns from the request to the reply's first text.", [], TURN_BUCKETS) as Histogram;
  const providerErrors = registry.counter('yumina_provider_errors_total', 'AI provider calls that failed, by error code.', ['kind']);
  const refusals = registry.counter('yumina_admission_refused_total', 'Turns and stream openings refused by admission (503 SERVER_BUSY).');
  const queueDepth = registry.gauge('yumina_admission_waiting', 'Turns and stream openings waiting for admission.');
  const openStreams = registry.gauge('yumina_streams_open', 'Open streams that watch (room events, live update overviews).');
  registry.onCollect(() => {
    const admission = admissionOf(ctx);
    refusals.setTotal({}, admission.counts.refused);
    queueDepth.set({}, admission.waiting);
    openStreams.set({}, openWatchingStreams());
  });

  // the period's own figures, for the next EMF line
  let latencies: number[] = [];
  let firsts: number[] = [];
  let turns = 0;
  let failed = 0;
  let errors = new Map<string, number>();
  let lastRefused = admissionOf(ctx).counts.refused;
  let lastStalls = counterTotal(ctx, 'yumina_runtime_stalls_total');

  const metrics: OperatorMetrics = {
    turn(outcome, totalMs, firstTokenMs) {
      turnSeconds.observe({ outcome }, totalMs / 1000);
      turns++;
      if (outcome === 'failed') failed++;
      if (outcome === 'complete') latencies.push(Math.round(totalMs));
      if (firstTokenMs !== null) {
        firstToken.observe({}, firstTokenMs / 1000);
        firsts.push(Math.round(firstTokenMs));
      }
    },
    providerError(kind) {
      providerErrors.inc({ kind });
      errors.set(kind, (errors.get(kind) ?? 0) + 1);
    },
    emf(now = Date.now()) {
      const admission = admissionOf(ctx);
      const stalls = counterTotal(ctx, 'yumina_runtime_stalls_total');
      const delay = ctx.telemetry.registry.metrics.find((m) => m.name === 'nodejs_eventloop_delay_max_seconds');
      const delayMax = delay ? [...delay.series.values()].reduce((max, s) => Math.max(max, s.value as number), 0) : 0;
      const values: Record<EmfMetric, number | number[]> = {
        Turns: turns,
        TurnsFailed: failed,
        TurnLatency: evenSample(latencies),
        TurnFirstToken: evenSample(firsts),
        ProviderErrors: [...errors.values()].reduce((a, b) => a + b, 0),
        AdmissionRefusals: Math.max(0, admission.counts.refused - lastRefused),
        AdmissionQueueDepth: admission.waiting,
        OpenStreams: openWatchingStreams(),
        EventLoopStalls: Math.max(0, stalls - lastStalls),
        EventLoopDelayMax: Math.round(delayMax * 1000),
      };
      // a metric without values this period is left out (an empty array is not a value)
      const present = (Object.keys(EMF_METRICS) as EmfMetric[]).filter((name) => !Array.isArray(values[name]) || (values[name] as number[]).length > 0);
      const identity = { Service: METRICS_SERVICE, Replica: ctx.identity.replicaId, Deployment: ctx.identity.deploymentId };
      const lines: Record<string, unknown>[] = [
        {
          _aws: {
            Timestamp: now,
            CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: [['Service']], Metrics: present.map((name) => ({ Name: name, Unit: EMF_METRICS[name] })) }],
          },
          ...identity,
          ...Object.fromEntries(present.map((name) => [name, values[name]])),
        },
        // provider errors by kind, one line per kind seen (a line's dimensions have one value each)
        ...[...errors].map(([kind, count]) => ({
          _aws: { Timestamp: now, CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: [['Service', 'Kind']], Metrics: [{ Name: 'ProviderErrors', Unit: 'Count' }] }] },
          ...identity,
          Kind: kind,
          ProviderErrors: count,
        })),
      ];
      latencies = [];
      firsts = [];
      turns = 0;
      failed = 0;
      errors = new Map();
      lastRefused = admission.counts.refused;
      lastStalls = stalls;
      return lines;
    },
    stop() {
      clearInterval(timer);
    },
  };

  const every = ctx.config.telemetry.emfIntervalMs;
  const timer = every > 0 ? setInterval(() => {
    for (const line of metrics.emf()) process.stdout.write(`${JSON.stringify(line)}\n`);
  }, every) : undefined;
  timer?.unref();
  return metrics;
}
