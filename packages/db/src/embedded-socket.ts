import { createServer, type Server, type Socket } from 'node:net';

/**
 * The socket layer in front of PGlite's single backend (one PostgreSQL session shared by every
 * pg connection of the embedded mode).
 *
 * A connection owns the backend from the first message it runs until the backend is idle again at
 * a protocol sync point: ReadyForQuery 'I' after a Sync or a simple Query. A transaction (status
 * 'T', or 'E' after an error) keeps the ownership from BEGIN to COMMIT/ROLLBACK, so no statement
 * of another connection ever runs inside it; the other connections' messages wait, connection by
 * connection in arrival order, and run when the owner lets go. Messages run only in whole protocol
 * exchanges (up to a Sync, a simple Query or a Flush), never a half-sent one.
 *
 * A connection that goes away while it owns the backend (a client-side deadline closes its socket)
 * has its transaction rolled back before anyone else runs. One that holds the backend idle inside
 * a transaction longer than its idle_in_transaction_session_timeout (startup option, else the
 * server's default) is ended, as PostgreSQL does, so one forgotten transaction cannot stall
 * everybody. PGlite cannot interrupt a running statement: CancelRequest is accepted and ignored.
 *
 * The startup exchange never waits for the backend: PGlite's answer to a startup packet is the
 * same for every connection (one session), so it is taken once when the server starts and given
 * to each new connection at once; a pool can open connections while a transaction is running.
 */

/** Runs one batch of frontend messages (or a startup packet) and returns all the backend answered. */
export interface SingleBackend {
  exec(messages: Uint8Array): Promise<Uint8Array>;
}

export interface BackendSocketServerOptions {
  backend: SingleBackend;
  host?: string;
  /** 0 (default): any free port. */
  port?: number;
  maxConnections: number;
  /** Default idle-in-transaction limit for connections whose startup options name none (0: none). */
  idleInTransactionTimeoutMs?: number;
}

export interface BackendSocketStats {
  connections: number;
  /** Connections with messages waiting for the backend. */
  waiting: number;
  /** Whether a connection owns the backend (a transaction or a protocol exchange is open). */
  owned: boolean;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const MAX_STARTUP_LENGTH = 10_000;

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const FLUSH = 0x48; // 'H'
const TERMINATE = 0x58; // 'X'
const COPY_DONE = 0x63; // 'c'
const COPY_FAIL = 0x66; // 'f'
const READY_FOR_QUERY = 0x5a; // 'Z'
/** Backend messages that may arrive at any time: NoticeResponse, NotificationResponse, ParameterStatus. */
const ASYNCHRONOUS = new Set([0x4e, 0x41, 0x53]);

function protocolMessage(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');

/**
 * Ends whatever a vanished owner left open: an Execute of a portal that cannot exist fails, which
 * aborts an unfinished extended-query exchange (its implicit transaction is rolled back, never
 * committed by the Sync), then Sync, then ROLLBACK for an explicit transaction.
 */
const ABANDON = Buffer.concat([
  protocolMessage('E', Buffer.concat([cstring('\u0001pglite-abandoned'), Buffer.alloc(4)])),
  protocolMessage('S', Buffer.alloc(0)),
  protocolMessage('Q', cstring('ROLLBACK')),
]);

/** A backend ErrorResponse (severity FATAL) for answers the socket layer gives itself. */
function fatal(code: string, message: string): Buffer {
  return protocolMessage('E', Buffer.concat([cstring('SFATAL'), cstring('VFATAL'), cstring(`C${code}`), cstring(`M${message}`), Buffer.alloc(1)]));
}

/**
 * The transaction status of the ReadyForQuery that ends a backend answer ('I', 'T' or 'E'), or
 * undefined when the answer does not end ready for a new command (an exchange still open: a
 * Flush without Sync, COPY). Asynchronous messages after it (notices, notifications, parameter
 * status) do not count.
 */
export function lastReadyStatus(answer: Uint8Array): string | undefined {
  const view = Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  let status: string | undefined;
  for (let at = 0; at + 5 <= view.length; ) {
    const type = view[at]!;
    const length = view.readInt32BE(at + 1);
    if (length < 4) break;
    if (type === READY_FOR_QUERY && at + 5 < view.length) status = String.fromCharCode(view[at + 5]!);
    else if (!ASYNCHRONOUS.has(type)) status = undefined;
    at += 1 + length;
  }
  return status;
}

/** idle_in_transaction_session_timeout from a startup packet's `options` (`-c name=value`), in ms. */
function idleLimitFromStartup(packet: Buffer): number | undefined {
  const fields = packet.subarray(8).toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== 'options') continue;
    const match = /(?:-c\s*|--)idle_in_transaction_session_timeout=(\d+)\s*(ms|s|min)?\b/.exec(fields[i + 1]!);
    if (!match) return undefined;
    const unit = match[2] === 's' ? 1_000 : match[2] === 'min' ? 60_000 : 1;
    return Number(match[1]) * unit;
  }
  return undefined;
}

class Connection {
  /** Bytes received but not yet a whole message. */
  buffered: Buffer = Buffer.alloc(0);
  started = false;
  /** Whole messages not yet run, in order. */
  pending: Buffer[] = [];
  /** The frontend said Terminate: close once what came before has run. */
  ending = false;
  closed = false;
  idleLimitMs: number;
  idleTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: Socket,
    defaultIdleLimitMs: number,
  ) {
    this.idleLimitMs = defaultIdleLimitMs;
  }

  /** How many pending messages form whole exchanges (up to the last Sync, Query, Flush or end of COPY data). */
  runnable(): number {
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const type = this.pending[i]![0];
      if (type === SYNC || type === QUERY || type === FLUSH || type === COPY_DONE || type === COPY_FAIL) return i + 1;
    }
    return 0;
  }
}

export class BackendSocketServer {
  readonly #options: BackendSocketServerOptions;
  readonly #connections = new Set<Connection>();
  /** Every socket accepted, refused ones included, so stop() can close them all. */
  readonly #sockets = new Set<Socket>();
  /** Connections waiting for the backend, in arrival order. */
  #queue: Connection[] = [];
  #owner: Connection | null = null;
  #busy = false;
  #server: Server | undefined;
  #port = 0;
  /** The backend's answer to a startup packet (AuthenticationOk … ReadyForQuery), given to every new connection. */
  #startupAnswer: Uint8Array = new Uint8Array(0);

  constructor(options: BackendSocketServerOptions) {
    this.#options = options;
  }

  get port(): number {
    return this.#port;
  }

  stats(): BackendSocketStats {
    return { connections: this.#connections.size, waiting: this.#queue.length, owned: this.#owner !== null };
  }

  async start(): Promise<number> {
    const params = Buffer.concat([cstring('user'), cstring('postgres'), cstring('database'), cstring('postgres'), Buffer.alloc(1)]);
    const head = Buffer.alloc(8);
    head.writeInt32BE(8 + params.length, 0);
    head.writeInt32BE(PROTOCOL_3, 4);
    // A copy: PGlite answers a startup packet with a view into a buffer that later answers reuse.
    this.#startupAnswer = Buffer.from(await this.#options.backend.exec(Buffer.concat([head, params])));
    if (lastReadyStatus(this.#startupAnswer) !== 'I') throw new Error('The embedded database answered its startup packet without ReadyForQuery');
    const server = createServer((socket) => this.#accept(socket));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#options.port ?? 0, this.#options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    this.#port = typeof address === 'object' && address ? address.port : 0;
    return this.#port;
  }

  /** Stops accepting, closes every connection (rolling back an open transaction) and waits for the backend to be free. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
    while (this.#busy || this.#owner) await new Promise((r) => setTimeout(r, 5));
  }

  #accept(socket: Socket): void {
    socket.setNoDelay(true);
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    if (!this.#server || this.#connections.size >= this.#options.maxConnections) {
      socket.on('error', () => socket.destroy());
      socket.end(fatal('53300', 'sorry, too many clients already'), () => socket.destroy());
      return;
    }
    const conn = new Connection(socket, this.#options.idleInTransactionTimeoutMs ?? 0);
    this.#connections.add(conn);
    socket.on('data', (chunk: Buffer) => this.#receive(conn, chunk));
    socket.on('error', () => socket.destroy());
    // A client's end of the stream without Terminate (a deadline destroyed its socket) means it went
    // away: noticed at 'end', in the same turn of the event loop as the read, not at 'close', which
    // comes after the setImmediate that picks the next statement to run (its queued statement would run).
    socket.on('end', () => {
      if (!conn.ending) this.#gone(conn);
    });
    socket.on('close', () => this.#gone(conn));
  }

  #receive(conn: Connection, chunk: Buffer): void {
    if (conn.closed || conn.ending) return;
    const buf = conn.buffered.length ? Buffer.concat([conn.buffered, chunk]) : chunk;
    let at = 0;
    while (!conn.ending) {
      if (!conn.started) {
        if (buf.length - at < 8) break;
        const length = buf.readInt32BE(at);
        const code = buf.readInt32BE(at + 4);
        if (length < 8 || length > MAX_STARTUP_LENGTH) return this.#refuse(conn, '08P01', 'invalid startup packet length');
        if (buf.length - at < length) break;
        const packet = buf.subarray(at, at + length);
        at += length;
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          conn.socket.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST) {
          // PGlite runs statements to their end; the client's own deadline has answered already.
          conn.socket.end();
          return;
        }
        if (code !== PROTOCOL_3) return this.#refuse(conn, '0A000', 'unsupported frontend protocol');
        conn.started = true;
        conn.idleLimitMs = idleLimitFromStartup(packet) ?? conn.idleLimitMs;
        conn.socket.write(this.#startupAnswer);
        continue;
      }
      if (buf.length - at < 5) break;
      const length = buf.readInt32BE(at + 1);
      if (length < 4) return this.#refuse(conn, '08P01', 'invalid message length');
      if (buf.length - at < 1 + length) break;
      const message = buf.subarray(at, at + 1 + length);
      at += 1 + length;
      if (message[0] === TERMINATE) conn.ending = true;
      else conn.pending.push(message);
    }
    conn.buffered = at < buf.length ? buf.subarray(at) : Buffer.alloc(0);
    if (conn.ending && conn.runnable() === 0) {
      conn.socket.end(); // its close rolls back whatever it still owned
      return;
    }
    if (conn.runnable() > 0) {
      if (conn !== this.#owner && !this.#queue.includes(conn)) this.#queue.push(conn);
      this.#pump();
    }
  }

  #refuse(conn: Connection, code: string, message: string): void {
    const socket = conn.socket;
    socket.end(fatal(code, message), () => socket.destroy());
    conn.pending = [];
    conn.ending = true;
  }

  /** Picks who runs next: the owner while it owns the backend, else the first waiting connection. */
  #pump(): void {
    if (this.#busy) return;
    let conn: Connection | undefined;
    if (this.#owner) {
      conn = this.#owner;
      if (conn.runnable() === 0) {
        this.#armIdleLimit(conn);
        return;
      }
    } else {
      while ((conn = this.#queue.shift()) && (conn.closed || conn.runnable() === 0)) {
        // skip connections that went away or have nothing whole to run
      }
      if (!conn) return;
    }
    clearTimeout(conn.idleTimer);
    conn.idleTimer = undefined;
    this.#busy = true;
    void this.#run(conn).finally(() => {
      this.#busy = false;
      // Let sockets be read (and closed ones be noticed) between batches.
      setImmediate(() => this.#pump());
    });
  }

  async #run(conn: Connection): Promise<void> {
    const messages = conn.pending.splice(0, conn.runnable());
    let answer: Uint8Array;
    try {
      answer = await this.#options.backend.exec(messages.length === 1 ? messages[0]! : Buffer.concat(messages));
    } catch (err) {
      // The backend refused the batch outright (not an SQL error, which is an answer): this connection is done.
      this.#owner = conn;
      conn.socket.destroy(err instanceof Error ? err : undefined);
      await this.#abandon(conn);
      return;
    }
    if (!conn.closed && answer.length) conn.socket.write(answer);
    // Idle at a sync point lets go; a transaction ('T', 'E') or an open exchange keeps the backend.
    this.#owner = lastReadyStatus(answer) === 'I' ? null : conn;
    if (this.#owner === conn) this.#queue = this.#queue.filter((c) => c !== conn);
    // A pipelining client's next exchange, received while this one ran, waits its turn behind the others.
    else if (conn.runnable() > 0 && !this.#queue.includes(conn)) this.#queue.push(conn);
    if (conn.closed) await this.#abandon(conn);
    else if (conn.ending && conn.runnable() === 0) conn.socket.end();
  }

  /** Rolls back what an owner that went away left open, so the next connection finds the backend idle. */
  async #abandon(conn: Connection): Promise<void> {
    if (this.#owner !== conn) return;
    try {
      await this.#options.backend.exec(ABANDON);
    } catch {
      // nothing more can be done for a backend that refuses even this
    }
    this.#owner = null;
  }

  #gone(conn: Connection): void {
    if (conn.closed) return;
    conn.closed = true;
    conn.pending = [];
    clearTimeout(conn.idleTimer);
    this.#connections.delete(conn);
    this.#queue = this.#queue.filter((c) => c !== conn);
    if (this.#owner === conn && !this.#busy) {
      this.#busy = true;
      void this.#abandon(conn).finally(() => {
        this.#busy = false;
        this.#pump();
      });
    }
    // When its batch is running, #run sees `closed` and rolls back afterwards.
  }

  #armIdleLimit(conn: Connection): void {
    if (conn.idleLimitMs <= 0 || conn.idleTimer) return;
    conn.idleTimer = setTimeout(() => {
      conn.idleTimer = undefined;
      if (this.#owner !== conn || conn.closed || conn.runnable() > 0) return;
      const socket = conn.socket;
      socket.end(fatal('25P03', 'terminating connection due to idle-in-transaction timeout'), () => socket.destroy());
      this.#gone(conn);
    }, conn.idleLimitMs);
    conn.idleTimer.unref();
  }
}
