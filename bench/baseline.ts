import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** The commit issue 32's work started from: the benchmarks' "today". */
export const ISSUE_32_BASELINE = '1887fa08a28921269e37cc19e9d3935d059a23de';

/**
 * A checkout of `revision` (a git worktree in the system's temporary folder, made at run time:
 * the project's rule for baselines of its own older code), sharing this tree's third-party
 * node_modules (linked); its own workspace packages (@yumina/*) are the checkout's. `remove`
 * deletes the worktree.
 */
export function checkout(revision: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'yumina-web-baseline-'));
  execFileSync('git', ['worktree', 'add', '--detach', dir, revision], { cwd: root, stdio: 'ignore' });
  const workspaces = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
  const ownPackages = new Map<string, string>();
  for (const pattern of workspaces) {
    const parent = join(dir, pattern.replace(/\/\*$/, ''));
    const folders = pattern.endsWith('/*') ? readdirSync(parent).map((f) => join(parent, f)) : [parent];
    for (const folder of folders) {
      if (!existsSync(join(folder, 'package.json'))) continue;
      ownPackages.set((JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name: string }).name, folder);
      // A workspace's own node_modules (dependencies npm did not hoist) come from this tree.
      const rel = folder.slice(dir.length);
      if (existsSync(join(root, rel, 'node_modules'))) symlinkSync(join(root, rel, 'node_modules'), join(folder, 'node_modules'));
    }
  }
  const modules = join(dir, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry === '@yumina') continue;
    symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
  mkdirSync(join(modules, '@yumina'));
  for (const [name, folder] of ownPackages) if (name.startsWith('@yumina/')) symlinkSync(folder, join(modules, name));
  return {
    dir,
    remove() {
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
    },
  };
}

