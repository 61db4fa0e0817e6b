import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../containers/api/src/app.ts';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import { legacyTurnRoute } from './legacy/turn-route.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The server of bench/turn.bench.ts, in a process of its own (the server is its own machine): the
 * container on a fresh database of the real PostgreSQL and Redis (./tests/support/server.ts), plus
 * today's send path (./legacy/turn-route.ts) on a second app over the same context, listening on a
 * port of its own. Announces both URLs (`ready`), answers `cpu` with its process.cpuUsage(),
 * `profile-start` / `profile-stop` (with `file`) by taking a CPU profile of itself, and `stop` by
 * closing both apps and dropping the database. Environment as the parent's (DATABASE_URL,
 * REDIS_URL, BENCH_LOG_LEVEL).
 */
let server: TestServer | undefined;
let legacyApp: FastifyInstance | undefined;
let inspector: Session | undefined;

await serveParent(
  async () => {
    server = await startTestServer({ SIGNUP_RATE_LIMIT_PER_HOUR: '1000', DATABASE_POOL_MAX: '20', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'fatal' });
    legacyApp = await buildApp(server.ctx, { web: false });
    const ctx = server.ctx;
    await legacyApp.register(async (app) => legacyTurnRoute(app, ctx));
    await legacyApp.listen({ port: 0, host: '127.0.0.1' });
    return { url: server.url, legacyUrl: `http://127.0.0.1:${(legacyApp.server.address() as AddressInfo).port}` };
  },
  {
    cpu: () => process.cpuUsage(),
    'profile-start': async () => {
      inspector = new Session();
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.setSamplingInterval', { interval: 200 });
      await inspector.post('Profiler.start');
    },
    'profile-stop': async ({ file }) => {
      if (!inspector) throw new Error('no profile running');
      const { profile } = await inspector.post('Profiler.stop');
      writeFileSync(String(file), JSON.stringify(profile));
      inspector.disconnect();
      inspector = undefined;
    },
  },
  async () => {
    await legacyApp?.close();
    await server?.stop();
  },
);
