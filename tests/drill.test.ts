import { describe, expect, it } from 'vitest';
import { describeDrill, drillFailures, runDrill } from './support/drill.ts';

/**
 * Issue 51, point 3: the chaos drill in short (`npm run drill` runs it with 100 players): players
 * sending turns and holding streams while PostgreSQL and Redis restart and a replica is killed.
 * No turn hangs, every error a client sees is one it was told in the shared shape, nothing
 * acknowledged is lost, no turn stays stuck, every player plays again, credits equal the ledger.
 */
describe('the chaos drill (short form)', () => {
  it('PostgreSQL and Redis restarted and a replica killed under load: every client told and recovered, nothing lost', async () => {
    const report = await runDrill({ players: 12, settleS: 4, downMs: 2_000, replyMs: 1_000 });
    for (const line of describeDrill(report)) console.log(line);
    expect(drillFailures(report)).toEqual([]);
    // the faults were felt: each one told some client something, and the streams were cut or told to reconnect
    expect(report.faults.map((f) => f.fault)).toEqual(['PostgreSQL restarted', 'Redis restarted', 'replica killed (SIGKILL)']);
    expect(Object.keys(report.faults[2]!.errors).length).toBeGreaterThan(0);
    expect(report.streams.opened).toBeGreaterThan(12);
    expect(report.turnsAcknowledged).toBeGreaterThan(12 * 3);
  }, 300_000);
});
