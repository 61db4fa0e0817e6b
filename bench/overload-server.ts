import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The server of bench/overload.bench.ts, in a process of its own: the container on a fresh
 * database of the real PostgreSQL and Redis, with the pool tests use (10 connections). Also run
 * from the baseline revision's checkout (the bench copies this file there). Announces its URL
 * and data folder (`ready`: the bench reads sign-up links from its outbox); answers `stall-reset` and `stall` (the longest event-loop delay since, in ms, from
 * monitorEventLoopDelay at 10 ms resolution), `arrivals` (when each turn request since reached
 * the server, epoch ms), `answers` (when the server had written each turn's answer, epoch ms, by
 * request path: at the end of its request callback for a refusal, else its response's 'finish'),
 * `probes` (each GET /health/live's arrival and answer) and `stop`. With
 * OVERLOAD_BENCH_PROFILE=<file> it also writes a CPU profile of each burst (from `stall-reset` to
 * `stall`, sampled every 100 µs) to `<file>.1`, `<file>.2`, ….
 */
const profileFile = process.env.OVERLOAD_BENCH_PROFILE;
let profiler: Session | undefined;
/** Bursts profiled so far: the nth is written to `<file>.<n>`. */
let profiled = 0;
let server: TestServer | undefined;
const delay = monitorEventLoopDelay({ resolution: 10 });
/** When each turn request reached the server's request callback (epoch ms): tells a late client from a late server. */
let arrivals: number[] = [];
/** When the server had written each turn's whole answer (epoch ms), by request path: a refusal's at the end of its request callback, else its response's 'finish'. */
let answers: Record<string, number> = {};
/** Each GET /health/live's arrival and answer (epoch ms). */
let probes: [number, number][] = [];

await serveParent(
  async () => {
    // ADMISSION_* settings of the bench's environment reach the server (to try other limits).
    const admission = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('ADMISSION_') && e[1] !== undefined));
    // The players name their own addresses through the loopback hop, as a load balancer would (issue 43: the admission queue's share per client address).
    server = await startTestServer({ SIGNUP_RATE_LIMIT_PER_HOUR: '100000', DATABASE_POOL_MAX: '10', DATABASE_READ_POOL_MAX: '5', LOG_LEVEL: 'fatal', TRUST_PROXY: 'loopback', ...admission });
    delay.enable();
    // The records wrap the server's one request listener instead of adding one: a second listener,
    // and a 'finish' listener on each of 2,000 refusals, cost the server a few µs each during the
    // burst. A refusal (and a liveness answer) is written before its request callback returns, so
    // its answer's time is taken then; a turn let through gets a 'finish' listener.
    const http = server.app.server;
    const [handler, ...others] = http.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    if (!handler || others.length) throw new Error(`overload-server: expected one request listener, found ${others.length + (handler ? 1 : 0)}`);
    http.removeAllListeners('request');
    http.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const at = performance.timeOrigin + performance.now();
      handler(req, res);
      const url = req.url!;
      if (url === '/health/live') {
        if (res.writableEnded) probes.push([at, performance.timeOrigin + performance.now()]);
        else res.once('finish', () => probes.push([at, performance.timeOrigin + performance.now()]));
      } else if (req.method === 'POST' && url.endsWith('/messages')) {
        arrivals.push(at);
        if (res.writableEnded) answers[url] = performance.timeOrigin + performance.now();
        else res.once('finish', () => (answers[url] = performance.timeOrigin + performance.now()));
      }
    });
    return { url: server.url, dataDir: server.dataDir };
  },
  {
    'stall-reset': async () => {
      if (profileFile) {
        profiler = new Session();
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
        await profiler.post('Profiler.start');
      }
      delay.reset();
      arrivals = [];
      answers = {};
      probes = [];
    },
    arrivals: () => arrivals,
    answers: () => answers,
    probes: () => probes,
    stall: async () => {
      const stall = { maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 };
      if (profiler && profileFile) {
        const { profile } = await profiler.post('Profiler.stop');
        writeFileSync(`${profileFile}.${++profiled}`, JSON.stringify(profile));
        profiler.disconnect();
        profiler = undefined;
      }
      return stall;
    },
  },
  async () => {
    delay.disable();
    await server?.stop();
  },
);
