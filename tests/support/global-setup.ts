import { resolve } from 'node:path';

/**
 * Builds the web app and the server bundles (scripts/build.ts) once before the suites, so browser
 * tests run against the current source.
 * vitest sets NODE_ENV=test, and Vite bakes NODE_ENV into the bundle: without the production value
 * the browser tests would run React's development build (StrictMode's doubled effects and requests),
 * not the bundle that ships.
 */
export default async function setup(): Promise<void> {
  const root = resolve(import.meta.dirname, '../..');
  const { build } = await import('vite');
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ root: resolve(root, 'web'), mode: 'production', logLevel: 'error', build: { outDir: resolve(root, 'web/dist'), emptyOutDir: true } });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
  // The compiled server side (container and function bundles) that production runs: the topology
  // and production-install tests run it.
  const { buildServer } = await import('../../scripts/build.ts');
  await buildServer();
}
