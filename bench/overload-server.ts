import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The server of bench/overload.bench.ts, in a process of its own: the container on a fresh
 * database of the real PostgreSQL and Redis, with the pool tests use (10 connections). Also run
 * from the baseline revision's checkout (the bench copies this file there). Announces its URL
 * (`ready`); answers `stall-reset` and `stall` (the longest event-loop delay since, in ms, from
 * monitorEventLoopDelay at 10 ms resolution) and `stop`.
 */
let server: TestServer | undefined;
const delay = monitorEventLoopDelay({ resolution: 10 });

await serveParent(
  async () => {
    server = await startTestServer({ SIGNUP_RATE_LIMIT_PER_HOUR: '100000', DATABASE_POOL_MAX: '10', DATABASE_READ_POOL_MAX: '5', LOG_LEVEL: 'fatal' });
    delay.enable();
    return { url: server.url };
  },
  {
    'stall-reset': () => void delay.reset(),
    stall: () => ({ maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 }),
  },
  async () => {
    delay.disable();
    await server?.stop();
  },
);
