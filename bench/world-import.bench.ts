/**
 * Importing a 5 MB world of the public format (version 8.0.0: older entry layout, legacy
 * interface, `@asset:` links) against `validateWorld` of the imported result alone (issue 21).
 * Besides vitest's tables it prints one line `world-import:` with the ratio of the medians of
 * interleaved rounds (import, validate, import, validate, ...).
 */
import { afterAll, bench, describe } from 'vitest';
import { importWorld, validateWorld } from '../packages/world/src/index.ts';

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
