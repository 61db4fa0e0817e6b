import { RawConnection, serializeRequest } from './raw-http.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The liveness prober of bench/overload.bench.ts, in a process of its own (a load balancer is
 * another machine): `probe-start` {url} asks GET /health/live one request at a time, 5 ms apart,
 * on one keep-alive connection (./raw-http.ts: the prober's own work per probe stays in
 * microseconds, so what it measures is the server's; global fetch cost ~1 ms of this process a
 * probe, on the same two CPUs as the server); `probe-stop` answers the latencies' p50, p99, max
 * and count (ms). The bench runs it for 2 s before the first burst (the prober's own code compiled
 * by then, as a load balancer's is).
 */
let running = false;
/** Each probe's send and answer (epoch ms); a failed probe's answer is Infinity. */
let trace: [number, number][] = [];
let loop: Promise<void> = Promise.resolve();
let connection: RawConnection | undefined;

async function probing(url: string) {
  const { hostname, port } = new URL(url);
  connection ??= await RawConnection.open(Number(port), hostname);
  const request = serializeRequest('GET', `${url}/health/live`, {});
  while (running) {
    const { sentAt, response } = connection.send(request);
    try {
      const res = await response;
      trace.push([performance.timeOrigin + sentAt, res.status === 200 ? performance.timeOrigin + res.endedAt : Number.POSITIVE_INFINITY]);
    } catch {
      trace.push([performance.timeOrigin + sentAt, Number.POSITIVE_INFINITY]);
      connection = await RawConnection.open(Number(port), hostname);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

await serveParent(
  async () => ({}),
  {
    'probe-start': ({ url }) => {
      running = true;
      trace = [];
      loop = probing(String(url));
    },
    'probe-stop': async () => {
      running = false;
      await loop;
      const sorted = trace.map(([sent, answered]) => answered - sent).sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0, count: sorted.length, failed: sorted.filter((t) => !Number.isFinite(t)).length, trace };
    },
  },
  async () => {
    running = false;
    connection?.close();
  },
);
