import { resolve } from 'node:path';

/** Builds the web app once before the suites, so browser tests run against the current source. */
export default async function setup(): Promise<void> {
  const root = resolve(import.meta.dirname, '../..');
  const { build } = await import('vite');
  await build({ root: resolve(root, 'web'), logLevel: 'error', build: { outDir: resolve(root, 'web/dist'), emptyOutDir: true } });
}
