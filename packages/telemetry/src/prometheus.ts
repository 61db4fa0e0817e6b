import type { Labels, Metric, MetricsRegistry } from './metrics.ts';

/** Content type of the Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

function formatLabels(labels: Labels, extra?: [string, string]): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function renderMetric(metric: Metric, out: string[]): void {
  out.push(`# HELP ${metric.name} ${escapeHelp(metric.help)}`);
  out.push(`# TYPE ${metric.name} ${metric.kind}`);
  if (metric.kind === 'histogram') {
    for (const { labels, value } of metric.series.values()) {
      let cumulative = 0;
      metric.buckets.forEach((bound, i) => {
        cumulative += value.counts[i]!;
        out.push(`${metric.name}_bucket${formatLabels(labels, ['le', formatValue(bound)])} ${cumulative}`);
      });
      out.push(`${metric.name}_bucket${formatLabels(labels, ['le', '+Inf'])} ${value.count}`);
      out.push(`${metric.name}_sum${formatLabels(labels)} ${formatValue(value.sum)}`);
      out.push(`${metric.name}_count${formatLabels(labels)} ${value.count}`);
    }
    return;
  }
  for (const { labels, value } of metric.series.values()) {
    out.push(`${metric.name}${formatLabels(labels)} ${formatValue(value)}`);
  }
}

/** Renders every metric of the registry in the Prometheus text format (0.0.4). */
export function renderRegistry(registry: MetricsRegistry): string {
  registry.collect();
  const out: string[] = [];
  for (const metric of registry.metrics) renderMetric(metric, out);
  return `${out.join('\n')}\n`;
}
