#!/usr/bin/env node
// Installs SST's platform types (.sst/platform), which `npm run typecheck` needs for sst.config.ts
// and infra/. Runs as the root package's postinstall, so `npm install` brings them and `npm test`
// fetches nothing: `sst install` asks the npm registry for its AWS provider and npm-installs the
// platform's packages (about 300 MB, 30-60 s), which needs the registry. Does nothing when the
// types match the installed sst, or when sst is not installed (a production install, --omit=dev).
// `npm run sst:platform` runs it again by hand.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const sstPackage = join(root, 'node_modules/sst/package.json');

/** Why the platform types are not usable, or undefined when they are. */
export function platformProblem() {
  if (!existsSync(sstPackage)) return 'sst is not installed (run `npm install`)';
  const wanted = JSON.parse(readFileSync(sstPackage, 'utf8')).version;
  const version = join(root, '.sst/platform/version');
  if (!existsSync(join(root, '.sst/platform/config.d.ts')) || !existsSync(version)) return "SST's platform types are not installed (.sst/platform)";
  const have = readFileSync(version, 'utf8').trim();
  if (have !== wanted) return `SST's platform types are for sst ${have}, the installed sst is ${wanted}`;
  return undefined;
}

function install() {
  if (!existsSync(sstPackage)) return 0; // production install without devDependencies: nothing to type-check
  const problem = platformProblem();
  if (!problem) return 0;
  console.log(`${problem}: installing them with \`sst install\` (from the npm registry, about a minute)…`);
  // A home of its own, so SST keeps nothing in the user's; npm's cache stays the user's own.
  const home = mkdtempSync(join(tmpdir(), 'sst-home-'));
  try {
    const run = spawnSync(join(root, 'node_modules/.bin/sst'), ['install', '--stage', 'dev'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      env: {
        ...process.env,
        HOME: home,
        npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
        SST_TELEMETRY_DISABLED: '1',
        SST_SKIP_DEPENDENCY_CHECK: '1',
        SST_NO_BUN: '1',
      },
    });
    const left = platformProblem();
    if (run.status !== 0 || left) {
      const detail = (run.stderr || '').trim().split('\n').filter(Boolean).at(-1) ?? left ?? `exit ${run.status}`;
      console.error(`Could not install SST's platform types (${detail}); \`npm run typecheck\` and its test need them: run \`npm run sst:platform\` with the npm registry reachable.`);
      return 1;
    }
    console.log("SST's platform types installed in .sst/platform.");
    return 0;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exit(install());
