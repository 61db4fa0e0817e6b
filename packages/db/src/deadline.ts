import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Deadline scopes. A scope holds the client-side timeout, in milliseconds, for every query
 * submitted inside it; the innermost scope governs. A query captures the scope's value at
 * submission, so a query that waited for a pooled client never inherits another borrower's
 * scope.
 *
 * Lazy query builders (anything that only sends SQL when awaited or `.then`-ed) must be awaited
 * inside the scope callback: a builder created inside a scope and awaited outside it runs under
 * whatever scope is current at submission time.
 */
const scope = new AsyncLocalStorage<number>();

/** Scheduled, leader-coordinated maintenance and explicit schema self-heal. */
export const MAINTENANCE_DEADLINE_MS = 300_000;
/** SQL probes of the readiness endpoint. */
export const HEALTH_PROBE_DEADLINE_MS = 4_000;

export function withDeadline<T>(ms: number, fn: () => T): T {
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`A deadline must be a positive number of ms, got ${ms}`);
  return scope.run(ms, fn);
}

export function withMaintenanceDeadline<T>(fn: () => T): T {
  return withDeadline(MAINTENANCE_DEADLINE_MS, fn);
}

export function withHealthProbeDeadline<T>(fn: () => T): T {
  return withDeadline(HEALTH_PROBE_DEADLINE_MS, fn);
}

/** The deadline of the current scope, or `fallback` (the configured ordinary deadline) outside any scope. */
export function currentDeadlineMs(fallback: number): number {
  return scope.getStore() ?? fallback;
}
