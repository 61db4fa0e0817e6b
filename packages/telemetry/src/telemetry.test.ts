import { Writable } from 'node:stream';
import { createHistogram } from 'node:perf_hooks';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PoolStats, TelemetryEvent } from './events.ts';
import { createIdentity } from './identity.ts';
import { parsePrometheus } from './prometheus-parse.ts';
import { createCollectingSink, createPinoSink } from './sink.ts';
import { createTelemetry } from './telemetry.ts';

const identity = createIdentity({ region: 'us-east-1', replicaId: 'r-2', deploymentId: 'dep-42' });
const identityFields = { region: 'us-east-1', replicaId: 'r-2', deploymentId: 'dep-42', bootId: identity.bootId };

function pinoLines() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

describe('identity', () => {
  it('keeps one boot id per process and falls back to host-pid for the replica id', () => {
    const other = createIdentity({ region: 'x', deploymentId: 'y' });
    expect(other.bootId).toBe(identity.bootId);
    expect(other.replicaId).toMatch(new RegExp(`-${process.pid}$`));
    expect(Object.isFrozen(other)).toBe(true);
  });
});

describe('pino sink', () => {
  it('writes one JSON line per record with the stable type and identity fields at the top level', () => {
    const { lines, logger } = pinoLines();
    const telemetry = createTelemetry({ identity, sink: createPinoSink(logger), slowQueryMs: 100 });
    telemetry.recordQuery('primary', 250, true, 'select * from worlds where id = $1');
    telemetry.recordRequest({ method: 'GET', route: '/health', status: 200, durationMs: 3.21 });
    telemetry.captureError(Object.assign(new Error('boom'), { code: 'DB_QUERY_TIMEOUT' }), 'route /x');
    expect(lines.map((l) => l.type)).toEqual(['db.query', 'http.request', 'error']);
    for (const line of lines) expect(line).toMatchObject(identityFields);
    expect(lines[0]).toMatchObject({ pool: 'primary', durationMs: 250, ok: true, slowQueryMs: 100, level: 40 });
    expect(lines[1]).toMatchObject({ method: 'GET', route: '/health', status: 200, durationMs: 3.2, level: 30 });
    expect(lines[2]).toMatchObject({ name: 'Error', message: 'boom', code: 'DB_QUERY_TIMEOUT', where: 'route /x', level: 50 });
    expect(typeof lines[2]!.stack).toBe('string');
  });
});

describe('telemetry records', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('times every query per pool and logs only slow ones, one line each', () => {
    const sink = createCollectingSink();
    const telemetry = createTelemetry({ identity, sink, slowQueryMs: 1000 });
    for (let i = 0; i < 20; i++) telemetry.recordQuery('primary', 2, true);
    telemetry.recordQuery('primary', 1500, false);
    telemetry.recordQuery('read', 1000, true);
    telemetry.recordQuery('read', 999, true);
    const slow = sink.events.filter((e) => e.type === 'db.query');
    expect(slow).toHaveLength(2);
    expect(slow.map((e) => e.type === 'db.query' && [e.pool, e.durationMs, e.ok])).toEqual([
      ['primary', 1500, false],
      ['read', 1000, true],
    ]);
    const families = parsePrometheus(telemetry.renderPrometheus());
    const hist = families.get('yumina_db_query_duration_seconds')!;
    expect(hist.samples.find((s) => s.name.endsWith('_count') && s.labels.pool === 'primary')!.value).toBe(21);
    expect(hist.samples.find((s) => s.name.endsWith('_count') && s.labels.pool === 'read')!.value).toBe(2);
    const primaryFast = hist.samples.find((s) => s.labels.pool === 'primary' && s.labels.le === '0.0025')!;
    expect(primaryFast.value).toBe(20);
    const outcomes = families.get('yumina_db_queries_total')!.samples;
    expect(outcomes.find((s) => s.labels.pool === 'primary' && s.labels.outcome === 'error')!.value).toBe(1);
    expect(families.get('yumina_db_slow_queries_total')!.samples.map((s) => [s.labels.pool, s.value])).toEqual([
      ['primary', 1],
      ['read', 1],
    ]);
  });

  it('onResponse records the route template, status and duration, and calls done', () => {
    const sink = createCollectingSink();
    const telemetry = createTelemetry({ identity, sink });
    const done = vi.fn();
    telemetry.onResponse({ method: 'GET', routeOptions: { url: '/api/worlds/:id' } }, { statusCode: 200, elapsedTime: 12.34 }, done);
    telemetry.onResponse({ method: 'GET', routeOptions: {} }, { statusCode: 404, elapsedTime: 0.5 });
    expect(done).toHaveBeenCalledTimes(1);
    const requests = sink.events.filter((e) => e.type === 'http.request');
    expect(requests).toEqual([
      { type: 'http.request', ...identityFields, method: 'GET', route: '/api/worlds/:id', status: 200, durationMs: 12.3 },
      { type: 'http.request', ...identityFields, method: 'GET', route: 'unmatched', status: 404, durationMs: 0.5 },
    ]);
    const hist = parsePrometheus(telemetry.renderPrometheus()).get('yumina_http_request_duration_seconds')!;
    const count = hist.samples.find((s) => s.name.endsWith('_count') && s.labels.route === '/api/worlds/:id')!;
    expect(count.labels).toEqual({ method: 'GET', route: '/api/worlds/:id', status: '200' });
    expect(count.value).toBe(1);
  });

  it('captures non-Error throws and counts errors by code', () => {
    const sink = createCollectingSink();
    const telemetry = createTelemetry({ identity, sink });
    telemetry.captureError('plain');
    telemetry.captureError(undefined);
    telemetry.captureError(Object.assign(new Error('x'), { code: 'E1' }));
    expect(sink.events.map((e) => e.type === 'error' && e.message)).toEqual(['plain', 'non-error value thrown', 'x']);
    const errors = parsePrometheus(telemetry.renderPrometheus()).get('yumina_errors_total')!.samples;
    expect(errors.map((s) => [s.labels.code, s.value])).toEqual([
      ['none', 2],
      ['E1', 1],
    ]);
  });

  it('a throwing sink or pool reader never reaches the caller', () => {
    const telemetry = createTelemetry({
      identity,
      sink: {
        emit() {
          throw new Error('sink down');
        },
      },
      poolStats: () => {
        throw new Error('pool gone');
      },
      slowQueryMs: 1,
    });
    expect(() => telemetry.recordQuery('primary', 5, true)).not.toThrow();
    expect(() => telemetry.captureError(new Error('e'))).not.toThrow();
    expect(() => telemetry.recordRequest({ method: 'GET', route: '/', status: 200, durationMs: 1 })).not.toThrow();
    expect(() => telemetry.reportPools()).not.toThrow();
    expect(() => parsePrometheus(telemetry.renderPrometheus())).not.toThrow();
  });

  it('reports pool pressure when clients start waiting and every healthy period, and exposes the gauges', async () => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'Date', 'performance'],
    });
    const histogram = createHistogram();
    const feed = setInterval(() => histogram.record(10_100_000), 10);
    let stats: PoolStats[] = [
      { pool: 'primary', total: 10, idle: 8, waiting: 0 },
      { pool: 'read', total: 2, idle: 2, waiting: 0 },
    ];
    const sink = createCollectingSink();
    const telemetry = createTelemetry({
      identity,
      sink,
      poolStats: () => stats,
      sampler: { intervalMs: 1000, healthyEveryMs: 30_000, delayMonitor: histogram },
    });
    telemetry.start();
    telemetry.start(); // idempotent
    const pools = () => sink.events.filter((e): e is Extract<TelemetryEvent, { type: 'db.pool' }> => e.type === 'db.pool');

    await vi.advanceTimersByTimeAsync(1_005);
    expect(pools().map((e) => [e.pool, e.trigger])).toEqual([
      ['primary', 'periodic'],
      ['read', 'periodic'],
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(pools()).toHaveLength(2);

    stats = [
      { pool: 'primary', total: 100, idle: 0, waiting: 7 },
      { pool: 'read', total: 2, idle: 2, waiting: 0 },
    ];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(pools().slice(2)).toEqual([
      { type: 'db.pool', ...identityFields, pool: 'primary', total: 100, idle: 0, waiting: 7, trigger: 'pressure' },
    ]);
    await vi.advanceTimersByTimeAsync(3_000); // still waiting: no repeat
    expect(pools()).toHaveLength(3);

    const families = parsePrometheus(telemetry.renderPrometheus());
    const connections = families.get('yumina_db_pool_connections')!.samples;
    expect(connections.find((s) => s.labels.pool === 'primary' && s.labels.state === 'total')!.value).toBe(100);
    expect(families.get('yumina_db_pool_waiting_clients')!.samples.find((s) => s.labels.pool === 'primary')!.value).toBe(7);

    await vi.advanceTimersByTimeAsync(21_000); // 31 s in: the next periodic report and a healthy sample
    expect(pools().slice(3).map((e) => [e.pool, e.trigger])).toEqual([
      ['primary', 'periodic'],
      ['read', 'periodic'],
    ]);
    expect(sink.events.filter((e) => e.type === 'runtime.sample')).toHaveLength(1);
    telemetry.stop();
    clearInterval(feed);
    const count = sink.events.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sink.events.length).toBe(count);
  });

  it('query and request timing reach the default log level with the replica identity: one sampled record per pool and period', async () => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'Date', 'performance'],
    });
    const histogram = createHistogram();
    const feed = setInterval(() => histogram.record(1_000_000), 10);
    const { lines, logger } = pinoLines(); // level info, the default LOG_LEVEL
    // As the server builds it at the default level: no per-request lines, slow queries at 1 s.
    const telemetry = createTelemetry({
      identity,
      sink: createPinoSink(logger),
      logRequests: false,
      slowQueryMs: 1000,
      poolStats: () => [{ pool: 'primary', total: 3, idle: 1, waiting: 0 }],
      sampler: { intervalMs: 1000, healthyEveryMs: 30_000, delayMonitor: histogram },
    });
    telemetry.start();
    await vi.advanceTimersByTimeAsync(1_005);
    for (let i = 1; i <= 100; i++) telemetry.recordQuery('primary', i, i !== 7);
    telemetry.recordQuery('read', 4, true);
    for (let i = 0; i < 10; i++) telemetry.recordRequest({ method: 'GET', route: '/api/worlds', status: i === 0 ? 503 : 200, durationMs: 20 + i });
    expect(lines.filter((l) => l.type === 'db.queries' || l.type === 'http.requests')).toEqual([]);
    await vi.advanceTimersByTimeAsync(30_000);
    const queries = lines.filter((l) => l.type === 'db.queries');
    expect(queries).toEqual([
      expect.objectContaining({ ...identityFields, level: 30, pool: 'primary', count: 100, failed: 1, meanMs: 50.5, p95Ms: 95, maxMs: 100, periodMs: 30_000 }),
      expect.objectContaining({ ...identityFields, level: 30, pool: 'read', count: 1, failed: 0, p95Ms: 4, maxMs: 4 }),
    ]);
    expect(lines.filter((l) => l.type === 'http.requests')).toEqual([
      expect.objectContaining({ ...identityFields, level: 30, count: 10, failed: 1, maxMs: 29, p95Ms: 29, periodMs: 30_000 }),
    ]);
    // Connection counts and pool pressure: the periodic db.pool line, at the default level too.
    expect(lines.filter((l) => l.type === 'db.pool').at(-1)).toMatchObject({ ...identityFields, level: 30, total: 3, idle: 1, waiting: 0 });
    // A quiet period writes no timing record.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(lines.filter((l) => l.type === 'db.queries')).toHaveLength(2);
    telemetry.stop();
    clearInterval(feed);
  });

  it('exposes runtime and identity figures as valid Prometheus text', () => {
    const telemetry = createTelemetry({ identity, sink: createCollectingSink() });
    const text = telemetry.renderPrometheus();
    const families = parsePrometheus(text);
    expect(families.get('yumina_replica_info')!.samples[0]).toEqual({
      name: 'yumina_replica_info',
      labels: { region: 'us-east-1', replica_id: 'r-2', deployment_id: 'dep-42', boot_id: identity.bootId },
      value: 1,
    });
    expect(families.get('process_resident_memory_bytes')!.samples[0]!.value).toBeGreaterThan(1_000_000);
    expect(families.get('process_cpu_user_seconds_total')!.type).toBe('counter');
    expect(families.get('process_cpu_user_seconds_total')!.samples[0]!.value).toBeGreaterThan(0);
    for (const family of families.values()) expect(family.help.length).toBeGreaterThan(0);
  });
});
