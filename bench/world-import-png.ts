/**
 * A child of bench/world-import.bench.ts: times importWorld on a PNG card with the world package
 * at the path given (this tree's, or a baseline checkout's), in a process of its own, and prints
 * one JSON line: {times: [ms, ...], ok, entries}.
 *
 *   node --import tsx bench/world-import-png.ts <packages/world/src/index.ts> <card.png> <rounds>
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [modulePath, cardPath, roundsText] = process.argv.slice(2);
const world = (await import(pathToFileURL(modulePath!).href)) as { importWorld(input: unknown): { ok: boolean; world?: { entries: unknown[] } } };
const bytes = new Uint8Array(readFileSync(cardPath!));
const times: number[] = [];
let last: { ok: boolean; world?: { entries: unknown[] } } = { ok: false };
for (let round = 0; round < Number(roundsText ?? 5); round++) {
  // A copy per round, as a request body would be.
  const input = bytes.slice();
  const start = performance.now();
  last = world.importWorld(input);
  times.push(performance.now() - start);
}
process.stdout.write(`${JSON.stringify({ times, ok: last.ok, entries: last.world?.entries.length ?? 0 })}\n`);
