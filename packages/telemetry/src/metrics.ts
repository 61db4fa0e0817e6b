/**
 * A small in-process metrics registry: counters, gauges and fixed-bucket histograms keyed by
 * label values. It holds figures only; `prometheus.ts` renders them.
 */

export type Labels = Record<string, string>;
export type MetricKind = 'counter' | 'gauge' | 'histogram';

interface Series<V> {
  labels: Labels;
  value: V;
}

export interface HistogramValue {
  /** Non-cumulative counts per bucket; the last slot counts values above the largest bound. */
  counts: number[];
  sum: number;
  count: number;
}

abstract class Family<V> {
  readonly series = new Map<string, Series<V>>();
  abstract readonly kind: MetricKind;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  protected at(labels: Labels, init: () => V): Series<V> {
    const key = this.labelNames.map((n) => labels[n] ?? '').join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const own: Labels = {};
      for (const n of this.labelNames) own[n] = labels[n] ?? '';
      s = { labels: own, value: init() };
      this.series.set(key, s);
    }
    return s;
  }
}

export class Counter extends Family<number> {
  readonly kind = 'counter';
  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) return;
    this.at(labels, () => 0).value += by;
  }
  /** For totals kept elsewhere (process CPU seconds) and copied in at collection time. */
  setTotal(labels: Labels, total: number): void {
    this.at(labels, () => 0).value = total;
  }
}

export class Gauge extends Family<number> {
  readonly kind = 'gauge';
  set(labels: Labels, value: number): void {
    this.at(labels, () => 0).value = value;
  }
}

export class Histogram extends Family<HistogramValue> {
  readonly kind = 'histogram';
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    /** Upper bounds, ascending. */
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }
  observe(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    const s = this.at(labels, () => ({ counts: new Array(this.buckets.length + 1).fill(0), sum: 0, count: 0 }));
    let i = 0;
    while (i < this.buckets.length && value > this.buckets[i]!) i++;
    s.value.counts[i]! += 1;
    s.value.sum += value;
    s.value.count += 1;
  }
}

export type Metric = Counter | Gauge | Histogram;

export class MetricsRegistry {
  readonly metrics: Metric[] = [];
  private readonly collectors: Array<() => void> = [];

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }
  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labelNames, buckets));
  }
  /** Runs right before each render, to refresh gauges read on demand. */
  onCollect(collect: () => void): void {
    this.collectors.push(collect);
  }
  collect(): void {
    for (const c of this.collectors) {
      try {
        c();
      } catch {
        // A broken collector leaves its figures stale rather than failing the scrape.
      }
    }
  }

  private add<M extends Metric>(metric: M): M {
    if (this.metrics.some((m) => m.name === metric.name)) throw new Error(`metric ${metric.name} registered twice`);
    this.metrics.push(metric);
    return metric;
  }
}

/** Seconds; from 1 ms to the 60 s query deadline. */
export const QUERY_SECONDS_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;
/** Seconds. */
export const REQUEST_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;
