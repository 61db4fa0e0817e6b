/**
 * The allowance of the turn's regression guard (bench/turn.bench.ts, TURN_BENCH_GUARD=1): how much
 * more server CPU per turn than the previous release a tree may take. By default 1.10× (runs of one
 * revision differ by up to ~10 % on the shared 2-vCPU machines); docs/BENCHMARKS.md may allow more
 * for a change that needs it, with its reason on the same line:
 *   turn-cpu-allowance: 1.25× — the prompt now counts its tokens with the model's own tokenizer
 * A line without a reason allows nothing.
 */
export const DEFAULT_TURN_CPU_ALLOWANCE = 1.1;

export function turnCpuAllowance(benchmarksMd: string): { ratio: number; reason: string } {
  const line = /^turn-cpu-allowance:\s*([0-9]+(?:\.[0-9]+)?)\s*×\s*[—-]\s*(\S.*)$/m.exec(benchmarksMd);
  if (!line) return { ratio: DEFAULT_TURN_CPU_ALLOWANCE, reason: 'the default: no allowance written in docs/BENCHMARKS.md' };
  const ratio = Number(line[1]);
  return { ratio: Math.max(ratio, DEFAULT_TURN_CPU_ALLOWANCE), reason: line[2]!.trim() };
}

/**
 * Admission as both servers of the turn bench run (its baseline and ./turn-server.ts): the bench's
 * 50 players share one loopback address (no share per address, issue 43) and measure the CPU of
 * turns, not the refusals of a saturated loop (its gate off: issue 51, point 10 is about what it
 * refuses). A revision that predates a setting ignores it.
 */
export const BENCH_ADMISSION = { ADMISSION_PER_ADDRESS: '0', ADMISSION_MAX_LOOP_UTILIZATION: '100' };
