import { join } from 'node:path';
import type { Config } from '@yumina/config';
import { openDatabase, type PoolPressure, runMigrations } from '@yumina/db';
import { createPinoSink, createTelemetry, startCpuProfile } from '@yumina/telemetry';
import { sharedTokenCounter } from '@yumina/tokens';
import { MailQueue, openMailTransport } from '@yumina/mail';
import { openStore } from '@yumina/store';
import type { FastifyInstance } from 'fastify';
import type pino from 'pino';
import { ExportWorker } from './accounts/data-export.ts';
import { administratorExists, MAKE_ADMIN_COMMAND } from './accounts/first-admin.ts';
import { loadSecretBox } from './accounts/secret-box.ts';
import { buildApp, type BuildOptions } from './app.ts';
import { openObjectStore, publishDemoGame } from './games/demo.ts';
import { startMaintenance } from './maintenance.ts';
import { startDemoPartner } from './partners/demo-partner.ts';
import { publishSampleWorlds } from './worlds/samples.ts';
import { partnersFromConfig, signingKeysFromConfig } from '@yumina/identity';
import type { AppContext } from './context.ts';
import { createLogger, replicaIdentity } from './logger.ts';
import { warmShedding } from './warm-up.ts';
import { repoRoot } from './web.ts';

/** The listening socket's accept queue (connections the kernel holds until the server takes them). */
export const LISTEN_BACKLOG = 4096;

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  url: string;
  /** Stop accepting, drain in-flight requests, close the pools and the store. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions extends BuildOptions {
  /** Where log lines go (default: stdout). */
  logDestination?: pino.DestinationStream;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const identity = replicaIdentity(config);
  const log = createLogger(config, identity, options.logDestination);
  let pools: () => PoolPressure[] = () => [];
  const telemetry = createTelemetry({
    identity,
    sink: createPinoSink(log),
    slowQueryMs: config.database.slowQueryMs,
    poolStats: () => pools(),
    logRequests: config.logLevel === 'debug' || config.logLevel === 'trace',
  });
  const db = await openDatabase(config, { query: (pool, ms, ok) => telemetry.recordQuery(pool, ms, ok) });
  pools = () => db.pressure();
  log.info(
    { type: 'startup', database: db.kind, store: config.store.redisUrl ? 'redis' : 'memory' },
    db.kind === 'embedded'
      ? `Database: embedded PGlite under ${join(config.dataDir, 'pglite')} (set DATABASE_URL for PostgreSQL)`
      : 'Database: PostgreSQL from DATABASE_URL',
  );
  let store: AppContext['store'] | undefined;
  try {
    const migrated = await runMigrations(db.primary, join(repoRoot, 'migrations'));
    if (migrated.applied.length) log.info({ type: 'migrations', applied: migrated.applied }, 'migrations applied');
    store = await openStore(config.store.redisUrl, log, config.store.prefix);
    log.info(
      { type: 'startup', store: store.kind },
      store.kind === 'redis' ? 'Shared store: Redis from REDIS_URL' : 'Shared store: in-memory (set REDIS_URL for Redis)',
    );
  } catch (err) {
    await db.close();
    throw err;
  }
  const secrets = loadSecretBox(config.auth.secretsKey, config.dataDir);
  const objects = openObjectStore(config);
  // The demo partner (local mode, no PARTNERS configured) listens first: its origin is part of the partner config.
  let registry: AppContext['partners']['registry'] = new Map();
  const demo =
    config.mode === 'local' && !config.partners.json
      ? await startDemoPartner({
          webDist: config.webDist,
          host: '127.0.0.1',
          port: config.partners.demoPort,
          platformOrigin: config.publicOrigin,
          partners: () => registry,
        })
      : undefined;
  registry = partnersFromConfig(config, demo?.origin);
  const partners: AppContext['partners'] = { registry, keys: await signingKeysFromConfig(config) };
  if (demo) log.info({ type: 'startup', demoPartner: demo.origin }, `Demo partner game at ${demo.origin}; open ${config.publicOrigin}/demo`);
  const mail = new MailQueue({
    db: db.primary,
    transport: openMailTransport(config.mail),
    from: config.mail.from,
    key: secrets.deriveKey('mail-queue'),
    log,
  });
  log.info(
    { type: 'startup', mail: config.mail.transport },
    config.mail.transport === 'ses'
      ? 'Mail: Amazon SES (the linked Email component)'
      : config.mail.transport === 'smtp'
        ? 'Mail: SMTP from SMTP_URL'
        : `Mail: the outbox folder ${config.mail.outboxDir}${config.env === 'production' ? '' : `, listed at ${config.publicOrigin}/dev/outbox`} (set SMTP_URL to send)`,
  );
  const ctx: AppContext = { config, db, store, log, identity, telemetry, secrets, mail, objects, partners, startedAt: Date.now() };
  if (config.mode === 'local') await publishDemoGame(objects, log);
  if (config.sampleWorlds) {
    const published = await publishSampleWorlds(ctx);
    if (published) log.info({ type: 'startup', sampleWorlds: published }, `Published ${published} sample worlds to the library`);
  }
  // Publishing waits for an administrator's review: say at start when nobody can give it (issue 44, point 2).
  if (!(await administratorExists(db.primary))) {
    if (config.auth.firstAccountAdmin) log.info({ type: 'startup', administrators: 0 }, 'No administrator yet: the first account made here becomes the administrator');
    else
      log.warn(
        { type: 'startup', administrators: 0 },
        `No administrator exists: published worlds wait for a review nobody can give. Make one with ${MAKE_ADMIN_COMMAND} (scripts/admin.ts)`,
      );
  }
  const app = await buildApp(ctx, options);
  // The replica's first overload runs optimized code, not cold code (warm-up.ts, ADMISSION_WARM_UP).
  // It is only an optimization: a replica that cannot run it (no loopback?) starts all the same.
  await warmShedding(ctx, config.admission.warmUp).then(
    (warm) => warm.requests && log.info({ type: 'startup', warmUp: { requests: warm.requests, ms: Math.round(warm.ms) } }, `Warmed the refusal path: ${warm.requests} answers in ${Math.round(warm.ms)} ms`),
    (err: unknown) => log.warn({ type: 'startup', err }, 'The refusal path could not be warmed; the first overload runs cold code'),
  );
  // A burst of connections (thousands of players at once) waits in the kernel's accept queue, not
  // reset for lack of room: Node's default backlog is 511; the kernel caps this at its somaxconn.
  const address = await app.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG });
  log.info({ type: 'startup', address }, `Listening on ${address}`);
  const maintenance = startMaintenance(ctx);
  mail.start();
  ctx.exports = new ExportWorker(ctx);
  ctx.exports.start();
  telemetry.start();
  // Loads the tokenizer in 8 ms slices; counts before it finishes are heuristic and never cached.
  void sharedTokenCounter().init();
  const profiling = new AbortController();
  if (config.telemetry.cpuProfileSeconds > 0) {
    void startCpuProfile(config.telemetry.cpuProfileSeconds, createPinoSink(log), { identity, signal: profiling.signal });
  }
  let closing: Promise<void> | undefined;
  return {
    app,
    ctx,
    url: address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
    close() {
      closing ??= (async () => {
        await app.close(); // stops accepting, waits for in-flight requests
        await demo?.app.close();
        profiling.abort();
        telemetry.stop();
        await maintenance.stop();
        await ctx.exports?.stop();
        await mail.stop();
        await ctx.store.close();
        await db.close();
        log.info({ type: 'shutdown' }, 'stopped');
      })();
      return closing;
    },
  };
}
