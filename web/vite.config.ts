import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { HOST_PAGE_POLICY } from '../packages/sandbox/src/host-policy.ts';

/** The app shell (index.html) carries the host page's Content-Security-Policy as a meta element too (the static site in production). */
function hostPagePolicy(): Plugin {
  return {
    name: 'yumina-host-page-policy',
    transformIndexHtml: {
      order: 'pre',
      handler: (html, ctx) =>
        ctx.filename.endsWith('/index.html') ? html.replace('<meta charset="UTF-8" />', `<meta charset="UTF-8" />\n    <meta http-equiv="Content-Security-Policy" content="${HOST_PAGE_POLICY}" />`) : html,
    },
  };
}

/** Text files worth compressing (not images, fonts or source maps nobody downloads on a page load). */
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|webmanifest)$/;

/**
 * Writes a brotli (.br, quality 11) and a gzip (.gz, level 9) copy beside every text file of the
 * build, once, at build time: the server (containers/api/src/web.ts, @fastify/static's
 * `preCompressed`) sends the smallest one the browser accepts without compressing per request. A
 * copy that would not be smaller than the file is not written.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'yumina-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const walk = async (dir: string): Promise<string[]> =>
        (await Promise.all((await readdir(dir, { withFileTypes: true })).map((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])))).flat();
      // On libuv's thread pool, every file at once: the whole build 8.3 s → 6 s on 2 cores (one file after another before).
      const brotli = promisify(brotliCompress);
      const gz = promisify(gzip);
      const compress = async (file: string) => {
        const bytes = await readFile(file);
        if (bytes.length < 256) return;
        const [b, g] = await Promise.all([
          brotli(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
          gz(bytes, { level: 9 }),
        ]);
        if (b.length < bytes.length) await writeFile(`${file}.br`, b);
        if (g.length < bytes.length) await writeFile(`${file}.gz`, g);
      };
      await Promise.all((await walk(outDir)).filter((file) => COMPRESSIBLE.test(file)).map(compress));
    },
  };
}

export default defineConfig({
  plugins: [react(), hostPagePolicy(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    // Every browser the app supports knows modulepreload: no polyfill script on every page.
    modulePreload: { polyfill: false },
    // Which chunks each entry and lazy page pulls in (tests/browser/first-load.test.ts reads it).
    manifest: true,
    rollupOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        landing: fileURLToPath(new URL('landing.html', import.meta.url)),
        partnerDemo: fileURLToPath(new URL('partner-demo.html', import.meta.url)),
      },
    },
  },
  server: { proxy: { '/api': 'http://localhost:3000', '/health': 'http://localhost:3000' } },
});
