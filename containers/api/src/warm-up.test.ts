import { describe, expect, it } from 'vitest';
import { loadConfig } from '@yumina/config';
import { startTestServer } from '../../../tests/support/server.ts';
import { admissionOf } from './admission.ts';
import { warmShedding } from './warm-up.ts';

const replica = { config: { version: 'test' }, identity: { replicaId: 'r1', bootId: 'b1' }, startedAt: Date.now() } as unknown as Parameters<typeof warmShedding>[0];

/** The servers and sockets open in this process now (their counts). */
function handles(): { servers: number; sockets: number } {
  const open = (process as unknown as { _getActiveHandles(): { constructor?: { name?: string } }[] })._getActiveHandles();
  const named = (name: string) => open.filter((h) => h.constructor?.name === name).length;
  return { servers: named('Server'), sockets: named('Socket') };
}

describe('warming the refusal path at start', () => {
  it('answers the asked number of requests on a private server of its own, then closes it and its connections', async () => {
    const before = handles();
    const result = await warmShedding(replica, 730, 40);
    expect(result.requests).toBe(730);
    expect(result.ms).toBeGreaterThan(0);
    // Nothing left behind: no listening server, no connection (the suite's own, e.g. to the database, stay as they were).
    await expect.poll(handles, { timeout: 2000 }).toEqual(before);
  });

  it('fewer requests than connections use as many connections as requests; none does nothing', async () => {
    expect((await warmShedding(replica, 7, 50)).requests).toBe(7);
    expect(await warmShedding(replica, 0)).toEqual({ requests: 0, ms: 0 });
  });

  it('ADMISSION_WARM_UP sets how many (default 1,000; 0 turns it off; a bad value is a clear error)', () => {
    const base = { DATABASE_URL: 'postgres://localhost/x' };
    expect(loadConfig(base).admission.warmUp).toBe(1000);
    expect(loadConfig({ ...base, ADMISSION_WARM_UP: '0' }).admission.warmUp).toBe(0);
    expect(loadConfig({ ...base, ADMISSION_WARM_UP: '2500' }).admission.warmUp).toBe(2500);
    expect(() => loadConfig({ ...base, ADMISSION_WARM_UP: '-1' })).toThrow(/ADMISSION_WARM_UP/);
  });

  it('a replica warms before it listens, leaving its own queue and figures untouched; ADMISSION_WARM_UP=0 skips it', async () => {
    for (const [setting, expected] of [[undefined, 1000], ['0', 0]] as const) {
      const lines: string[] = [];
      const server = await startTestServer({ LOG_LEVEL: 'info', ...(setting === undefined ? {} : { ADMISSION_WARM_UP: setting }) }, { logDestination: { write: (line: string) => void lines.push(line) } });
      try {
        const logged = lines.map((l) => JSON.parse(l) as { msg: string; warmUp?: { requests: number; ms: number } });
        const warmed = logged.findIndex((l) => l.warmUp);
        const listening = logged.findIndex((l) => l.msg.startsWith('Listening on'));
        expect(listening).toBeGreaterThanOrEqual(0);
        if (expected === 0) expect(warmed).toBe(-1);
        else {
          expect(logged[warmed]!.warmUp).toEqual({ requests: expected, ms: expect.any(Number) });
          expect(warmed).toBeLessThan(listening);
        }
        // The warm-up's refusals were its own: the replica has admitted and refused nothing, and its
        // request figures hold no liveness answers.
        expect(admissionOf(server.ctx).counts).toEqual({ admitted: 0, refused: 0 });
        expect(server.ctx.telemetry.renderPrometheus()).not.toMatch(/route="(admission|\/health\/live)"/);
        expect((await fetch(`${server.url}/health/live`)).status).toBe(200);
        expect(server.ctx.telemetry.renderPrometheus()).toMatch(/route="\/health\/live"/); // (how one shows)
      } finally {
        await server.stop();
      }
    }
  });
});
