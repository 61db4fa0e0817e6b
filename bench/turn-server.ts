import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import { BENCH_ADMISSION } from './turn-guard.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The server of bench/turn.bench.ts, in a process of its own (the server is its own machine): the
 * container on a fresh database of the real PostgreSQL and Redis (./tests/support/server.ts).
 * Announces its URL and data folder (`ready`: the bench reads sign-up links from its outbox), answers `profile-start` / `profile-stop` (with `file`) by taking a
 * CPU profile of itself, and `stop` by closing and dropping the database. Environment as the
 * parent's (DATABASE_URL, REDIS_URL, BENCH_LOG_LEVEL). Its CPU is read by the parent from /proc.
 */
let server: TestServer | undefined;
let inspector: Session | undefined;

await serveParent(
  async () => {
    // admission as on the baseline's side (./turn-guard.ts BENCH_ADMISSION)
    server = await startTestServer({ SIGNUP_RATE_LIMIT_PER_HOUR: '1000', ...BENCH_ADMISSION, DATABASE_POOL_MAX: '20', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'fatal' });
    return { url: server.url, dataDir: server.dataDir };
  },
  {
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
