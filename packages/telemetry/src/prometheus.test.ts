import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics.ts';
import { parsePrometheus } from './prometheus-parse.ts';
import { renderRegistry } from './prometheus.ts';

describe('Prometheus text exposition', () => {
  it('renders counters, gauges and cumulative histograms with HELP/TYPE and escaped labels', () => {
    const registry = new MetricsRegistry();
    const c = registry.counter('demo_requests_total', 'Requests.\nSecond line with a \\ backslash.', ['route']);
    c.inc({ route: '/a/"quoted"\\path\nnext' }, 2);
    c.inc({ route: '/b' });
    const g = registry.gauge('demo_temperature', 'Temperature.');
    g.set({}, -1.5);
    const h = registry.histogram('demo_duration_seconds', 'Durations.', ['pool'], [0.1, 1]);
    for (const v of [0.05, 0.1, 0.5, 3]) h.observe({ pool: 'primary' }, v);
    h.observe({ pool: 'read' }, 0.2);

    const text = renderRegistry(registry);
    const families = parsePrometheus(text);
    expect([...families.keys()]).toEqual(['demo_requests_total', 'demo_temperature', 'demo_duration_seconds']);
    const counter = families.get('demo_requests_total')!;
    expect(counter.type).toBe('counter');
    expect(counter.help).toBe('Requests.\\nSecond line with a \\\\ backslash.');
    expect(counter.samples.find((s) => s.labels.route === '/a/"quoted"\\path\nnext')!.value).toBe(2);
    expect(families.get('demo_temperature')!.samples[0]!.value).toBe(-1.5);
    const hist = families.get('demo_duration_seconds')!;
    expect(hist.type).toBe('histogram');
    const primary = hist.samples.filter((s) => s.labels.pool === 'primary');
    expect(primary.map((s) => [s.name, s.labels.le, s.value])).toEqual([
      ['demo_duration_seconds_bucket', '0.1', 2],
      ['demo_duration_seconds_bucket', '1', 3],
      ['demo_duration_seconds_bucket', '+Inf', 4],
      ['demo_duration_seconds_sum', undefined, 3.65],
      ['demo_duration_seconds_count', undefined, 4],
    ]);
  });

  it('the parser rejects malformed text (so passing it means something)', () => {
    expect(() => parsePrometheus('x 1\n')).toThrow(/before HELP/);
    expect(() => parsePrometheus('# HELP x h\n# TYPE x gauge\nx{a="b} 1\n')).toThrow();
    expect(() => parsePrometheus('# HELP x h\n# TYPE x gauge\ny 1\n')).toThrow(/outside/);
    expect(() =>
      parsePrometheus('# HELP h h\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'),
    ).toThrow(/cumulative/);
    expect(() => parsePrometheus('# HELP x h\n# TYPE x gauge\nx 1')).toThrow(/newline/);
  });
});
