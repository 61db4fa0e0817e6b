import { serveParent } from './turn-ipc.ts';

/**
 * The liveness prober of bench/overload.bench.ts, in a process of its own (a load balancer is
 * another machine): `probe-start` {url} asks GET /health/live one request at a time, 5 ms apart;
 * `probe-stop` answers the latencies' p50, p99, max and count (ms).
 */
let running = false;
let times: number[] = [];
let loop: Promise<void> = Promise.resolve();

await serveParent(
  async () => ({}),
  {
    'probe-start': ({ url }) => {
      running = true;
      times = [];
      loop = (async () => {
        while (running) {
          const t = performance.now();
          const res = await fetch(`${String(url)}/health/live`).catch(() => null);
          await res?.arrayBuffer();
          times.push(res?.ok ? performance.now() - t : Number.POSITIVE_INFINITY);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
    },
    'probe-stop': async () => {
      running = false;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0, count: sorted.length, failed: sorted.filter((t) => !Number.isFinite(t)).length };
    },
  },
  async () => {
    running = false;
  },
);
