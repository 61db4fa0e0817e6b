/**
 * `npm run drill`: the chaos drill in full (issue 51, point 3; tests/support/drill.ts): 100 players
 * sending turns and holding streams on two replicas, PostgreSQL and Redis of its own, while
 * PostgreSQL and Redis are restarted and a replica is killed. Prints its figures and exits 1 when a
 * check failed. DRILL_PLAYERS, DRILL_SETTLE_S, DRILL_DOWN_MS and DRILL_REPLY_MS change its size.
 */
import { describeDrill, drillFailures, runDrill } from '../tests/support/drill.ts';

const n = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const report = await runDrill({
  players: n('DRILL_PLAYERS', 100),
  settleS: n('DRILL_SETTLE_S', 15),
  downMs: n('DRILL_DOWN_MS', 5_000),
  replyMs: n('DRILL_REPLY_MS', 2_000),
  log: (line) => console.log(line),
});
for (const line of describeDrill(report)) console.log(line);
const failures = drillFailures(report);
for (const f of failures) console.log(`drill: FAILED: ${f}`);
console.log(failures.length ? 'drill: failed' : 'drill: passed');
process.exit(failures.length ? 1 : 0);
