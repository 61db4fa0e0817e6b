import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * Where the browser suites put their screenshots of the main pages: docs/screens/ (committed,
 * shown in the README) when `UPDATE_SCREENS=1`, otherwise a temporary folder, so that an ordinary
 * test run leaves the working tree as it found it.
 */
export function screenPath(name: string): string {
  const dir = process.env.UPDATE_SCREENS === '1' ? join(repoRoot, 'docs/screens') : join(tmpdir(), 'yumina-screens');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}
