import { describe, expect, it } from 'vitest';
import { DEFAULT_TURN_CPU_ALLOWANCE, turnCpuAllowance } from '../bench/turn-guard.ts';

describe('the turn guard’s allowance (issue 51, point 9)', () => {
  it('is 1.10× unless docs/BENCHMARKS.md allows more with a reason on the same line', () => {
    expect(turnCpuAllowance('# Benchmarks\nno allowance here\n').ratio).toBe(DEFAULT_TURN_CPU_ALLOWANCE);
    expect(turnCpuAllowance('turn-cpu-allowance: 1.25× — the prompt counts its tokens with the model’s tokenizer\n')).toEqual({ ratio: 1.25, reason: 'the prompt counts its tokens with the model’s tokenizer' });
    // without a reason nothing is allowed; an allowance below the default does not tighten the guard into flakiness
    expect(turnCpuAllowance('turn-cpu-allowance: 1.5×\n').ratio).toBe(DEFAULT_TURN_CPU_ALLOWANCE);
    expect(turnCpuAllowance('turn-cpu-allowance: 0.9× — tighter\n').ratio).toBe(DEFAULT_TURN_CPU_ALLOWANCE);
  });
});
