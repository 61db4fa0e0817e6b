import { execFileSync } from 'node:child_process';
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
  if (process.env.UPDATE_SCREENS === '1') requireCjkFont();
  const dir = process.env.UPDATE_SCREENS === '1' ? join(repoRoot, 'docs/screens') : join(tmpdir(), 'yumina-screens');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}

let cjkChecked = false;

/**
 * The committed screens show Chinese text (the sample world 长安夜话): without a CJK font Chromium
 * draws it as empty boxes, as the README's screens once did. Refused in one line, naming the package.
 */
function requireCjkFont(): void {
  if (cjkChecked) return;
  let families = '';
  try {
    families = execFileSync('fc-list', [':lang=zh', 'family'], { encoding: 'utf8' });
  } catch {
    // No fontconfig: Chromium has no fonts to find either.
  }
  if (!families.trim()) throw new Error('UPDATE_SCREENS=1 needs a CJK font for the screens\' Chinese text: apt-get install -y fonts-noto-cjk');
  cjkChecked = true;
}
