import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './tests/support/sequencer.ts';

/**
 * `npm test` runs two workers on the 2-core machines: the suites mostly wait on servers, PostgreSQL
 * and Chromium, so the run takes about two thirds of the time it takes with one. The few tests that
 * measure real timing (event-loop stalls, a health probe's latency during imports) run afterwards,
 * alone, in the `timing` project (sequence.groupOrder 1), where no other suite competes for the cores.
 * (The browser journey ran there too; it asserts no timing, its waits are polls of 20-30 s like every
 * browser suite's, and alone at the end it kept one core idle for ~25 s of every run.)
 * `vitest bench` (mode "benchmark") runs one file at a time in one worker, so benchmarks never
 * compete with each other.
 */
const timing = ['packages/telemetry/src/sampler.test.ts', 'tests/import-stall.test.ts'];
/** Files that need a process of their own (a CPU profile is one-shot per process). */
const ownProcess = ['packages/telemetry/src/cpu-profile.test.ts', 'packages/telemetry/src/cpu-profile-abort.test.ts'];
const shared = {
  exclude: ['**/node_modules/**', '**/dist/**', '.sst/**'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};
/** Builds the web app once, before any file runs. */
const globalSetup = ['tests/support/global-setup.ts'];

const benchmarks = { test: { ...shared, globalSetup, maxWorkers: 1, benchmark: { include: ['bench/**/*.bench.ts'] } } };

const tests = {
  test: {
    globalSetup,
    reporters: ['default', './tests/support/no-skips-reporter.ts'],
    // The slowest files start first (./tests/support/sequencer.ts), so the two workers end together.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          ...shared,
          name: 'suites',
          include: ['packages/**/*.test.ts', 'functions/**/*.test.ts', 'containers/**/*.test.ts', 'tests/**/*.test.ts', 'web/src/**/*.test.ts'],
          exclude: [...shared.exclude, ...timing, ...ownProcess],
          maxWorkers: 2,
          // A worker runs its files one after another in one module graph: the app's graph is loaded
          // once per worker, not once per file (imports took 277 s of a run in forks of their own).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      { test: { ...shared, name: 'own-process', include: ownProcess, maxWorkers: 1, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'timing', include: timing, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
};

export default defineConfig(({ mode }) => (mode === 'benchmark' ? benchmarks : tests));
