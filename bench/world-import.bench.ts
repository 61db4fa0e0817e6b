/**
 * Importing a 5 MB world of the public format (version 8.0.0: older entry layout, legacy
 * interface, `@asset:` links) against `validateWorld` of the imported result alone (issue 21).
 * Besides vitest's tables it prints one line `world-import:` with the ratio of the medians of
 * interleaved rounds (import, validate, import, validate, ...).
 *
 * The PNG path (issue 31): a 4 MB SillyTavern card (a real picture, and a 1 MB lorebook in its
 * ccv3 and chara chunks) imported by today's code and by this tree's, each in a process of its
 * own (bench/world-import-png.ts), interleaved. Today's is BASELINE, the last commit before the
 * issue-31 work, checked out at run time as a git worktree under .bench/baselines/<commit>
 * by ./baseline.ts (git-ignored; installed once with `npm ci` and reused;
 * WORLD_IMPORT_BENCH_REVISION names another). Printed as one `world-import-png:` line with the medians.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, bench, describe } from 'vitest';
import { importWorld, validateWorld } from '../packages/world/src/index.ts';
import { cardPng } from '../tests/support/card-png.ts';
import { baselineCheckout } from './baseline.ts';

const root = resolve(import.meta.dirname, '..');
/** The last commit before issue 31's import work. */
const BASELINE = process.env.WORLD_IMPORT_BENCH_REVISION ?? '1887fa08a28921269e37cc19e9d3935d059a23de';

const run = (cmd: string, args: string[], cwd: string) => {
  const result = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 900_000, env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' } });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}: ${result.stderr || result.stdout || result.error?.message}`);
  return result.stdout.trim();
};

function buildWorld(): string {
  const entries: unknown[] = [];
  const variables: unknown[] = [];
  for (let index = 0; index < 200; index++) variables.push({ id: `stat_${index}`, name: `Stat ${index}`, type: 'number', defaultValue: 10, category: 'stat', description: 'a stat', behaviorRules: 'Rises with success.' });
  const prose = 'The lanterns sway above the wet stones while the river mutters beneath the old bridge. '.repeat(12);
  let size = 0;
  for (let index = 0; size < 5 * 1024 * 1024; index++) {
    const entry = {
      id: `entry_${index}`,
      name: `Entry ${index}`,
      content: `${prose} {{stat_${index % 200}}} ![view](@asset:picture-${index % 50})`,
      role: index % 3 === 0 ? 'lore' : index % 3 === 1 ? 'personality' : 'system',
      position: index % 3 === 0 ? 'keyword' : 'before_char',
      order: index,
      ...(index % 3 === 0 ? { keys: [`lantern${index}`, `bridge${index}`] } : {}),
    };
    size += JSON.stringify(entry).length;
    entries.push(entry);
  }
  return JSON.stringify({
    version: '8.0.0',
    id: 'big-world',
    name: 'Big world',
    entries,
    variables,
    rules: [],
    messageRenderer: 'export default function Bubble({ contentHtml }) { return <div dangerouslySetInnerHTML={{ __html: contentHtml }} />; }',
    settings: {},
  });
}

const source = buildWorld();
const first = importWorld(source, { generateId: () => '11111111-1111-4111-8111-111111111111' });
if (!first.ok) throw new Error(`the bench world does not import: ${JSON.stringify(first.issues.slice(0, 3))}`);
const imported = first.world;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

afterAll(() => {
  const importTimes: number[] = [];
  const validateTimes: number[] = [];
  for (let round = 0; round < 7; round++) {
    let start = performance.now();
    importWorld(source);
    importTimes.push(performance.now() - start);
    start = performance.now();
    validateWorld(imported);
    validateTimes.push(performance.now() - start);
  }
  const ratio = median(importTimes) / median(validateTimes);
  console.log(
    `world-import: ${(source.length / 1024 / 1024).toFixed(1)} MB, ${imported.entries.length} entries: import ${median(importTimes).toFixed(0)} ms, validateWorld alone ${median(validateTimes).toFixed(0)} ms, ratio ${ratio.toFixed(2)} (median of 7 interleaved rounds)`,
  );
});

describe('import a 5 MB world (version 8.0.0)', () => {
  bench('importWorld (parse, migrate, convert asset links, validate)', () => {
    importWorld(source);
  }, { iterations: 5, warmupIterations: 1 });

  bench('validateWorld of the imported result alone (baseline)', () => {
    validateWorld(imported);
  }, { iterations: 5, warmupIterations: 1 });
});

// The PNG card and today's checkout, made before any bench runs (top-level await).
const scratch = mkdtempSync(join(tmpdir(), 'world-import-bench-'));
const card = join(scratch, 'card.png');
const cardBytes = new Uint8Array(await cardPng({ bytes: 4 * 1024 * 1024, loreBytes: 1024 * 1024 }));
writeFileSync(card, cardBytes);
const baseline = baselineCheckout(BASELINE);

afterAll(() => {
  const timed = (tree: string) => {
    const out = run(process.execPath, ['--import', 'tsx', join(root, 'bench/world-import-png.ts'), join(tree, 'packages/world/src/index.ts'), card, '5'], tree);
    return JSON.parse(out.split('\n').at(-1)!) as { times: number[]; ok: boolean; entries: number };
  };
  const today: number[] = [];
  const now: number[] = [];
  let entries = 0;
  for (let round = 0; round < 4; round++) {
    for (const [tree, into] of (round % 2 === 0 ? [[baseline, today], [root, now]] : [[root, now], [baseline, today]]) as [string, number[]][]) {
      const result = timed(tree);
      if (!result.ok) throw new Error(`the card does not import in ${tree}`);
      entries = result.entries;
      // The first import of a process pays for loading and compiling; the rest are compared.
      into.push(...result.times.slice(1));
    }
  }
  console.log(
    `world-import-png: ${(cardBytes.length / 1024 / 1024).toFixed(1)} MB card (${entries} entries): today (${BASELINE.slice(0, 7)}) ${median(today).toFixed(1)} ms, now ${median(now).toFixed(1)} ms, ${(median(today) / median(now)).toFixed(1)}x faster (medians of ${now.length} imports each, separate processes, interleaved)`,
  );
  rmSync(scratch, { recursive: true, force: true });
}, 900_000);

describe('import a 4 MB PNG card', () => {
  bench('importWorld of a 4 MB PNG card (this tree)', () => {
    importWorld(cardBytes.slice());
  }, { iterations: 5, warmupIterations: 1 });
});
