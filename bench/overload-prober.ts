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
let times: number[] = [];
/** Each probe's send and answer (epoch ms). */
let trace: [number, number][] = [];
let loop: Promise<void> = Promise.resolve();
let connection: RawConnection | undefined;

async function probing(url: string) {
  const { hostname, port } = new URL(url);
  connection ??= await RawConnection.open(Number(port), hostname);
  const request = serializeRequest('GET', `${url}/health/live`, {});
  while (running) {
    try {
      const { sentAt, response } = connection.send(request);
      const res = await response;
      times.push(res.status === 200 ? res.endedAt - sentAt : Number.POSITIVE_INFINITY);
      trace.push([performance.timeOrigin + sentAt, performance.timeOrigin + res.endedAt]);
    } catch {
      times.push(Number.POSITIVE_INFINITY);
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
      times = [];
      trace = [];
      loop = probing(String(url));
    },
    'probe-stop': async () => {
      running = false;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0, count: sorted.length, failed: sorted.filter((t) => !Number.isFinite(t)).length, trace };
    },
  },
  async () => {
    running = false;
    connection?.close();
  },
);
