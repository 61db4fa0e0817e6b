export { BOOT_ID, createIdentity } from './identity.ts';
export type { IdentityInput, ReplicaIdentity } from './identity.ts';
export type {
  CpuProfileEvent,
  CpuProfileStack,
  DbPoolEvent,
  DbQueryEvent,
  DbQueriesEvent,
  HttpRequestsEvent,
  ErrorEvent,
  HttpRequestEvent,
  LoopDelay,
  PoolStats,
  RuntimeFigures,
  RuntimeSampleEvent,
  RuntimeStallEvent,
  StallReason,
  TelemetryEvent,
  TelemetryEventType,
} from './events.ts';
export { createCollectingSink, createPinoSink, fanOut } from './sink.ts';
export type { TelemetrySink } from './sink.ts';
export {
  DELAY_RESOLUTION_MS,
  HEALTHY_SAMPLE_EVERY_MS,
  SAMPLE_INTERVAL_MS,
  STALL_MAX_MS,
  STALL_P95_MS,
  STALL_TIMER_LATE_MS,
  startRuntimeSampler,
} from './sampler.ts';
export type { DelayMonitor, RuntimeSampler, RuntimeSamplerOptions, RuntimeTick } from './sampler.ts';
export { Counter, Gauge, Histogram, MetricsRegistry, QUERY_SECONDS_BUCKETS, REQUEST_SECONDS_BUCKETS } from './metrics.ts';
export type { Labels, MetricKind } from './metrics.ts';
export { PROMETHEUS_CONTENT_TYPE, renderRegistry } from './prometheus.ts';
export { createTelemetry, SLOW_QUERY_MS } from './telemetry.ts';
export type { RequestTiming, ResponseHookReply, ResponseHookRequest, Telemetry, TelemetryOptions } from './telemetry.ts';
export {
  assertCpuProfileSeconds,
  CPU_PROFILE_MAX_FRAMES,
  CPU_PROFILE_MAX_SECONDS,
  CPU_PROFILE_SAMPLING_INTERVAL_MS,
  CPU_PROFILE_TOP_STACKS,
  CpuProfileSecondsError,
  CpuProfileTakenError,
  heaviestStacks,
  startCpuProfile,
} from './cpu-profile.ts';
export type { CpuProfileOptions } from './cpu-profile.ts';
export { parsePrometheus } from './prometheus-parse.ts';
export type { PrometheusFamily, PrometheusSample } from './prometheus-parse.ts';
