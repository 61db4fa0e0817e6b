import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The server of bench/groups.bench.ts, in a process of its own (as ./turn-server.ts): the container
 * on a fresh database of the real PostgreSQL and Redis, with every SQL statement it sends counted.
 * The count wraps `pg.Client.prototype.query` in this process only (the bench's own process, which
 * signs up and reads nothing from the database, is not counted; production code is unchanged):
 * every statement of every pool (primary and read) of the server, each named prepared statement
 * and each transaction's begin/commit counted once. Answers `statements` with the count so far;
 * its CPU is read by the parent from /proc. `profile-start` / `profile-stop` (with `file`) take a CPU
 * profile of it (GROUPS_BENCH_PROFILE=<file.cpuprofile>).
 */
let statements = 0;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: unknown, ...args: unknown[]) {
  statements++;
  return query.apply(this, args);
};

let server: TestServer | undefined;
let inspector: Session | undefined;

await serveParent(
  async () => {
    server = await startTestServer({ SIGNUP_RATE_LIMIT_PER_HOUR: '1000', DATABASE_POOL_MAX: '20', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'fatal' });
    return { url: server.url, dataDir: server.dataDir };
  },
  {
    statements: () => statements,
    // GROUPS_BENCH_PROFILE: a CPU profile of this process over the measured rounds
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
    await server?.stop();
  },
);
