import { describe, expect, it } from 'vitest';
import { describeDrill, drillFailures, runDrill } from './support/drill.ts';

/**
 * Issue 51, point 3: the chaos drill in short (`npm run drill` runs it with 100 players; here 8): players
 * sending turns and holding streams while PostgreSQL and Redis restart and a replica is killed.
 * No turn hangs, every error a client sees is one it was told in the shared shape, nothing
 * acknowledged is lost, no turn stays stuck, every player plays again, credits equal the ledger.
 */
describe('the chaos drill (short form)', () => {
  it('PostgreSQL and Redis restarted and a replica killed under load: every client told and recovered, nothing lost', async () => {
    const players = 8;
    const report = await runDrill({ players, settleS: 2, downMs: 1_500, replyMs: 600 });
    for (const line of describeDrill(report)) console.log(line);
    expect(drillFailures(report)).toEqual([]);
    // the faults were felt: each one told some client something, and the streams were cut or told to reconnect
    expect(report.faults.map((f) => f.fault)).toEqual(['PostgreSQL restarted', 'Redis restarted', 'replica killed (SIGKILL)']);
    expect(Object.keys(report.faults[2]!.errors).length).toBeGreaterThan(0);
    expect(report.streams.opened).toBeGreaterThan(players);
    expect(report.turnsAcknowledged).toBeGreaterThan(players * 3);
  }, 300_000);
});
