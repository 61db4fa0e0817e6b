export { createProbe, HEALTH_SQL_PROBE_DEADLINE_MS, PROBE_CACHE_MS, PROBE_RESPONSE_LIMIT_MS } from './probe.ts';
export type { Probe, ProbeOptions, ProbeResult, ProbeStatus } from './probe.ts';
export { HEALTH_HEADERS, liveness, readiness } from './readiness.ts';
export type {
  DependencyReport,
  LivenessBody,
  ReadinessAnswer,
  ReadinessBody,
  ReadinessOptions,
  ReadinessStatus,
} from './readiness.ts';
