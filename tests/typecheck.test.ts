import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';

// `npm run typecheck` covers the code and sst.config.ts with infra/ (SST's generated platform types).
it('npm run typecheck passes, including sst.config.ts', () => {
  const run = spawnSync('npm', ['run', 'typecheck'], { cwd: resolve(import.meta.dirname, '..'), encoding: 'utf8', timeout: 540_000 });
  expect(run.stdout + run.stderr).toMatch(/typecheck: code and infrastructure OK/);
  expect(run.status).toBe(0);
}, 600_000);
