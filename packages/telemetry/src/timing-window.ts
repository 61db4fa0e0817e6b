/**
 * Durations of one reporting period, summarised for a sampled record: count, failures, mean, p95
 * (over a bounded uniform sample of the period's durations) and max. Memory stays bounded however
 * many operations the period sees.
 */
export interface TimingSummary {
  count: number;
  failed: number;
  meanMs: number;
  p95Ms: number;
  maxMs: number;
}

const SAMPLE_SIZE = 256;
const round = (ms: number) => Math.round(ms * 10) / 10;

export class TimingWindow {
  #count = 0;
  #failed = 0;
  #sumMs = 0;
  #maxMs = 0;
  #sample: number[] = [];

  add(durationMs: number, failed: boolean): void {
    this.#count += 1;
    if (failed) this.#failed += 1;
    this.#sumMs += durationMs;
    if (durationMs > this.#maxMs) this.#maxMs = durationMs;
    // Reservoir sampling: every duration of the period has the same chance to be kept.
    if (this.#sample.length < SAMPLE_SIZE) this.#sample.push(durationMs);
    else {
      const slot = Math.floor(Math.random() * this.#count);
      if (slot < SAMPLE_SIZE) this.#sample[slot] = durationMs;
    }
  }

  /** The period's summary (undefined when nothing happened), and a fresh period. */
  take(): TimingSummary | undefined {
    if (this.#count === 0) return undefined;
    const sorted = this.#sample.sort((a, b) => a - b);
    const summary = {
      count: this.#count,
      failed: this.#failed,
      meanMs: round(this.#sumMs / this.#count),
      p95Ms: round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!),
      maxMs: round(this.#maxMs),
    };
    this.#count = 0;
    this.#failed = 0;
    this.#sumMs = 0;
    this.#maxMs = 0;
    this.#sample = [];
    return summary;
  }
}
