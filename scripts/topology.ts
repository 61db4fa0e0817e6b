/**
 * npm run start:topology — what production runs, on this machine (docs/DEPLOY.md: rehearse a deploy):
 * the compiled output of `npm run build` and nothing else. Two container-mode replicas
 * (`node containers/api/dist/main.mjs`, the image's command) on the real PostgreSQL and Redis;
 * every function of the route table as its own process loading its bundle
 * (dist/functions/<folder>/handler.mjs, through scripts/lambda-runtime.mjs) with only the settings
 * its Lambda is linked to, invoked through its deployed `handler` export with Function URL events;
 * the static web build; all behind one local router built from infra/routes.ts. The server bundles
 * are built first when missing (`npm run start:topology` always builds them).
 *
 * Needs DATABASE_URL and REDIS_URL. Optional: TOPOLOGY_PORT (default 8080), PARTNERS (default: the
 * demo partner's site, started here on a loopback port), SECRETS_KEY and IDENTITY_SIGNING_KEY
 * and TRUST_PROXY_SECRET (default: generated for this run; the router adds it to every request it
 * forwards, as CloudFront does, and the replicas and functions trust forwarded addresses only with
 * it), TOPOLOGY_DATA_DIR (the folder that stands for the object
 * bucket both replicas share; mail goes to its outbox/ folder unless SMTP_URL is set). Every other
 * variable reaches the replicas as it is.
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
import { existsSync } from 'node:fs';
import { ensureWebBuild } from '../containers/api/src/web.ts';
import { FUNCTION_TRUST_PROXY } from '../infra/proxy-proof.ts';
import { FUNCTION_ROUTES, type FunctionName, routeTable } from '../infra/routes.ts';
import { buildServer, CONTAINER_BUNDLE, functionBundleFile } from './build.ts';
import { FunctionProcess } from './function-process.ts';
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
if (![CONTAINER_BUNDLE, ...FUNCTION_ROUTES.map(functionBundleFile)].every((f) => existsSync(join(root, f)))) {
  say('Building the container and function bundles (npm run build)…');
  await buildServer();
}

// The secrets, as `sst secret set` would hold them.
const secretsKey = env.SECRETS_KEY ?? randomBytes(32).toString('base64url');
const signingKey = env.IDENTITY_SIGNING_KEY ?? (await generateSigningKeyMaterial()).key;
const proxySecret = env.TRUST_PROXY_SECRET ?? randomBytes(32).toString('hex');

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
  const child = spawn(process.execPath, [join(root, CONTAINER_BUNDLE)], {
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
      // Mail stays in a folder both replicas share unless SES or SMTP is given (a rehearsal sends nothing).
      ...(env.SMTP_URL || env.MAIL_SES_SENDER ? {} : { MAIL_OUTBOX_DIR: env.MAIL_OUTBOX_DIR ?? join(dataDir, 'outbox') }),
      REPLICA_ID: id,
      DEPLOYMENT_ID: env.DEPLOYMENT_ID ?? 'topology',
      // One hop in front (the local router, standing for CloudFront and the load balancer), trusted only with its proof.
      TRUST_PROXY: env.TRUST_PROXY ?? '1',
      TRUST_PROXY_SECRET: proxySecret,
      LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => say(`${id} exited (${signal ?? code})`));
  children.push(child);
  replicas.push({ id, url: `http://127.0.0.1:${replicaPort}`, pid: child.pid! });
}
// The functions: one process each, with the settings its Lambda is linked to (infra/functions.ts)
// and nothing else of this environment, as a Lambda gets them.
const lambdaSettings: Record<string, string | undefined> = {
  DATABASE_URL: env.DATABASE_URL,
  REDIS_URL: env.REDIS_URL,
  PUBLIC_ORIGIN: origin,
  IDENTITY_SIGNING_KEY: signingKey,
  PARTNERS: partners,
  TRUST_PROXY_SECRET: proxySecret,
};
const functionProcesses: FunctionProcess[] = [];
const functions = {} as Record<FunctionName, LambdaHandler>;
for (const route of FUNCTION_ROUTES) {
  const fnEnv: Record<string, string | undefined> = { PATH: env.PATH, NODE_ENV: 'production', AWS_LAMBDA_FUNCTION_NAME: route.function };
  for (const setting of route.settings) fnEnv[setting] = lambdaSettings[setting];
  if ((route.settings as readonly string[]).includes('TRUST_PROXY_SECRET')) fnEnv.TRUST_PROXY = FUNCTION_TRUST_PROXY;
  if ((route.settings as readonly string[]).includes('DATABASE_URL')) fnEnv.DATABASE_POOL_MAX = '2';
  // The test's Redis key prefix, so functions and replicas share one namespace as they do in production.
  if ((route.settings as readonly string[]).includes('REDIS_URL') && env.REDIS_KEY_PREFIX) fnEnv.REDIS_KEY_PREFIX = env.REDIS_KEY_PREFIX;
  const fn = new FunctionProcess({ module: join(root, functionBundleFile(route)), env: fnEnv, label: route.folder });
  functionProcesses.push(fn);
  functions[route.function] = fn.handler;
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
    await new Promise((r) => setTimeout(r, 50));
  }
}
await Promise.all(functionProcesses.map((f) => f.ready));

const router = createLocalRouter({ routes: routeTable([...registry.keys()]), replicas, functions, webDist, proxySecret });
await new Promise<void>((r) => router.server.listen(port, '127.0.0.1', r));
say(`Production topology at ${origin} (replicas ${replicas.map((r) => r.url).join(', ')}; partner site ${demo.origin})`);
say(
  JSON.stringify({
    type: 'topology.ready',
    url: origin,
    replicas,
    partner: demo.origin,
    functions: FUNCTION_ROUTES.map((r, i) => ({ function: r.function, pattern: r.pattern, pid: functionProcesses[i]!.child.pid })),
  }),
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await router.close();
  await demo.app.close();
  await Promise.all(functionProcesses.map((f) => f.stop()));
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
