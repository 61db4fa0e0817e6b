import type { Logger } from 'pino';
import type { TelemetryEvent } from './events.ts';

/** Where telemetry records go. `emit` must not throw; callers guard it anyway. */
export interface TelemetrySink {
  emit(event: TelemetryEvent): void;
}

const WARN_TYPES = new Set(['runtime.stall', 'db.query']);

/**
 * Writes each record as one pino JSON line. The record's fields sit at the top level, so the
 * stable `type` field (runtime.sample, runtime.stall, db.pool, db.query, http.request, error,
 * runtime.cpu_profile) and the identity fields can be filtered on directly.
 */
export function createPinoSink(logger: Logger): TelemetrySink {
  return {
    emit(event) {
      try {
        if (event.type === 'error') logger.error(event, event.message);
        else if (WARN_TYPES.has(event.type)) logger.warn(event, event.type);
        else logger.info(event, event.type);
      } catch {
        // Reporting never throws into the application.
      }
    },
  };
}

/** Keeps records in memory (for tests and for fanning out to several sinks). */
export function createCollectingSink(): TelemetrySink & { events: TelemetryEvent[] } {
  const events: TelemetryEvent[] = [];
  return {
    events,
    emit(event) {
      events.push(event);
    },
  };
}

/** Sends each record to every sink; one failing sink does not stop the others. */
export function fanOut(...sinks: TelemetrySink[]): TelemetrySink {
  return {
    emit(event) {
      for (const sink of sinks) {
        try {
          sink.emit(event);
        } catch {
          // ignored: see createPinoSink
        }
      }
    },
  };
}
