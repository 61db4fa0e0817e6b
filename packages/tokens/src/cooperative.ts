/**
 * Cooperative execution of step generators: a piece of work is written once as a generator that
 * yields between messages, and run either synchronously (yields ignored) or cooperatively (a
 * macrotask yield whenever the time slice is used up). Both drivers run the very same steps, so
 * they make the same decisions by construction.
 */

/** Time slice after which cooperative work yields, checked between messages. */
export const COOPERATIVE_SLICE_MS = 8;

/** Gives the event loop a turn: timers, sockets and other I/O callbacks run before this resolves. */
export function yieldToEventLoop(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(null);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export interface CooperativeOptions {
  /** Slice length in ms (default 8). */
  sliceMs?: number;
  /** Aborts the work at the next checkpoint. */
  signal?: AbortSignal;
  /** Called after each yield (tests and telemetry). */
  onYield?: () => void;
}

export interface CooperativeStats {
  /** Macrotask yields taken. */
  yields: number;
}

/** Runs a step generator to completion without yielding to the event loop. */
export function runSteps<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs a step generator, yielding to the event loop whenever a slice is used up (checked at each step). */
export async function runStepsCooperatively<T>(
  steps: Generator<void, T, void>,
  options: CooperativeOptions = {},
  stats: CooperativeStats = { yields: 0 },
): Promise<T> {
  const sliceMs = options.sliceMs ?? COOPERATIVE_SLICE_MS;
  let sliceStart = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await yieldToEventLoop();
      stats.yields++;
      options.onYield?.();
      options.signal?.throwIfAborted();
      sliceStart = performance.now();
    }
  }
}
