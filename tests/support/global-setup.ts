import { resolve } from 'node:path';
import { ensureSystemPackages, startServices } from './services.ts';

/**
 * Once per run, before any test file: makes sure the machine has Debian's redis-server and chromium,
 * starts the PostgreSQL and Redis the run uses unless DATABASE_URL and REDIS_URL name them
 * (./services.ts) with the migrated template of the test databases (./postgres.ts), and builds the
 * web app and the server bundles (buildOutput below). Returns the teardown that stops the servers.
 */
export default async function setup(): Promise<() => Promise<void>> {
  ensureSystemPackages();
  const [services, build] = await Promise.allSettled([startServices().then(withTemplate), buildOutput()]);
  if (build.status === 'rejected') {
    if (services.status === 'fulfilled') await services.value();
    throw build.reason;
  }
  if (services.status === 'rejected') throw services.reason;
  return services.value;
}

/**
 * Makes the migrated template the test databases are copied from, once the servers run (imported
 * then: the module reads DATABASE_URL, which startServices sets); the teardown drops it, then
 * stops the servers.
 */
async function withTemplate(stopServices: () => Promise<void>): Promise<() => Promise<void>> {
  let dropTemplate: () => Promise<void>;
  try {
    dropTemplate = await (await import('./postgres.ts')).createTemplateDatabase();
  } catch (err) {
    await stopServices();
    throw err;
  }
  return async () => {
    await dropTemplate().catch(() => {});
    await stopServices();
  };
}

/**
 * Builds the web app and the server bundles (scripts/build.ts) once before the suites, so browser
 * tests run against the current source and the topology and production-install tests run the
 * compiled output production runs.
 *
 * vitest sets NODE_ENV=test, and Vite bakes NODE_ENV into the bundle: without the production value
 * the browser tests would run React's development build (StrictMode's doubled effects and requests),
 * not the bundle that ships.
 */
async function buildOutput(): Promise<void> {
  const root = resolve(import.meta.dirname, '../..');
  const { build } = await import('vite');
  const { buildServer } = await import('../../scripts/build.ts');
  const web = async () => {
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({ root: resolve(root, 'web'), mode: 'production', logLevel: 'error', build: { outDir: resolve(root, 'web/dist'), emptyOutDir: true } });
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
  };
  // The compiled server side (container and function bundles) that production runs: the topology
  // and production-install tests run it. Built beside the web app (neither reads the other's output).
  await Promise.all([web(), buildServer()]);
}
