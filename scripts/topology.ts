/**
 * npm run start:topology — what production runs, on this machine (docs/DEPLOY.md: rehearse a deploy):
 * two container-mode replicas of containers/api on the real PostgreSQL and Redis, each function of
 * the route table invoked through its real Lambda `handler` export with Function URL events, and
 * the static web build, all behind one local router built from infra/routes.ts.
 *
 * Needs DATABASE_URL and REDIS_URL. Optional: TOPOLOGY_PORT (default 8080), PARTNERS (default: the
 * demo partner's site, started here on a loopback port), SECRETS_KEY and IDENTITY_SIGNING_KEY
 * (default: generated for this run), TOPOLOGY_DATA_DIR (the folder that stands for the object
 * bucket both replicas share). Every other variable reaches the replicas as it is.
 * Prints one JSON line `{"type":"topology.ready",…}` (router URL, replica ids, pids and URLs).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '@yumina/config';
import { generateSigningKeyMaterial, type PartnerRegistry, parsePartners } from '@yumina/identity';
import { openObjectStore, publishDemoGame } from '../containers/api/src/games/demo.ts';
import { startDemoPartner } from '../containers/api/src/partners/demo-partner.ts';
import { ensureWebBuild } from '../containers/api/src/web.ts';
import { FUNCTION_ROUTES, type FunctionName, routeTable } from '../infra/routes.ts';
import type { LambdaHandler } from './function-url-event.ts';
import { createLocalRouter, type Replica } from './topology-router.ts';

const root = resolve(import.meta.dirname, '..');
const env = process.env;
const say = (message: string) => process.stdout.write(`${message}\n`);
const freePort = () =>
  new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });

if (!env.DATABASE_URL || !env.REDIS_URL) {
  process.stderr.write('start:topology needs DATABASE_URL and REDIS_URL (the real PostgreSQL and Redis, as production has).\n');
  process.exit(2);
}
const port = Number(env.TOPOLOGY_PORT ?? 8080);
const origin = `http://localhost:${port}`; // a loopback origin: container mode accepts http there

await ensureWebBuild('web/dist', { info: say });
const webDist = join(root, 'web/dist');

// The secrets, as `sst secret set` would hold them.
const secretsKey = env.SECRETS_KEY ?? randomBytes(32).toString('base64url');
const signingKey = env.IDENTITY_SIGNING_KEY ?? (await generateSigningKeyMaterial()).key;

// A partner's own site (its client and API), on another origin; PARTNERS lists it unless given.
let registry: PartnerRegistry = new Map();
const demo = await startDemoPartner({ webDist, host: '127.0.0.1', port: 0, platformOrigin: origin, partners: () => registry });
const partners = env.PARTNERS ?? JSON.stringify([{ slug: 'demo', clientOrigin: demo.origin, issuer: origin, audience: 'demo' }]);
registry = parsePartners(partners);

// The object bucket both replicas read (a folder here, GAMES_BUCKET in production), with the demo game published.
const dataDir = env.TOPOLOGY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'yumina-topology-'));
await publishDemoGame(openObjectStore(loadConfig({ DATA_DIR: dataDir })), { info: (_o, m) => say(m) });

// Two container-mode replicas, as the service runs them.
const children: ChildProcess[] = [];
const replicas: (Replica & { pid: number })[] = [];
for (const id of ['replica-1', 'replica-2']) {
  const replicaPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'containers/api/src/main.ts')], {
    cwd: root,
    env: {
      ...env,
      APP_MODE: 'container',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(replicaPort),
      PUBLIC_ORIGIN: origin,
      SECRETS_KEY: secretsKey,
      IDENTITY_SIGNING_KEY: signingKey,
      PARTNERS: partners,
      DATA_DIR: dataDir,
      REPLICA_ID: id,
      DEPLOYMENT_ID: env.DEPLOYMENT_ID ?? 'topology',
      TRUST_PROXY: env.TRUST_PROXY ?? '1',
      LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => say(`${id} exited (${signal ?? code})`));
  children.push(child);
  replicas.push({ id, url: `http://127.0.0.1:${replicaPort}`, pid: child.pid! });
}
for (const [i, replica] of replicas.entries()) {
  const until = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(`${replica.url}/health`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (children[i]!.exitCode !== null || Date.now() > until) {
      process.stderr.write(`${replica.id} did not become healthy\n`);
      for (const c of children) c.kill('SIGKILL');
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The functions: this process is their Lambda environment (their settings reach config as a Lambda's would).
env.IDENTITY_SIGNING_KEY = signingKey;
env.PUBLIC_ORIGIN = origin;
env.PARTNERS = partners;
const functions = {} as Record<FunctionName, LambdaHandler>;
for (const route of FUNCTION_ROUTES) {
  const module = (await import(join(root, 'functions', route.folder, 'handler.ts'))) as Record<string, LambdaHandler>;
  functions[route.function] = module.handler!;
}

const router = createLocalRouter({ routes: routeTable([...registry.keys()]), replicas, functions, webDist });
await new Promise<void>((r) => router.server.listen(port, '127.0.0.1', r));
say(`Production topology at ${origin} (replicas ${replicas.map((r) => r.url).join(', ')}; partner site ${demo.origin})`);
say(JSON.stringify({ type: 'topology.ready', url: origin, replicas, partner: demo.origin, functions: FUNCTION_ROUTES.map((r) => r.pattern) }));

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await router.close();
  await demo.app.close();
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((done) => {
          if (c.exitCode !== null || c.signalCode !== null) return done();
          c.once('exit', () => done());
          c.kill('SIGTERM');
        }),
    ),
  );
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
