#!/usr/bin/env node
// Type-checks the code (tsconfig.json) and the AWS infrastructure (sst.config.ts + infra/).
// The infrastructure needs SST's generated platform types in .sst/platform; they are installed
// from the npm registry on first use (about a minute).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const run = (cmd, args, env = process.env) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run('npx', ['tsc', '-p', 'tsconfig.json']);
if (!existsSync(join(root, '.sst/platform/config.d.ts'))) {
  console.log('Installing SST platform types (first run)…');
  run('npx', ['sst', 'install', '--stage', 'dev'], {
    ...process.env,
    HOME: mkdtempSync(join(tmpdir(), 'sst-home-')),
    SST_TELEMETRY_DISABLED: '1',
    SST_SKIP_DEPENDENCY_CHECK: '1',
    SST_NO_BUN: '1',
  });
}
run('npx', ['tsc', '-p', 'infra/tsconfig.json']);
console.log('typecheck: code and infrastructure OK');
