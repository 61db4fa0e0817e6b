import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/**/*.test.ts', 'functions/**/*.test.ts', 'containers/**/*.test.ts', 'tests/**/*.test.ts', 'web/src/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', '.sst/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['tests/support/global-setup.ts'],
    reporters: ['default', './tests/support/no-skips-reporter.ts'],
    benchmark: { include: ['bench/**/*.bench.ts'] },
  },
});
