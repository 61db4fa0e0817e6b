import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { common, root as ROOT } from '../../scripts/build.ts';

/** The author CLI as `npm run world` runs it: scripts/world.ts through tsx. */
export const WORLD_SCRIPT = join(ROOT, 'scripts/world.ts');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

let compiled: Promise<string> | undefined;

/**
 * The author CLI (scripts/world.ts) as a process of its own, for the tests that drive it through its
 * arguments, exit code, stdout and stderr. Compiled once per test process into one ES module by
 * esbuild with the production bundles' options (scripts/build.ts), inside node_modules so its native dependency (sharp)
 * resolves as from the script; each call then starts plain `node` on it: about 0.2 s of CPU a call
 * instead of 1 s for tsx to compile and resolve the CLI's modules anew on every start (the two CLI
 * suites start it 60 times). `npmRunWorld` runs the documented command itself.
 */
export async function worldCli(timeoutMs = 30_000): Promise<(...args: string[]) => CliResult> {
  compiled ??= (async () => {
    const { outputFiles } = await build({ ...common, entryPoints: [WORLD_SCRIPT], write: false, outfile: 'world-cli.mjs', external: ['sharp'], metafile: false });
    const code = outputFiles[0]!.contents;
    // Named by its content: test processes running at once share one file, written whole then renamed.
    const dir = join(ROOT, 'node_modules/.cache/yumina-tests');
    const file = join(dir, `world-cli-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
    if (!existsSync(file)) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(`${file}.${process.pid}.tmp`, code);
      renameSync(`${file}.${process.pid}.tmp`, file);
    }
    return file;
  })();
  const file = await compiled;
  return (...args) => {
    const result = spawnSync(process.execPath, [file, ...args], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
}

/** `npm run world -- <args>` itself (npm, then tsx on scripts/world.ts). */
export function npmRunWorld(...args: string[]): CliResult {
  const result = spawnSync('npm', ['run', '--silent', 'world', '--', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
