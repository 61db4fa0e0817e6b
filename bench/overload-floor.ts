import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DEFAULT_ADMISSION_WARM_UP } from '@yumina/config';

/**
 * The floor under bench/overload.bench.ts (issue 32): what one process's event loop needs to answer
 * a burst of requests that arrive at once, with no application work at all. `N` requests (default
 * 2,000), each on its own keep-alive connection opened before the burst, written by a raw-socket
 * client in another process as fast as it can; the server answers each with a 503 and counts:
 *   raw  - a TCP server writing a fixed answer on every read (no HTTP parsing: the socket's cost)
 *   http - node:http answering 503 SERVER_BUSY through its own writeHead and end (parser, request
 *          and response objects, headers), as admission.ts's fast path did until 2026-11-28
 *   shed - node:http with admission.ts's own fast path refusing every turn (warm-up.ts'
 *          refusingFastPath): the head and body written to the socket in one call, node:http told
 *          the head went out
 *   warm - the same after the replica's start-up warm-up (warm-up.ts, FLOOR_WARM_UP answers,
 *          by default ADMISSION_WARM_UP's)
 * Each server, in a fresh process, takes two bursts a second apart on the same connections (its
 * first, with V8's code still cold, and its second). Prints, per burst, the time from its first to
 * its last answer (per request) and the server's CPU per request, the longest event-loop delay
 * meanwhile, and the client's latency from each request's own write. FLOOR_KINDS picks the servers
 * (comma-separated), FLOOR_NODE_FLAGS adds node flags to theirs (e.g. --cpu-prof).
 *   node --import tsx bench/overload-floor.ts [N]
 */
const N = Number(process.argv[3] ?? process.argv[2] ?? 2000);
const role = process.argv[2];
const KINDS = ['raw', 'http', 'shed', 'warm'] as const;
type Kind = (typeof KINDS)[number];
const WARM_UP = Number(process.env.FLOOR_WARM_UP ?? DEFAULT_ADMISSION_WARM_UP);

async function serve(kind: Kind): Promise<void> {
  process.once('SIGTERM', () => process.exit(0)); // an orderly exit: --cpu-prof (FLOOR_NODE_FLAGS) writes its profile

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let count = 0;
  let first = 0;
  let last = 0;
  let cpu = process.cpuUsage();
  const counted = () => {
    if (!first) {
      first = performance.now();
      cpu = process.cpuUsage();
      delay.reset();
    }
    last = performance.now();
    if (++count < N) return;
    const spanMs = last - first;
    const used = process.cpuUsage(cpu);
    count = first = 0;
    // the delay histogram records the burst's long turn of the loop once it has ended
    setTimeout(() => process.send!({ spanMs, cpuMs: (used.user + used.system) / 1000, maxDelayMs: delay.max / 1e6 }), 300);
  };
  const onListening = (port: number) => process.send!({ port });
  if (kind === 'raw') {
    const answer = Buffer.from('HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 2\r\nretry-after: 2\r\n\r\n{}');
    const ok = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    const server = createNetServer((socket) =>
      socket.on('data', (d: Buffer) => {
        if (d[0] === 0x47) return void socket.write(ok); // the warm-up GET
        socket.write(answer);
        counted();
      }),
    );
    server.listen(0, '127.0.0.1', () => onListening((server.address() as { port: number }).port));
    return;
  }
  const { busyAnswer } = await import('../containers/api/src/admission.ts');
  const { refusingFastPath, warmShedding } = await import('../containers/api/src/warm-up.ts');
  if (kind === 'warm') {
    const warm = await warmShedding({ config: { version: 'floor' }, identity: { replica: 'floor' }, startedAt: Date.now() } as never, WARM_UP);
    console.log(`overload-floor: warm, the warm-up: ${warm.requests} answers in ${warm.ms.toFixed(0)} ms`);
  }
  // admission.ts's fast path refusing every turn, as the replica's does in a burst (production's turn gate)
  const { shed } = await refusingFastPath();
  const server = createHttpServer((req, res) => {
    if (req.method === 'GET') return void res.end('ok');
    if (kind !== 'http') {
      if (!shed(req, res)) throw new Error('the fast path let a turn through');
      return counted();
    }
    // The same answer through node:http's own writeHead and end.
    req.resume();
    const { body, headers } = busyAnswer(randomUUID());
    res.writeHead(503, headers);
    res.end(body);
    counted();
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => onListening((server.address() as { port: number }).port));
}

/** N keep-alive connections to `port`, each having asked GET /health/live once. */
async function connections(port: number): Promise<Socket[]> {
  const sockets = await Promise.all(
    Array.from({ length: N }, () => new Promise<Socket>((resolve, reject) => connect(port, '127.0.0.1').once('connect', function (this: Socket) { resolve(this); }).once('error', reject))),
  );
  const warm = Buffer.from('GET /health/live HTTP/1.1\r\nhost: x\r\n\r\n');
  await Promise.all(sockets.map((s) => new Promise((r) => (s.once('data', r), s.write(warm)))));
  return sockets;
}

async function burst(sockets: Socket[]): Promise<{ sendMs: number; p50: number; p99: number; max: number }> {
  const body = '{"content":"I light a torch."}';
  const requests = sockets.map((_, i) =>
    Buffer.from(`POST /api/sessions/cnv_${i}/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncookie: yumina_session=${'x'.repeat(43)}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`),
  );
  const sent: number[] = [];
  const answered = sockets.map((s, i) => new Promise<number>((r) => s.once('data', () => r(performance.now() - sent[i]!))));
  const start = performance.now();
  sockets.forEach((s, i) => {
    s.write(requests[i]!);
    sent[i] = performance.now();
  });
  const sendMs = performance.now() - start;
  const latencies = (await Promise.all(answered)).sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(N - 1, Math.floor(q * N))]!;
  return { sendMs, p50: at(0.5), p99: at(0.99), max: latencies[N - 1]! };
}

if (KINDS.includes(role as Kind)) await serve(role as Kind);
else {
  for (const kind of (process.env.FLOOR_KINDS?.split(',') as Kind[] | undefined) ?? KINDS) {
    const child = fork(import.meta.filename, [kind, String(N)], { execArgv: ['--import', 'tsx', ...(process.env.FLOOR_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])] });
    const { port } = await new Promise<{ port: number }>((r) => child.once('message', (m) => r(m as { port: number })));
    const sockets = await connections(port);
    for (const round of ['first', 'second']) {
      const done = new Promise<{ spanMs: number; cpuMs: number; maxDelayMs: number }>((r) => child.once('message', (m) => r(m as { spanMs: number; cpuMs: number; maxDelayMs: number })));
      const client = await burst(sockets);
      const server = await done;
      console.log(
        `overload-floor: ${kind}, ${round} burst: ${N} requests written in ${client.sendMs.toFixed(0)} ms; the server answered them over ${server.spanMs.toFixed(0)} ms ` +
          `(${((server.spanMs / N) * 1000).toFixed(0)} µs each; CPU ${((server.cpuMs / N) * 1000).toFixed(0)} µs each), longest event-loop delay ${server.maxDelayMs.toFixed(0)} ms; ` +
          `answer from its own write p50 ${client.p50.toFixed(0)} ms, p99 ${client.p99.toFixed(0)} ms, max ${client.max.toFixed(0)} ms`,
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
    for (const s of sockets) s.destroy();
    child.kill();
  }
}
