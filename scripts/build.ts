/**
 * The production build of the server side (`npm run build` runs it after the web app's Vite
 * build): esbuild bundles the TypeScript sources of the workspace and their dependencies into
 * plain JavaScript, so production runs no TypeScript loader and needs no install:
 *
 *  - containers/api/dist/main.mjs and the files it loads: the container (the Dockerfile's final
 *    stage copies the folder and runs `node containers/api/dist/main.mjs`). It sits as deep in the
 *    tree as containers/api/src, so the paths it finds from its own location (the repository root:
 *    migrations, web/dist) are the same as the source's. Beside it: import-worker.mjs, the import
 *    pool's worker thread (containers/api/src/worlds/import-pool.ts starts `./import-worker.mjs`
 *    next to its own module: in the source a tsx shim, here the compiled worker), and
 *    node_modules/@img/, sharp's native part for this platform (its prebuilt binary and libvips,
 *    which no bundle can hold; the bundled sharp loads them from there);
 *  - dist/functions/<folder>/handler.mjs: one bundle per function of infra/routes.ts
 *    FUNCTION_ROUTES, the folder SST zips for that Lambda (infra/functions.ts `bundle`).
 *
 * ES modules for Node 20 and later (Lambda's nodejs22.x, the image's node:22); the CommonJS
 * dependencies inside get a `require` of their own. Left out: `pg-native` (pg's optional native
 * binding, never used), `vite` (only the local mode builds the web app on first start) and, in the
 * functions, what they never load (the embedded database runs in a process of its own). Function
 * bundles are minified (their size is their cold start); the container's keeps its names for
 * readable stack traces. Prints one line per output with its size; `--json` prints them as JSON.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { FUNCTION_ROUTES, functionBundle } from '../infra/routes.ts';

export const root = resolve(import.meta.dirname, '..');
export const CONTAINER_BUNDLE = 'containers/api/dist/main.mjs';
export const functionBundleFile = (route: (typeof FUNCTION_ROUTES)[number]) => `${functionBundle(route)}/handler.mjs`;

/** A `require`, `__filename` and `__dirname` for the CommonJS code inside an ES module bundle. */
const BANNER = [
  "import { createRequire as __yuminaCreateRequire } from 'node:module';",
  "import { fileURLToPath as __yuminaFileURLToPath } from 'node:url';",
  "import { dirname as __yuminaDirname } from 'node:path';",
  'const require = __yuminaCreateRequire(import.meta.url);',
  'const __filename = __yuminaFileURLToPath(import.meta.url);',
  'const __dirname = __yuminaDirname(__filename);',
].join('\n');

/** What every bundle of Node code here is built with (also the tests' compiled author CLI, tests/support/world-cli.ts). */
export const common: BuildOptions = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: BANNER },
  legalComments: 'none',
  logLevel: 'error',
  metafile: true,
  define: { 'process.env.NODE_ENV': '"production"' },
};

export interface BuiltFile {
  file: string;
  bytes: number;
}

/** Builds the container bundle. */
export async function buildContainer(): Promise<BuiltFile> {
  rmSync(join(root, 'containers/api/dist'), { recursive: true, force: true });
  await build({
    ...common,
    entryPoints: { main: 'containers/api/src/main.ts', 'import-worker': 'containers/api/src/worlds/import-worker.ts' },
    outdir: 'containers/api/dist',
    outExtension: { '.js': '.mjs' },
    // What the code imports only when it needs it (the tokenizer's 1 MB of ranks, loaded after the
    // server listens) stays in a file of its own, beside main.mjs (at the same depth, so the paths
    // a module finds from its own location stay right), and is not parsed at start.
    splitting: true,
    chunkNames: '[name]-[hash]',
    external: ['pg-native', 'vite'],
    minifySyntax: true,
    minifyWhitespace: true,
    plugins: [lean({ shakeWorkspace: false })],
  });
  const dir = join(root, 'containers/api/dist');
  const bytes = readdirSync(dir).reduce((sum, f) => sum + (f.endsWith('.mjs') ? statSync(join(dir, f)).size : 0), 0);
  copyNativeImageLibrary(dir);
  return { file: 'containers/api/dist/', bytes };
}

/**
 * sharp's native part, the one dependency of the container that cannot be bundled: the platform
 * packages of sharp's optional dependencies that the install chose for this machine (its prebuilt
 * `.node` binary and libvips, e.g. @img/sharp-linux-x64 and @img/sharp-libvips-linux-x64), copied
 * to `<dir>/node_modules/@img/`, where the bundled sharp's own require finds them. Build on the
 * platform the image runs on (the Dockerfile's build stage does).
 */
function copyNativeImageLibrary(dir: string): void {
  // Where Node's resolution finds a package from `from` (its folder; package.json is not in every exports map).
  const installed = (from: string, name: string) =>
    (createRequire(from).resolve.paths(name) ?? []).map((p) => join(p, name)).find((p) => existsSync(join(p, 'package.json')));
  const sharp = installed(join(root, 'packages/assets/package.json'), 'sharp');
  if (!sharp) throw new Error('sharp is not installed (packages/assets depends on it): run npm ci');
  const optional = Object.keys((JSON.parse(readFileSync(join(sharp, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> }).optionalDependencies ?? {});
  const copied: string[] = [];
  for (const name of optional) {
    const found = installed(join(sharp, 'package.json'), name);
    if (!found) continue;
    cpSync(found, join(dir, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
    copied.push(name);
  }
  if (!copied.some((name) => name.startsWith('@img/sharp-') && !name.startsWith('@img/sharp-libvips-'))) {
    throw new Error(`sharp has no native package installed for ${process.platform}-${process.arch}: run npm ci on the platform the image runs on`);
  }
}

/**
 * What a bundle leaves out, for its size (each function ≤ 1 MB, docs/BENCHMARKS.md) and its start:
 *  - zod's translations of its error messages into other languages (`z.locales`, about 250 KB):
 *    nothing here selects one, and the English messages zod uses by default stay;
 *  - in a function (`shakeWorkspace`), the workspace's own modules (packages/, functions/) count
 *    as free of import-time side effects, so a module none of the function's code uses is not
 *    bundled (a jwks function does not carry pg and ioredis because @yumina/http also exports the
 *    database helpers).
 */
const lean = (options: { shakeWorkspace: boolean }): Plugin => ({
  name: 'lean',
  setup(b) {
    const workspace = new RegExp(`^${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(packages|functions)/`);
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'lean' || args.kind === 'entry-point') return undefined;
      if (args.path === '../locales/index.js' && /[/\\]zod[/\\]v4[/\\](classic|core)[/\\]/.test(args.importer)) {
        return { path: join(dirname(args.importer), '../locales/index.js'), namespace: 'zod-english' };
      }
      if (!options.shakeWorkspace) return undefined;
      const resolved = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'lean' });
      if (resolved.errors.length || !workspace.test(resolved.path)) return undefined;
      return { ...resolved, sideEffects: false };
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-english' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};`,
      resolveDir: dirname(args.path),
    }));
  },
});

/** Builds one bundle per function. */
export async function buildFunctions(): Promise<BuiltFile[]> {
  rmSync(join(root, 'dist/functions'), { recursive: true, force: true });
  return Promise.all(
    FUNCTION_ROUTES.map(async (route) => {
      const file = functionBundleFile(route);
      mkdirSync(join(root, functionBundle(route)), { recursive: true });
      const result = await build({
        ...common,
        entryPoints: [join('functions', route.folder, 'handler.ts')],
        outfile: file,
        // Never loaded by a function: its app has no JSON-schema compilers (@yumina/http functionApp).
        external: ['pg-native', 'vite', '@electric-sql/pglite', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'],
        minify: true,
        plugins: [lean({ shakeWorkspace: true })],
      });
      // What went in, for who wants to see where the bytes are (esbuild's analyzer reads it); beside
      // the bundle's folder, which SST zips as it is.
      writeFileSync(join(root, 'dist/functions', `${route.folder}.meta.json`), JSON.stringify(result.metafile));
      return { file, bytes: statSync(join(root, file)).size };
    }),
  );
}

/** The container and every function. */
export async function buildServer(): Promise<BuiltFile[]> {
  const [container, functions] = await Promise.all([buildContainer(), buildFunctions()]);
  return [container, ...functions];
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const started = performance.now();
  const built = await buildServer();
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(built)}\n`);
  else {
    for (const b of built) process.stdout.write(`${relative(root, join(root, b.file))}  ${(b.bytes / 1024).toFixed(0)} KB\n`);
    process.stdout.write(`built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
}
