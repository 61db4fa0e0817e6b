import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { shedFastPath, admissionOf } from './admission.ts';
import type { AppContext } from './context.ts';
import { livenessFastPath } from './health.ts';

/** What a warm-up needs of the replica: its version, identity and start (the liveness answer's fields). */
export type WarmUpContext = Pick<AppContext, 'identity' | 'startedAt'> & { config: Pick<AppContext['config'], 'version'> };

export interface WarmUpResult {
  /** Requests answered (refusals and liveness answers). */
  requests: number;
  /** Wall time of the whole warm-up, listening included. */
  ms: number;
}

/** A turn as a browser sends it: a cookie, a JSON body. */
const BODY = '{"content":"I light a torch."}';
const turn = (i: number) =>
  `POST /api/sessions/cnv_warm${i}/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncookie: yumina_session=${'x'.repeat(43)}\r\n` +
  `content-type: application/json\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`;
const LIVE = 'GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n';

/**
 * Reads whole HTTP/1.1 answers (each with a content-length) off a socket: `next()` resolves when
 * the next one has arrived whole. The warm-up's own answers only: a head, a content-length, a body.
 */
class AnswerReader {
  #buffer = '';
  #wanted = 0;
  #resolve: (() => void) | null = null;
  #reject: ((err: Error) => void) | null = null;
  constructor(socket: Socket) {
    socket.setEncoding('latin1');
    // A connection lost mid-way fails the warm-up (never the process).
    socket.on('error', () => {});
    socket.on('close', () => this.#reject?.(new Error('warm-up connection closed')));
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (;;) {
        const headEnd = this.#buffer.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(this.#buffer.slice(0, headEnd))?.[1] ?? 0);
        if (this.#buffer.length < headEnd + 4 + length) return;
        this.#buffer = this.#buffer.slice(headEnd + 4 + length);
        if (--this.#wanted === 0) this.#resolve?.();
      }
    });
  }
  next(): Promise<void> {
    this.#wanted = 1;
    return new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }
}

/**
 * Warms the code a replica's first overload runs, before it takes traffic: node:http's request
 * path (parser callbacks, request and response objects, socket writes), the admission fast path's
 * refusal (shedFastPath, writeBusy) and the liveness fast path, on a private loopback server with
 * its own admission queue held full and its own liveness answer (nothing reaches the replica's
 * queue, telemetry or routes). A fresh process runs these cold: V8 has not optimized them, and a
 * first burst of 2,000 refusals cost ~41–59 µs each without it, ~27–32 µs after it (CPU ~2× less;
 * bench/overload-floor.ts, kinds `shed` and `warm`), enough to push refusals and liveness probes
 * past their 100 ms and 50 ms goals (bench/overload.bench.ts, issue 32). `requests` answers in rounds, one request at a
 * time on each of `connections` kept-alive connections (every tenth round asks GET /health/live).
 */
export async function warmShedding(replica: WarmUpContext, requests: number, connections = 50): Promise<WarmUpResult> {
  const started = performance.now();
  if (requests <= 0) return { requests: 0, ms: 0 };
  const { shed, release } = await refusingFastPath();
  // The liveness answer of the replica's version, identity and uptime, timed into nothing.
  const live = livenessFastPath({ ...replica, telemetry: { recordRequest: () => {} } } as unknown as AppContext, () => false);
  const server = createServer((req, res) => {
    if (live(req, res) || shed(req, res)) return;
    res.statusCode = 404;
    res.setHeader('content-length', 0);
    res.end();
  });
  const sockets: Socket[] = [];
  try {
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const count = Math.min(connections, requests);
    for (let i = 0; i < count; i++) {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    }
    // A warm-up that cannot finish in time (a loopback that drops packets?) gives up.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`warm-up unfinished after ${WARM_UP_DEADLINE_MS} ms`)), WARM_UP_DEADLINE_MS);
    });
    try {
      const answered = await Promise.race([exchange(sockets, requests), deadline]);
      return { requests: answered, ms: performance.now() - started };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    for (const s of sockets) s.destroy();
    release();
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * admission.ts's fast path (shedFastPath) over a queue of its own whose one slot a turn holds until
 * `release`, with production's turn gate (ADMISSION_MAX_LOOP_UTILIZATION's default, 90 %, read by
 * each refusal while that turn is in flight): it refuses every turn and stream open, as a replica
 * does in a burst. The warm-up's server and bench/overload-floor.ts use it.
 */
export async function refusingFastPath(): Promise<{ shed: (req: IncomingMessage, res: ServerResponse) => boolean; release: () => void }> {
  const ctx = {
    config: { admission: { concurrency: 1, queue: 0, maxWaitMs: 1000, maxLoopUtilization: 0.9 } },
    telemetry: { recordRequest: () => {} },
  } as unknown as AppContext;
  const shed = shedFastPath(ctx);
  const held = admissionOf(ctx).tryEnterTurn()!;
  const releaseSlot = await held.slot;
  return {
    shed,
    release: () => {
      releaseSlot();
      held.done();
    },
  };
}

/** The longest a warm-up may take (it takes ~70 ms for 1,000 answers on two shared CPUs). */
const WARM_UP_DEADLINE_MS = 5_000;

/** `requests` answers in rounds of one request on each socket; resolves with how many were answered. */
async function exchange(sockets: Socket[], requests: number): Promise<number> {
  const count = sockets.length;
  const readers = sockets.map((s) => new AnswerReader(s));
  const turns = sockets.map((_, i) => turn(i));
  let answered = 0;
  for (let round = 0; answered < requests; round++) {
    const now = sockets.slice(0, Math.min(count, requests - answered));
    const done = now.map((_, i) => readers[i]!.next());
    now.forEach((s, i) => s.write(round % 10 === 9 ? LIVE : turns[i]!));
    await Promise.all(done);
    answered += now.length;
  }
  return answered;
}
