import { describe, expect, it } from 'vitest';
import { createProbe } from './probe.ts';
import { liveness, readiness } from './readiness.ts';

const up = (name: string) => createProbe(name, async () => {});
const down = (name: string, message: string) =>
  createProbe(name, async () => {
    throw new Error(message);
  });
const replica = { region: 'eu', replicaId: 'r1', deploymentId: 'd1', bootId: 'b1' };

describe('readiness', () => {
  it('is ok with 200 when every dependency is up, with per-dependency details', async () => {
    const answer = await readiness([up('primary'), up('read'), up('store')], {
      replica,
      version: '1.2.3',
      uptimeSeconds: () => 12.34,
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.body.status).toBe('ok');
    expect(answer.body.version).toBe('1.2.3');
    expect(answer.body.uptimeSeconds).toBe(12.3);
    expect(answer.body.replica).toEqual(replica);
    expect(Object.keys(answer.body.dependencies).sort()).toEqual(['primary', 'read', 'store']);
    const primary = answer.body.dependencies.primary!;
    expect(primary.status).toBe('up');
    expect(primary.required).toBe(true);
    expect(typeof primary.latencyMs).toBe('number');
    expect(Number.isNaN(Date.parse(primary.checkedAt))).toBe(false);
    expect(answer.body.dependencies.store!.required).toBe(false);
  });

  it('is degraded with 200 when only an optional dependency fails', async () => {
    const answer = await readiness([up('primary'), down('store', 'ECONNREFUSED')]);
    expect(answer.statusCode).toBe(200);
    expect(answer.body.status).toBe('degraded');
    expect(answer.body.dependencies.store).toMatchObject({ status: 'down', error: 'ECONNREFUSED' });
  });

  it('is down with 503 when the primary fails or times out', async () => {
    const failed = await readiness([down('primary', 'connection refused'), up('store')]);
    expect(failed.statusCode).toBe(503);
    expect(failed.body.status).toBe('down');
    expect(failed.body.dependencies.primary!.error).toBe('connection refused');

    const hanging = createProbe('primary', () => new Promise<void>(() => {}), { responseLimitMs: 30 });
    const started = performance.now();
    const timedOut = await readiness([hanging, up('store')]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(timedOut.statusCode).toBe(503);
    expect(timedOut.body.dependencies.primary!.status).toBe('timeout');
  });

  it('treats a required dependency without a probe as down', async () => {
    const answer = await readiness([up('store')], { required: ['primary'] });
    expect(answer.statusCode).toBe(503);
    expect(answer.body.dependencies.primary).toMatchObject({ status: 'down', error: 'no probe configured' });
  });

  it('liveness answers without any probe', () => {
    const answer = liveness({ replica, version: '9' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.body).toMatchObject({ status: 'ok', replica, version: '9' });
  });
});
